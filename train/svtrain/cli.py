"""svtrain's command line: ``matrix`` runs the whole E1 experiment (data,
server, warm start, reward model, every arm, svbench report/study, results);
``results`` rebuilds RESULTS.md from a finished output directory."""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
try:
    from svbench import Client
except ImportError:
    # Run from a checkout (train/run.py, make train-*) without the client
    # installed: the one beside it. An installed svtrain (train/pyproject.toml)
    # has it as a dependency.
    sys.path.insert(0, os.path.join(REPO, "clients", "python"))
    from svbench import Client

from svtrain import e2train, gpu, loop, procs, results  # noqa: E402
from svtrain.arms import ARMS, DEFAULT_ARMS, from_format  # noqa: E402
from svtrain.model import ENCODERS  # noqa: E402
from svtrain.policy import SIZES, HFPolicy, TinyPolicy, last_user_text  # noqa: E402
from svtrain.procs import configure_torch, exit_on_signals  # noqa: E402
from svtrain.rewards import Executable, LearnedRM, train_rm  # noqa: E402
from svtrain.tokenizer import PROMPT_MODES, Tokenizer  # noqa: E402

# The exit status of a matrix stopped by --stop-after-steps (EX_TEMPFAIL):
# not finished, not failed; the same command continues it.
EXIT_STOPPED = 75


def shuffled_labels(rows: list[dict], seed: int) -> list[dict]:
    """The warm-start rows with each answer's label taken from another row
    (a seeded permutation): the answer format and the label frequencies of
    the teacher, none of its reading of the input."""
    answers = []
    for r in rows:
        try:
            obj = json.loads(r["messages"][-1]["content"])
            answers.append(obj if isinstance(obj, dict) and "label" in obj else None)
        except (ValueError, KeyError, TypeError):
            answers.append(None)
    perm = list(range(len(rows)))
    random.Random(seed * 7919 + 17).shuffle(perm)
    out = []
    for r, obj, j in zip(rows, answers, perm):
        msgs = [dict(m) for m in r["messages"]]
        if obj is not None and answers[j] is not None:
            msgs[-1]["content"] = json.dumps({**obj, "label": answers[j]["label"]})
        out.append({**r, "messages": msgs})
    return out


def arm_list(s: str) -> list[str]:
    arms = [x for x in s.split(",") if x]
    bad = [x for x in arms if x not in ARMS]
    if bad:
        raise argparse.ArgumentTypeError("unknown arm(s) %s: choose from %s" % (", ".join(bad), ", ".join(ARMS)))
    return arms


def _whole_at_least_one(what: str, note: str = ""):
    """An argparse type: a whole number of at least 1, else an error naming
    what the number is."""
    def parse(s: str) -> int:
        try:
            n = int(s)
        except ValueError:
            n = 0
        if n < 1:
            raise argparse.ArgumentTypeError("%r is not %s: give a whole number of at least 1%s" % (s, what, note))
        return n
    return parse


def kl_coefficient(s: str) -> float:
    """An argparse type: a finite β ≥ 0 (a negative one would reward moving
    away from the warm start)."""
    try:
        b = float(s)
    except ValueError:
        b = float("nan")
    if not (0 <= b < float("inf")):
        raise argparse.ArgumentTypeError("%r is not a KL coefficient: give a number of at least 0 (0: no KL penalty)" % s)
    return b


oversample_factor = _whole_at_least_one("an oversampling factor", " (1: every drawn group is trained on)")
block_count = _whole_at_least_one("a number of transformer blocks")


def log(msg: str) -> None:
    print(msg, flush=True)


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    log("+ " + " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise SystemExit("svtrain: %s failed (exit %d):\n%s\n%s" % (cmd[0], p.returncode, p.stdout[-3000:], p.stderr[-3000:]))
    return p


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """`svbench serve` as a child process (or an existing server's URL)."""

    def __init__(self, svbench: str | None, url: str | None, dataset: str | None, out: str, envs: str = "e1"):
        self.proc = None
        if url:
            self.url = url.rstrip("/")
            return
        port = free_port()
        self.url = "http://127.0.0.1:%d" % port
        cmd = [svbench, "serve", "--addr", "127.0.0.1:%d" % port, "--envs", envs, "--log-level", "warn"]
        if dataset:
            cmd += ["--dataset", envs + "=" + dataset]
        log("+ " + " ".join(cmd))
        self.log = open(os.path.join(out, "serve.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("svtrain: svbench serve exited (%d); see %s" % (self.proc.returncode, self.log.name))
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2) as r:
                    if json.loads(r.read()).get("status") == "ready":
                        return
            except OSError:
                pass
            time.sleep(0.3)
        self.close()
        raise SystemExit("svtrain: svbench serve did not become ready")

    def close(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def find_run(root: str) -> str:
    hits = sorted(glob.glob(os.path.join(root, "evals", "*", "*", "results.jsonl")))
    if not hits:
        raise SystemExit("svtrain: no eval run under %s" % root)
    return os.path.dirname(hits[-1])


def near_form(text: str) -> str:
    """dataset/integrity.Normalise: lower case, every run of digits one "0",
    whitespace runs one space. The embedded splits drop a generated row whose
    prompt has the same form as a held-out one, and so does the pool."""
    return " ".join(re.sub(r"\d+", "0", text.lower()).split())


def generated_pool(a, out: str) -> str:
    """--train-generate N: a data directory whose train split is the train
    part of N rows drawn fresh by `svbench data build e1` (its own seed), less
    every row whose prompt is a held-out prompt up to numbers, case and
    spacing, and whose dev and test splits are the embedded ones, read from a
    child server. The embedded train split has 2,000 rows: a from-scratch
    model memorises them, and learns E1's rule only from tens of thousands
    (issue #42; train/README)."""
    d = os.path.join(out, "pool")
    if os.path.exists(os.path.join(d, "train.jsonl")):
        return d
    gen = os.path.join(out, "pool-generated")
    if not os.path.exists(os.path.join(gen, "train.jsonl")):
        run([a.svbench, "data", "build", "e1", "--n", str(a.train_generate), "--seed", str(a.train_generate_seed), "--out", gen])
    os.makedirs(d, exist_ok=True)
    held: set[str] = set()
    server = Server(a.svbench, None, None, out)
    try:
        client = Client(server.url, timeout=120)
        for split in ("dev", "test"):
            rows, _ = loop.fetch_examples(client, "e1", split)
            with open(os.path.join(d, split + ".jsonl"), "w") as f:
                for e in rows:
                    q = last_user_text(e["prompt"])
                    held.add(near_form(q))
                    # the server reads a row's split from meta.split; the
                    # embedded test rows carry none
                    meta = {**(e.get("meta") or {}), "split": split}
                    f.write(json.dumps({"id": e["example_id"], "question": q, "answer": e["answer"], "meta": meta}) + "\n")
    finally:
        server.close()
    kept = dropped = 0
    tmp = os.path.join(d, "train.jsonl.tmp")
    with open(os.path.join(gen, "train.jsonl")) as g, open(tmp, "w") as f:
        for line in g:
            if not line.strip():
                continue
            if near_form(json.loads(line)["question"]) in held:
                dropped += 1
                continue
            f.write(line if line.endswith("\n") else line + "\n")
            kept += 1
    os.replace(tmp, os.path.join(d, "train.jsonl"))
    log("svtrain: generated pool: %d train rows kept, %d dropped as near copies of a dev or test prompt" % (kept, dropped))
    return d


def prepare_data(a, out: str, timing: dict) -> str | None:
    """Your own train/dev/test files (--data-dir, or the pool --train-generate
    draws), combined into one file the child server serves with each row's
    split; None: the environment's embedded splits, which `svbench serve`
    loads without being told."""
    t = time.time()
    d = generated_pool(a, out) if a.train_generate else a.data_dir
    if not d:
        return None
    combined = os.path.join(d, "e1-splits.jsonl")
    if not os.path.exists(combined):
        with open(combined, "w") as f:
            for s in ("train", "dev", "test"):
                p = os.path.join(d, s + ".jsonl")
                if os.path.exists(p):
                    with open(p) as g:
                        shutil.copyfileobj(g, f)
    timing["data"] = time.time() - t
    return d


def baseline_sft(a, out: str, data_dir: str | None, timing: dict) -> tuple[str, str | None]:
    """Answers of a built-in baseline on the train split, exported by
    `svbench sft export` (prompts of the test split dropped); and the same
    baseline's run on the test split, for comparison. The splits are the
    embedded ones unless --data-dir names files."""
    t = time.time()
    if a.sft_data:
        return a.sft_data, None

    def split_args(split: str) -> list[str]:
        if data_dir:
            return ["--dataset", os.path.join(data_dir, split + ".jsonl")]
        return ["--split", split]

    sft_path = os.path.join(out, "sft.jsonl")
    base = os.path.join(out, "baseline-train")
    if not os.path.exists(sft_path):
        train_args = split_args(a.train_split or "train")
        if a.sft_generate:
            # The teacher's answers on rows the generator draws fresh (its
            # train split, another seed than the embedded splits'): imitation
            # of 2,000 rows memorises them (issue #42).
            gen = os.path.join(out, "generated")
            if not os.path.exists(os.path.join(gen, "train.jsonl")):
                run([a.svbench, "data", "build", "e1", "--n", str(a.sft_generate), "--seed", str(a.sft_generate_seed), "--out", gen])
            train_args = ["--dataset", os.path.join(gen, "train.jsonl")]
        run([a.svbench, "eval", "e1", "-m", a.baseline, *train_args, "--out", base])
        held_out = ["--eval-set", os.path.join(data_dir, "test.jsonl")] if data_dir else []
        run([a.svbench, "sft", "export", find_run(base), "--env", "e1", *held_out, "--drop-overlap", "--out", sft_path])
    test_base = os.path.join(out, "baseline-test")
    if not glob.glob(os.path.join(test_base, "evals", "*", "*", "results.jsonl")):
        run([a.svbench, "eval", "e1", "-m", a.baseline, *split_args(a.test_split or "test"), "--out", test_base])
    timing["baseline_and_sft_export"] = time.time() - t
    return sft_path, find_run(test_base)


def constant_answers(executable: Executable, test: list[dict], path: str) -> dict:
    """Every constant answer (each label at confidences 0, 0.1, …, 1) scored
    on the test split: a policy that learned nothing about the input can
    still reach the best of them, so a trained arm must beat it (issue #42).
    The best one's per-row rewards are kept, in the test split's order, for
    paired intervals."""
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    golds = [loop.gold(e) for e in test]
    grid = []
    best = None
    for label in ("Malicious", "Benign", "Abstain"):
        for i in range(11):
            text = json.dumps({"label": label, "confidence": i / 10})
            rows = [float(s["reward"]) for s in executable.score([text] * len(test), golds, [e.get("example_id") for e in test])]
            grid.append({"answer": text, "reward": sum(rows) / len(rows)})
            if best is None or grid[-1]["reward"] > best["reward"]:
                best = {"answer": text, "reward": grid[-1]["reward"], "rows": rows,
                        "example_ids": [e.get("example_id") for e in test]}
    d = {"best": best, "grid": grid}
    with open(path, "w") as f:
        json.dump(d, f, indent=1)
    return d


def make_policy(a, tok: Tokenizer | None, seed: int):
    if a.hf_model:
        torch.manual_seed(seed)  # LoRA's initialisation
        return HFPolicy(a.hf_model, lora_r=a.lora_r, device=a.device)
    layers = {"n_layers": a.layers} if a.layers else {}
    return TinyPolicy.new(tok, a.size, seed, device=a.device, pool=a.pool, encoder=a.encoder, condition=a.condition, **layers)


def policy_samples(policy, examples: list[dict], max_new: int, seed: int, per_prompt: int = 4,
                   temperature: float = 1.5) -> list[tuple]:
    """What the warm-start policy writes to the reward model's prompts,
    sampled hotter than training does so its malformed tails are there too:
    (prompt text, completion, gold, example id) rows for the RM's labelled
    set. A judge trained on texts no policy writes is not the judge a policy
    meets."""
    gen = torch.Generator().manual_seed(seed)
    out = []
    policy.eval()
    for i in range(0, len(examples), 64):
        chunk = examples[i: i + 64]
        toks, _ = policy.sample([policy.prompt_ids(e["prompt"]) for e in chunk], per_prompt, max_new,
                                temperature=temperature, generator=gen)
        for k, t in enumerate(toks):
            e = chunk[k // per_prompt]
            out.append((last_user_text(e["prompt"]), policy.decode(t), e.get("answer"), e.get("example_id")))
    return out


def load_policy(a, path: str):
    if a.hf_model:
        return HFPolicy.load(a.hf_model, path, device=a.device)
    return TinyPolicy.load(path, device=a.device)


def device_name(a) -> str:
    """Where the policy ran, for RESULTS.md: a Hugging Face model on the GPU
    when there is one, the tiny model on the CPU unless --device says."""
    dev = (a.device or ("cuda" if torch.cuda.is_available() else "cpu")) if a.hf_model else (a.device or "cpu")
    if dev.startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(dev))
    return "CPU"


def hf_scratch(a, out: str, train: list[dict], sft_rows: list[dict]) -> str:
    """--hf-model scratch[:SIZE]: a from-scratch Hugging Face model (svtrain.hfinit)
    fitted to the served train split, for a machine with no weights."""
    from svtrain import hfinit

    size = a.hf_model.partition(":")[2] or "small"
    if size not in hfinit.SIZES:
        raise SystemExit("svtrain: --hf-model %s: size %r is not one of %s" % (a.hf_model, size, ", ".join(sorted(hfinit.SIZES))))
    path = os.path.join(out, "hf-scratch-" + size)
    if not os.path.exists(os.path.join(path, "config.json")):
        texts = [m.get("content") or "" for e in train for m in e["prompt"] if isinstance(m.get("content"), str)]
        texts += [r["messages"][-1].get("content") or "" for r in sft_rows]
        log("svtrain: " + hfinit.build(path, texts, vocab=a.hf_vocab, size=size, seed=0))
    return path


def cmd_matrix(a) -> None:
    t_all = time.time()
    configure_torch(a.threads, a.device)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    timing: dict = {}
    if not a.server and not (a.svbench and os.path.exists(a.svbench)):
        raise SystemExit("svtrain: --svbench %r not found (make build writes bin/svbench), or pass --server URL" % a.svbench)
    if a.train_generate and (a.data_dir or a.server):
        raise SystemExit("svtrain: --train-generate builds its own data directory and server; drop --data-dir and --server")
    data_dir = prepare_data(a, out, timing)
    sft_path, baseline_test = (a.sft_data, None) if a.sft_data else baseline_sft(a, out, data_dir, timing)
    server = Server(a.svbench, a.server, os.path.join(data_dir, "e1-splits.jsonl") if (data_dir and not a.server) else None, out)
    try:
        client = Client(server.url, timeout=120)
        env_info = next(e for e in client.environments() if e["id"] == "network-logs" or "e1" in (e.get("aliases") or []))
        executable = Executable(client, "e1", a.rubric)
        train, dataset = loop.fetch_examples(client, "e1", a.train_split or None, a.train_limit)
        test, _ = loop.fetch_examples(client, "e1", a.test_split or None, a.test_limit)
        log("svtrain: server %s: %d train and %d test examples (%s @ %s); rubric %s %s" % (
            server.url, len(train), len(test), dataset.get("id"), dataset.get("revision"), executable.rubric_name, executable.weights))
        with open(sft_path) as f:
            sft_rows = [json.loads(l) for l in f if l.strip()]
        if a.hf_model and a.hf_model.startswith("scratch"):
            a.hf_model = hf_scratch(a, out, train, sft_rows)
            if a.lora_r is None:
                a.lora_r = 0  # adapters over random weights learn nothing a full update would not
        if a.lora_r is None:
            a.lora_r = 16
        tok = None
        if not a.hf_model:
            ptexts = [last_user_text(e["prompt"]) for e in train]
            # The warm start's prompts count too: with --sft-generate they are
            # most of what the model reads before its first GRPO step.
            stexts = [last_user_text(r["messages"][:-1]) for r in sft_rows] if a.sft_generate else []
            tok = Tokenizer.fit(ptexts + stexts + [r["messages"][-1]["content"] for r in sft_rows], prompts=ptexts, prompt_mode=a.prompt_mode)
            tok.save(os.path.join(out, "tokenizer.json"))
        constant_answers(executable, test, os.path.join(out, "constant_answers.json"))
        info = {"server": server.url, "dataset": dataset, "train_examples": len(train), "test_examples": len(test),
                "sft_rows": len(sft_rows), "baseline": a.baseline, "args": vars(a), "arms": a.arms, "seeds": a.seeds,
                "threads": a.threads, "torch": torch.__version__, "device_name": device_name(a), "argv": a.argv}
        if baseline_test:
            bt = results.score_baseline(baseline_test, executable)
            with open(os.path.join(out, "baseline_test_eval.jsonl"), "w") as f:
                for r in bt:
                    f.write(json.dumps(r) + "\n")
        shared = SeedContext(out=out, server_url=server.url, tok=tok, sft_rows=sft_rows, train=train, test=test,
                             dataset=dataset, env_info=env_info)
        for seed, got in run_seeds(a, shared):
            timing.update(got["timing"])
            if got.get("model"):
                info["model"] = got["model"]
            info["score_calls_seeds"] = info.get("score_calls_seeds", 0) + got["score_calls"]
            if got.get("stopped"):
                log("svtrain: stopped with a checkpoint in %s; the same command resumes (exit %d)" % (got["stopped"], EXIT_STOPPED))
                return EXIT_STOPPED
        info["score_calls"] = executable.calls + info.pop("score_calls_seeds", 0)
    finally:
        server.close()
    if a.svbench and os.path.exists(a.svbench) and not a.no_report:
        t = time.time()
        svbench_reports(a, out)
        timing["svbench_report_study"] = time.time() - t
    timing["total"] = time.time() - t_all
    # A resumed run's steps took time in earlier invocations too: the wall
    # time is summed over every invocation that wrote this directory.
    info["invocations"] = 1
    prev_path = os.path.join(out, "matrix.json")
    if os.path.exists(prev_path):
        try:
            with open(prev_path) as f:
                prev = json.load(f)
            for k, v in (prev.get("timing") or {}).items():
                if isinstance(v, (int, float)):
                    timing[k] = timing.get(k, 0.0) + v
            info["invocations"] = int(prev.get("invocations", 1)) + 1
        except (OSError, ValueError, TypeError):
            log("svtrain: %s is unreadable; the wall time counts this invocation only" % prev_path)
    info["timing"] = timing
    with open(os.path.join(out, "matrix.json"), "w") as f:
        json.dump(info, f, indent=2, default=str)
    # A run on the dev split is one of the configurations tried and joins
    # the log; any other run only lists the log in its RESULTS.
    if a.dev_log and a.test_split == "dev":
        results.append_dev_log(out, a.dev_log)
    if a.results:
        results.write(out, a.results, dev_log=a.dev_log)
    log("svtrain: done in %.0fs; %s" % (timing["total"], out))


@dataclass
class SeedContext:
    """What every seed of a matrix shares, made once by the parent: the
    server it scores against, the tokenizer, the warm start's rows and the
    splits. A worker process (--jobs) receives it pickled."""
    out: str
    server_url: str
    tok: Tokenizer | None
    sft_rows: list[dict]
    train: list[dict]
    test: list[dict]
    dataset: dict
    env_info: dict


def run_seeds(a, shared: SeedContext):
    """Each seed's warm starts, reward model and arms: in this process one
    seed after another, or with --jobs N in N worker processes at once (a
    machine with cores or a GPU to spare: the seeds share nothing but the
    server, and each seeds every random stream it draws, so a seed's numbers
    do not depend on which process ran it). Yields (seed, result) in the
    order of --seeds."""
    if a.jobs <= 1 or len(a.seeds) <= 1:
        for seed in a.seeds:
            got = matrix_seed(a, seed, shared)
            yield seed, got
            if got.get("stopped"):
                return
        return
    log("svtrain: %d seeds in %d worker processes" % (len(a.seeds), min(a.jobs, len(a.seeds))))
    yield from zip(a.seeds, procs.in_workers(matrix_seed, [(a, seed, shared) for seed in a.seeds], a.jobs, a.threads, a.device))


def matrix_seed(a, seed: int, shared: SeedContext) -> dict:
    """One seed of the matrix: its warm start(s), its reward model when an
    arm needs one, then every arm not already finished. Returns the seed's
    timings, the policy's description, the scoring calls it made and, when
    --stop-after-steps stopped an arm, that arm's run directory."""
    out, tok, sft_rows, train, test = shared.out, shared.tok, shared.sft_rows, shared.train, shared.test
    dataset, env_info = shared.dataset, shared.env_info
    executable = Executable(Client(shared.server_url, timeout=120), "e1", a.rubric)
    timing: dict = {}
    info: dict = {}
    result = {"timing": timing, "score_calls": 0}
    sd = os.path.join(out, "seed%d" % seed)
    os.makedirs(sd, exist_ok=True)
    def warm_start(name: str, rows: list[dict], what: str) -> str:
        """The seed's warm start on rows, trained once: its checkpoint
        (sd/NAME.pt, or a directory for a Hugging Face model) and
        NAME_history.json; timed as NAME_seedS."""
        path = os.path.join(sd, name + ("" if a.hf_model else ".pt"))
        t = time.time()
        # A checkpoint already there (a resumed run, or one copied from
        # an earlier run of the same command: the warm start is
        # deterministic on CPU) is named as reused in the wall time, so
        # the total does not pass for what training it costs.
        key = "%s_seed%d" % (name, seed) + (" (checkpoint reused)" if os.path.exists(path) else "")
        if not os.path.exists(path):
            policy = make_policy(a, tok, seed)
            pairs = loop.sft_pairs(policy, rows, a.keep_rationale)
            info["model"] = policy.describe()
            log("svtrain: seed %d: %s of %s on %d answers, %d steps" % (seed, what, policy.describe(), len(pairs), a.sft_steps))
            hist = loop.sft(policy, pairs, a.sft_steps, a.sft_batch, a.sft_lr, seed, log)
            policy.save(path)
            with open(os.path.join(sd, name + "_history.json"), "w") as f:
                json.dump(hist, f)
        timing[key] = time.time() - t
        return path

    # The format arm starts from its own warm start; a run of it
    # alone does not train the teacher's.
    ck = warm_start("sft", sft_rows, "warm start") if any(not from_format(x) for x in a.arms) else None
    ck_format = warm_start("sft_format", shuffled_labels(sft_rows, seed), "format-only warm start (labels shuffled)") if any(map(from_format, a.arms)) else None
    rm = None
    if any(ARMS[x][0] == "learned_rm" for x in a.arms):
        t = time.time()
        rmp = os.path.join(sd, "rm.pt")
        if os.path.exists(rmp):
            rm = LearnedRM.load(rmp)
        else:
            rng = random.Random(seed)
            subset = rng.sample(train, min(len(train), a.rm_prompts))
            # the baseline's own answers join the labelled set
            golds = {e.get("example_id"): e.get("answer") for e in train}
            extra = [(last_user_text(r["messages"][:-1]), r["messages"][-1]["content"], golds[r["provenance"]["example_id"]],
                      r["provenance"]["example_id"])
                     for r in sft_rows if (r.get("provenance") or {}).get("example_id") in golds]
            # What the policies it will judge write: samples of every
            # warm start this run trains from.
            for start in (ck, ck_format):
                if start:
                    extra += policy_samples(load_policy(a, start), subset, a.max_new, seed)
            rm, fit = train_rm(subset, executable, seed, extra, log=log)
            rm.save(rmp, fit)
            with open(os.path.join(sd, "rm_fit.json"), "w") as f:
                json.dump(fit, f, indent=2)
        timing["rm_seed%d" % seed] = time.time() - t
    for arm in a.arms:
        rd = os.path.join(out, "runs", "%s-s%d" % (arm, seed))
        if os.path.exists(os.path.join(rd, "svtrain_summary.json")):
            log("svtrain: %s exists; skipped" % rd)
            continue
        t = time.time()
        start = ck_format if from_format(arm) else ck
        policy = load_policy(a, start)
        reward, adv = ARMS[arm]
        cfg = loop.GRPOConfig(arm=arm, reward=reward, adv=adv, steps=a.steps, prompts=a.prompts, group=a.group,
                              max_new=a.max_new, temperature=a.temperature, lr=a.lr, clip=a.clip,
                              ppo_epochs=a.ppo_epochs, micro_prompts=a.micro_prompts, oversample=a.oversample, scale=a.scale_rewards, kl=a.kl, seed=seed, env="e1",
                              checkpoint_every=a.checkpoint_every)
        if ARMS[arm][0] == "teacher":
            done = loop.distill(policy, cfg, loop.sft_pairs(policy, sft_rows, a.keep_rationale), a.sft_batch, a.sft_lr,
                                test, executable, rd, dataset, env_info=env_info, log=log)
        else:
            ref = load_policy(a, start) if a.kl > 0 else None
            done = loop.grpo(policy, cfg, train, test, executable, rd, dataset, rm=rm, env_info=env_info, log=log,
                             stop_after=a.stop_after_steps, ref=ref)
        timing["arm_%s_seed%d" % (arm, seed)] = time.time() - t
        if done is None:
            result["stopped"] = rd
            break
    result["score_calls"] = executable.calls
    result["model"] = info.get("model")
    return result


def svbench_reports(a, out: str) -> None:
    runs = os.path.join(out, "runs")
    for rd in sorted(glob.glob(os.path.join(runs, "*"))):
        name = os.path.basename(rd)
        run([a.svbench, "report", rd, "--rubric", a.rubric or "default", "--out", os.path.join(out, "reports", name)])
    # The executable arms' rollouts through `svbench advantages`: how often a
    # group carries no signal under each estimator, and which trainer's
    # convention reproduces svtrain's recorded advantages.
    for rd in sorted(glob.glob(os.path.join(runs, "*-s*"))):
        if ARMS.get(os.path.basename(rd).rpartition("-s")[0], ("",))[0] != "executable":
            continue
        with open(os.path.join(rd, "svtrain_summary.json")) as f:
            weights = json.load(f)["weights"]
        run([a.svbench, "advantages", os.path.join(rd, "rollouts"), "--weights", ",".join("%s=%r" % kv for kv in weights.items()),
             "--out", os.path.join(out, "advantages", os.path.basename(rd))])
    # One study per seed and warm start: the RL arms from that start against
    # its random-reward control (distillation has no training rewards).
    for seed in a.seeds:
        for fmt, prefix in ((False, "study"), (True, "study-format")):
            arms = [os.path.join(runs, "%s-s%d" % (arm, seed)) for arm in a.arms
                    if from_format(arm) == fmt and ARMS[arm][0] in ("executable", "learned_rm")]
            arms = [d for d in arms if os.path.isdir(d)]
            ctl = os.path.join(runs, "%s-s%d" % ("format_random" if fmt else "random", seed))
            if len(arms) + os.path.isdir(ctl) < 2:
                continue
            sdir = os.path.join(out, "%s-s%d" % (prefix, seed))
            cmd = [a.svbench, "study", *arms, "--rubric", a.rubric or "default", "--out", sdir]
            if os.path.isdir(ctl):
                cmd += ["--control", ctl]
            p = run(cmd)
            with open(os.path.join(sdir, "stdout.txt"), "w") as f:
                f.write(p.stdout)


def main(argv=None) -> None:
    exit_on_signals()
    ap = argparse.ArgumentParser(prog="svtrain", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("matrix", help="run the E1 research matrix (or any subset of arms and seeds)")
    m.add_argument("--out", default=os.path.join(REPO, "train", "out", "demo"))
    m.add_argument("--svbench", default=os.path.join(REPO, "bin", "svbench"), help="the svbench binary (make build)")
    m.add_argument("--server", help="use this running svbench server instead of starting one")
    m.add_argument("--data-dir", help="your own train.jsonl/dev.jsonl/test.jsonl (default: E1's embedded splits)")
    m.add_argument("--train-generate", type=int, default=0, metavar="N",
                   help="train on the train part (70%%) of N rows drawn fresh by svbench data build e1, served with the embedded dev and test splits")
    m.add_argument("--train-generate-seed", type=int, default=1002, help="generator seed of --train-generate")
    m.add_argument("--train-split", default="train", help="split the server hands out for training")
    m.add_argument("--test-split", default="test", help="split evaluated at the first and last step")
    m.add_argument("--train-limit", type=int, default=0)
    m.add_argument("--test-limit", type=int, default=0)
    m.add_argument("--sft-data", help="chat JSONL from svbench sft export (default: export the baseline's answers)")
    m.add_argument("--baseline", default="builtin:features")
    m.add_argument("--keep-rationale", action="store_true", help="warm-start on the baseline's rationale too")
    m.add_argument("--sft-generate", type=int, default=0, metavar="N",
                   help="warm-start on the baseline's answers to N rows generated by svbench data build e1 (its train split, 70%%) instead of the served train split")
    m.add_argument("--sft-generate-seed", type=int, default=1001, help="generator seed of --sft-generate (not the embedded splits' seed)")
    m.add_argument("--prompt-mode", choices=PROMPT_MODES, default="text",
                   help="how the tiny model reads a prompt: text (every character) or fields (each key=value field as a token, digits of addresses and rare numbers dropped)")
    m.add_argument("--rubric", default=None, help="rubric (default: the environment's default)")
    m.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 3])
    m.add_argument("--arms", type=arm_list, default=list(DEFAULT_ARMS), help="arms to run, comma-separated, of " + ", ".join(ARMS))
    m.add_argument("--size", choices=sorted(SIZES), default="small")
    m.add_argument("--condition", action="store_true",
                   help="with --encoder bag: the prompt's bag reaches every answer token's logits through a head of its own (LMConfig.condition)")
    m.add_argument("--pool", action="store_true", help="the tiny model adds a pooled summary of the prompt's tokens at the answer marker (LMConfig.pool)")
    m.add_argument("--layers", type=block_count, default=0, help="transformer blocks of the tiny model (default: the size's)")
    m.add_argument("--encoder", choices=ENCODERS, default="attention",
                   help="how the tiny model reads the prompt: attention (its tokens are the transformer's sequence) or bag (summed in an embedding of their own through an MLP, given to the transformer at the answer marker; LMConfig.encoder)")
    m.add_argument("--sft-steps", type=int, default=150)
    m.add_argument("--sft-batch", type=int, default=16)
    m.add_argument("--sft-lr", type=float, default=2e-3)
    m.add_argument("--rm-prompts", type=int, default=1000, help="training prompts the reward model's labelled answers cover")
    m.add_argument("--steps", type=int, default=50)
    m.add_argument("--prompts", type=int, default=16)
    m.add_argument("--group", type=int, default=8)
    m.add_argument("--max-new", type=int, default=12)
    m.add_argument("--temperature", type=float, default=1.0)
    m.add_argument("--lr", type=float, default=5e-4)
    m.add_argument("--clip", type=float, default=0.2)
    m.add_argument("--ppo-epochs", type=int, default=1)
    m.add_argument("--kl", type=kl_coefficient, default=0.0, metavar="BETA",
                   help="KL penalty to the arm's warm start (k3 per token, token-mean); 0: none")
    m.add_argument("--scale-rewards", choices=loop.SCALES, default="group",
                   help="what GRPO divides a group's centred rewards by (TRL scale_rewards): the group's std, the step's, or nothing (Dr. GRPO)")
    m.add_argument("--micro-prompts", type=int, default=0)
    m.add_argument("--oversample", type=oversample_factor, default=1, metavar="K",
                   help="dynamic sampling (DAPO): draw K × --prompts prompts a step and train on the groups whose reward varies, up to --prompts (1: off)")
    m.add_argument("--checkpoint-every", type=int, default=10,
                   help="GRPO steps between resumable checkpoints (RUN/checkpoint.pt; 0: none); rerunning the same command resumes a killed arm")
    m.add_argument("--stop-after-steps", type=int, default=0,
                   help="stop after this many GRPO steps of the arm in progress, with a checkpoint (time-sliced jobs); rerun to continue")
    m.add_argument("--threads", type=int, default=1,
                   help="torch threads (1: on a shared 2-core machine OpenBLAS threads spin against other load; 2 wins only on idle cores)")
    m.add_argument("--hf-model", help="train this Hugging Face causal LM (hub id or directory) instead of the tiny model (needs transformers); "
                   "scratch[:test|small|medium]: a Llama-architecture model and BPE tokenizer built from nothing on the train split")
    m.add_argument("--hf-vocab", type=int, default=4096, help="BPE vocabulary of --hf-model scratch")
    m.add_argument("--lora-r", type=int, default=None, help="LoRA rank with --hf-model (default 16, 0 for scratch models; 0: every weight; LoRA needs peft)")
    m.add_argument("--device", default=None,
                   help="torch device of the policy (cuda, cuda:1, cpu); default: the tiny model on the CPU, a Hugging Face model on the GPU when there is one")
    m.add_argument("--jobs", type=_whole_at_least_one("a number of worker processes"), default=1,
                   help="run the seeds in this many worker processes at once (each with --threads torch threads); 1: one after another")
    m.add_argument("--no-report", action="store_true", help="skip svbench report and study")
    m.add_argument("--results", help="write RESULTS.md here")
    m.add_argument("--dev-log", help="with --test-split dev, append this run's configuration and its arms' scores to this JSONL "
                   "file (the record of every configuration tried); RESULTS.md lists the file's configurations either way")
    r = sub.add_parser("results", help="write RESULTS.md from a finished matrix output directory")
    r.add_argument("out")
    r.add_argument("--results", required=True)
    r.add_argument("--dev-log", help="the JSONL of configurations tried on dev (matrix --dev-log) to list")
    e2train.add_parsers(sub)
    gpu.add_parsers(sub)
    a = ap.parse_args(argv)
    if a.cmd in ("e2", "e2-results", "gpu-results"):
        a.func(a)
    elif a.cmd == "matrix":
        a.argv = list(argv if argv is not None else sys.argv[1:])
        if cmd_matrix(a) == EXIT_STOPPED:
            sys.exit(EXIT_STOPPED)
    else:
        results.write(os.path.abspath(a.out), a.results, dev_log=a.dev_log)
