"""svtrain e2: warm start on builtin:tool-autofix's episodes, then GRPO on
E2's Kubernetes rows, every rollout a `/v1/sessions` episode (issue #42
item 3). See e2.py for what the policy reads and writes.

    /usr/bin/python3 train/run.py e2 --out train/out/e2 --seeds 1
    /usr/bin/python3 train/run.py e2-results train/out/e2 --results train/RESULTS-e2.md
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import torch

from svbench.client import Client
from svtrain import e2, procs
from svtrain.loop import SCALES, advantages, fetch_examples, sft
from svtrain.model import LMConfig, TinyLM, completion_logprobs, sample
from svtrain.stats import paired_diff, t_interval

MAX_CTX = 384
TURN1_MAX = 6
ANSWER_MAX = 64


class E2Policy:
    def __init__(self, vocab: e2.Vocab, model: TinyLM, device: str | None = None):
        self.vocab = vocab
        # initialised on the CPU, so a seed starts from the same weights anywhere
        self.model = model.to(device) if device else model
        self.pad, self.eos = vocab[e2.PAD], vocab[e2.EOS]

    @classmethod
    def new(cls, vocab: e2.Vocab, seed: int, d_model: int, layers: int, device: str | None = None) -> "E2Policy":
        torch.manual_seed(seed)
        return cls(vocab, TinyLM(LMConfig(vocab=len(vocab), d_model=d_model, n_layers=layers, n_heads=4,
                                           d_ff=4 * d_model, max_len=MAX_CTX)), device)

    @classmethod
    def load(cls, path: str, device: str | None = None) -> "E2Policy":
        ck = torch.load(path, map_location="cpu")
        model = TinyLM(LMConfig(**ck["config"]))
        model.load_state_dict(ck["state"])
        return cls(e2.Vocab(ck["vocab"]["itos"]), model, device)

    def save(self, path: str) -> None:
        state = {k: v.cpu() for k, v in self.model.state_dict().items()}
        torch.save({"vocab": self.vocab.to_dict(), "config": self.model.c.to_dict(), "state": state}, path)

    def describe(self) -> str:
        c = self.model.c
        return "svtrain-tiny-%dL-d%d (%.2fM params, vocab %d)" % (c.n_layers, c.d_model, self.model.n_params() / 1e6, c.vocab)

    def ctx1(self, example: dict) -> list[int]:
        ids = [self.vocab[e2.BOS]] + self.vocab.ids(e2.prompt_pieces(example))
        return ids[: MAX_CTX - 64 - TURN1_MAX - ANSWER_MAX] + [self.vocab[e2.CALL]]

    def ctx2(self, ctx1: list[int], turn1: list[int], observations: list[dict]) -> list[int]:
        obs = self.vocab.ids(e2.obs_pieces(observations))[:60]
        return ctx1 + turn1 + [self.vocab[e2.OBS]] + obs + [self.vocab[e2.ANS]]

    def logprobs(self, prompts, completions, group, temperature=1.0):
        return completion_logprobs(self.model, prompts, completions, group, self.pad, temperature)

    def sample(self, prompts, group, max_new, temperature=1.0, greedy=False, generator=None):
        return sample(self.model, prompts, group, max_new, self.eos, self.pad, temperature=temperature,
                      greedy=greedy, generator=generator)

    def parameters(self):
        return self.model.parameters()

    def train(self):
        self.model.train()

    def eval(self):
        self.model.eval()


def k8s(examples: list[dict]) -> list[dict]:
    return [x for x in examples if (x.get("answer") or {}).get("fixture_type") == "k8s"]


def eval_rows(client, split: str, limit: int) -> list[dict]:
    rows = k8s(fetch_examples(client, "e2", split)[0])
    return rows[:limit] if limit else rows


def teacher_episodes(svbench: str, server_url: str, split: str, out: str, concurrency: int = 2) -> dict[str, dict]:
    """builtin:tool-autofix's episodes on a split, by example id, run by
    `svbench eval` against the served split's rows."""
    import subprocess
    root = os.path.join(out, "teacher-" + split)
    res = None
    if os.path.isdir(root):
        for dp, _, fs in os.walk(root):
            if "results.jsonl" in fs and "summary.json" in fs:
                res = os.path.join(dp, "results.jsonl")
    if res is None:
        cmd = [svbench, "eval", "e2", "-m", "builtin:tool-autofix", "--split", split, "-c", str(concurrency), "--out", root]
        print("+ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, capture_output=True)
        return teacher_episodes(svbench, server_url, split, out, concurrency)
    rows = {}
    with open(res) as f:
        for line in f:
            r = json.loads(line)
            rows[r["example_id"]] = r
    return rows


def play(policy: E2Policy, sessions: e2.Sessions, examples: list[dict], group: int, temperature: float,
         greedy: bool, gen: torch.Generator | None, chunk: int = 64):
    """Episodes of the policy: per example `group` rollouts. Returns one
    record per rollout with the token ids of both turns, their contexts and
    the session's score."""
    recs = []
    for c0 in range(0, len(examples), max(1, chunk // group)):
        batch = examples[c0: c0 + max(1, chunk // group)]
        ctx1 = [policy.ctx1(x) for x in batch]
        t1, lp1 = policy.sample(ctx1, group, TURN1_MAX, temperature=temperature, greedy=greedy, generator=gen)
        rows = [(x, ctx1[i]) for i, x in enumerate(batch) for _ in range(group)]
        eps = sessions.open([x["example_id"] for x, _ in rows])
        try:
            calls = [e2.tool_calls(policy.vocab, t, e2.file_of(x)[0]) for (x, _), t in zip(rows, t1)]
            first = [{"content": "", "tool_calls": c} if c else None for c in calls]
            obs = sessions.step(eps, first)
            ctx2 = [policy.ctx2(c1, t, o) for (_, c1), t, o in zip(rows, t1, obs)]
            t2, lp2 = policy.sample(ctx2, 1, ANSWER_MAX, temperature=temperature, greedy=greedy, generator=gen)
            texts = [e2.answer_text(policy.vocab, t, e2.leafmap_of(x)) for (x, _), t in zip(rows, t2)]
            sessions.step(eps, [{"content": s} for s in texts])
        finally:
            sessions.close(eps)
        for (x, c1), t, o, c2, a, s, ep, cl, o1, o2 in zip(rows, t1, obs, ctx2, t2, texts, eps, calls, lp1, lp2):
            st = e2.episode_stats(ep, len(cl))
            # the sampler's log-probabilities: the PPO ratio's denominator
            recs.append({**st, "ctx1": c1, "turn1": t, "ctx2": c2, "answer_ids": a, "answer": s, "old1": o1, "old2": o2})
    return recs


def summary(recs: list[dict]) -> dict:
    n = max(1, len(recs))
    return {k: sum(float(r[k]) for r in recs) / n for k in ("reward", "f1", "fix", "patch_applied", "tool_calls", "format", "solved")}


def evaluate(policy, sessions, examples, path: str) -> dict:
    policy.eval()
    recs = play(policy, sessions, examples, 1, 1.0, True, None)
    with open(path, "w") as f:
        for r in recs:
            f.write(json.dumps({k: v for k, v in r.items() if k not in ("ctx1", "ctx2", "turn1", "answer_ids")}) + "\n")
    return summary(recs)


def _padded(rows: list[list[float]], like: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(like.shape, dtype=like.dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=like.dtype)
    return out.to(like.device)


def grpo_step(policy, opt, recs: list[dict], group: int, scale: str = "group", kl: float = 0.0, ref=None,
              temperature: float = 1.0, epochs: int = 1, clip: float = 0.2) -> dict:
    """The update on both turns of every episode: the E1 loop's advantage
    estimator, PPO's clipped ratio to the sampler's log-probabilities
    (epochs > 1 reuses the episodes, which cost far more than an update),
    and, when kl > 0, the k3 penalty (per token, token-mean) to the
    reference policy ref (the warm start). Log-probabilities are taken at
    the sampling temperature, as the sampler drew the tokens."""
    dev = next(iter(policy.parameters())).device
    rewards = torch.tensor([r["reward"] for r in recs]).view(-1, group)
    adv = advantages("grpo", rewards, None, None, scale).view(-1, 1).to(dev)
    ctx1, turn1 = [r["ctx1"] for r in recs[::group]], [r["turn1"] for r in recs]
    ctx2, ans = [r["ctx2"] for r in recs], [r["answer_ids"] for r in recs]
    if kl > 0 and ref is None:
        raise ValueError("svtrain e2: a KL penalty needs the reference policy")
    refs = None
    if kl > 0:
        with torch.no_grad():
            refs = (ref.logprobs(ctx1, turn1, group, temperature)[0], ref.logprobs(ctx2, ans, 1, temperature)[0])
    policy.train()
    stats = {"loss": 0.0, "kl": 0.0, "clip_frac": 0.0}
    old = None
    for _ in range(max(1, epochs)):
        lp1, m1 = policy.logprobs(ctx1, turn1, group, temperature)
        lp2, m2 = policy.logprobs(ctx2, ans, 1, temperature)
        if old is None:
            # Records without the sampler's values (tests, old runs) are
            # taken as sampled by the current policy.
            old = tuple(_padded([r[k] for r in recs], lp) if all(k in r for r in recs) else lp.detach()
                        for k, lp in (("old1", lp1), ("old2", lp2)))
        tokens = m1.sum() + m2.sum()
        loss = torch.zeros((), device=dev)
        clipped = torch.zeros((), device=dev)
        for lp, m, o in ((lp1, m1, old[0]), (lp2, m2, old[1])):
            ratio = torch.exp(lp - o)
            surr = torch.minimum(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)
            loss = loss - (surr * m).sum() / tokens
            clipped = clipped + ((((ratio - 1).abs() > clip) & m.bool()).sum() / tokens).detach()
        k3 = torch.zeros((), device=dev)
        if refs is not None:
            k3 = sum(((torch.exp(r - lp) - (r - lp) - 1) * m).sum() for r, lp, m in ((refs[0], lp1, m1), (refs[1], lp2, m2))) / tokens
            loss = loss + kl * k3
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        stats["loss"] += float(loss) / max(1, epochs)
        stats["kl"] = float(k3)
        stats["clip_frac"] = float(clipped)
    stats["constant_groups"] = float((rewards.std(dim=1) < 1e-9).float().mean())
    return stats


def run_seed(a, seed: int, server_url: str) -> None:
    out = os.path.join(a.out, "seed%d" % seed)
    os.makedirs(out, exist_ok=True)
    client = Client(server_url)
    sessions = e2.Sessions(client, workers=a.session_workers)
    train = k8s(fetch_examples(client, "e2", "train")[0])
    train = train[: a.train_limit] if a.train_limit else train
    evals = {sp: eval_rows(client, sp, a.eval_limit) for sp in a.eval_splits}
    teacher = teacher_episodes(a.svbench, server_url, "train", a.out, a.teacher_concurrency)
    timing = {}
    t0 = time.time()
    answers = {}
    for x in train:
        r = teacher.get(x["example_id"])
        ans = e2.teacher_answer(x, r["final_text"]) if r else None
        if ans is not None:
            answers[x["example_id"]] = (x, r, ans)
    read = [e2.prompt_pieces(x) + e2.obs_pieces(r["completion"]) for x, r, _ in answers.values()]
    written = [e2.answer_pieces(ans) for _, _, ans in answers.values()]
    vocab = e2.Vocab.fit(read, written)
    policy = E2Policy.new(vocab, seed, a.d_model, a.layers, a.device)
    pairs = []
    for x, r, ans in answers.values():
        c1 = policy.ctx1(x)
        names = [c["name"] for m in r["completion"] if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
        t1 = vocab.ids(names) + [policy.eos]
        pairs.append((c1, t1))
        pairs.append((policy.ctx2(c1, t1, r["completion"]), vocab.ids(e2.answer_pieces(ans)) + [policy.eos]))
    print("svtrain e2: seed %d, %d train rows (k8s), %d SFT pairs, %s" % (seed, len(train), len(pairs), policy.describe()), flush=True)
    sft_path = os.path.join(out, "sft.pt")
    if os.path.exists(sft_path):
        policy = E2Policy.load(sft_path, a.device)
        timing["sft"] = "checkpoint reused"
    else:
        hist = sft(policy, pairs, a.sft_steps, a.sft_batch, a.sft_lr, seed, log=lambda m: print(m, flush=True))
        policy.save(sft_path)
        with open(os.path.join(out, "sft_history.jsonl"), "w") as f:
            for h in hist:
                f.write(json.dumps(h) + "\n")
        timing["sft_s"] = round(time.time() - t0, 1)
    t_eval = time.time()
    for sp, rows in evals.items():
        before = evaluate(policy, sessions, rows, os.path.join(out, "eval_before_%s.jsonl" % sp))
        print("svtrain e2: warm start on %s: %s" % (sp, json.dumps(before)), flush=True)
    # --deadline: the evaluation after GRPO costs what the one before did;
    # no step starts that would leave less than that (and a margin).
    reserve = 1.3 * (time.time() - t_eval) + 5.0
    stopped_at, spent = None, 0.0
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(policy.parameters(), lr=a.lr, weight_decay=0.0)
    ref = None
    if a.kl > 0:
        ref = E2Policy.load(sft_path, a.device)
        ref.eval()
    t1 = time.time()
    with open(os.path.join(out, "history.jsonl"), "w") as f:
        for step in range(a.steps):
            if a.deadline and time.time() + reserve + (spent / step if step else 0.0) > a.deadline:
                stopped_at = step
                print("svtrain e2: seed %d: the deadline stops GRPO after %d of %d steps" % (seed, step, a.steps), flush=True)
                break
            batch = rng.sample(train, a.prompts)
            policy.eval()
            ts = time.time()
            recs = play(policy, sessions, batch, a.group, a.temperature, False, gen)
            tp = time.time() - ts
            info = grpo_step(policy, opt, recs, a.group, a.scale_rewards, a.kl, ref, a.temperature, a.ppo_epochs, a.clip)
            rec = {"step": step, **summary(recs), **info, "play_s": round(tp, 2), "update_s": round(time.time() - ts - tp, 2)}
            f.write(json.dumps(rec) + "\n")
            f.flush()
            spent += time.time() - ts
            if step % 10 == 0 or step == a.steps - 1:
                print("svtrain e2: step %d/%d reward %.3f f1 %.3f fix %.3f calls %.2f const %.2f (%.0fs)" % (
                    step + 1, a.steps, rec["reward"], rec["f1"], rec["fix"], rec["tool_calls"], rec["constant_groups"], time.time() - t1), flush=True)
    timing["grpo_s"] = round(time.time() - t1, 1)
    policy.save(os.path.join(out, "final.pt"))
    for sp, rows in evals.items():
        after = evaluate(policy, sessions, rows, os.path.join(out, "eval_after_%s.jsonl" % sp))
        print("svtrain e2: after GRPO on %s: %s" % (sp, json.dumps(after)), flush=True)
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump({"seed": seed, "policy": policy.describe(), "argv": sys.argv, "eval_splits": a.eval_splits,
                   "train_rows": len(train), "sft_pairs": len(pairs), "timing": timing,
                   "grpo_steps_done": a.steps if stopped_at is None else stopped_at, "stopped_by_deadline": stopped_at is not None,
                   "config": {k: v for k, v in vars(a).items() if k not in ("func",)}}, f, indent=1)


def write_teacher(a, server_url: str) -> None:
    """builtin:tool-autofix on the evaluated rows, the comparison RESULTS-e2.md
    prints (written first, so a run stopped after some seeds has it)."""
    client = Client(server_url)
    for sp in a.eval_splits:
        rows = teacher_episodes(a.svbench, server_url, sp, a.out, a.teacher_concurrency)
        with open(os.path.join(a.out, "teacher_%s.jsonl" % sp), "w") as f:
            for x in eval_rows(client, sp, a.eval_limit):
                r = rows.get(x["example_id"])
                if r is None:
                    continue
                p = r.get("parsed") or {}
                f.write(json.dumps({"example_id": x["example_id"], "reward": r["reward"], "f1": p.get("f1", 0),
                                    "fix": p.get("fix_score", 0), "patch_applied": bool(p.get("patch_applied")),
                                    "tool_calls": len(r.get("tool_calls") or []), "format": bool(p.get("format_valid")),
                                    "solved": bool(r.get("solved"))}) + "\n")


def cmd_e2(a) -> None:
    from svtrain.cli import Server
    os.makedirs(a.out, exist_ok=True)
    procs.configure_torch(a.threads, a.device)
    srv = Server(a.svbench, a.server, None, a.out, envs="e2")
    try:
        write_teacher(a, srv.url)
        if a.jobs <= 1 or len(a.seeds) <= 1:
            for seed in a.seeds:
                run_seed(a, seed, srv.url)
            return
        # The warm start's episodes once, before the seeds read them.
        teacher_episodes(a.svbench, srv.url, "train", a.out, a.teacher_concurrency)
        print("svtrain e2: %d seeds in %d worker processes" % (len(a.seeds), min(a.jobs, len(a.seeds))), flush=True)
        for _ in procs.in_workers(run_seed, [(a, seed, srv.url) for seed in a.seeds], a.jobs, a.threads, a.device):
            pass
    finally:
        srv.close()


# -- RESULTS-e2.md ---------------------------------------------------------------

def _rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f]


def _m(rows, k):
    return sum(float(r[k]) for r in rows) / max(1, len(rows))


def _ci(t):
    p, lo, hi = t
    if lo is None:
        return "%+.3f" % p
    return "%+.3f [%+.3f, %+.3f]" % (p, lo, hi)


def dev_records(path: str | None, dirs: list[str]) -> list[dict]:
    """The dev log's records, after appending each run directory of dirs
    not yet in it (one record per seed: its configuration and dev scores)."""
    recs = _rows(path) if path and os.path.exists(path) else []
    have = {r["run"] for r in recs}
    for d in dirs:
        for s in sorted(x for x in os.listdir(d) if x.startswith("seed") and os.path.exists(os.path.join(d, x, "run.json"))):
            run = json.load(open(os.path.join(d, s, "run.json")))
            name = "%s/%s" % (os.path.basename(os.path.normpath(d)), s)
            if name in have:
                continue
            b = _rows(os.path.join(d, s, "eval_before_dev.jsonl"))
            f = _rows(os.path.join(d, s, "eval_after_dev.jsonl"))
            keys = ("reward", "f1", "fix", "patch_applied", "format", "tool_calls")
            rec = {"run": name, "argv": run["argv"], "config": run["config"], "eval_splits": run["eval_splits"],
                   "before": {k: _m(b, k) for k in keys}, "after": {k: _m(f, k) for k in keys}}
            if "test" in run["eval_splits"]:
                rec["note"] = "this run also answered the test split (its test scores were not used to choose)"
            recs.append(rec)
            have.add(name)
            if path:
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                with open(path, "a") as out:
                    out.write(json.dumps(rec, sort_keys=True) + "\n")
    return recs


def cmd_results(a) -> None:
    seeds = sorted(d for d in os.listdir(a.root) if d.startswith("seed") and os.path.exists(os.path.join(a.root, d, "run.json")))
    if not seeds:
        raise SystemExit("svtrain e2-results: no finished seed under %s" % a.root)
    runs = {s: json.load(open(os.path.join(a.root, s, "run.json"))) for s in seeds}
    splits = runs[seeds[0]]["eval_splits"]
    L = []
    L.append("# E2 training run: tool calls through /v1/sessions (generated)\n")
    L.append("Generated by `train/run.py e2-results %s` from the files the run wrote; never typed. "
             "Command: `%s`.\n" % (a.root, " ".join(runs[seeds[0]]["argv"])))
    L.append("Policy: %s. Rows: E2's Kubernetes rows (train %d; evaluated on the Kubernetes rows of %s). "
             "Every rollout, in training and evaluation, is a `/v1/sessions` episode: the policy's first turn names "
             "the scanners it calls, svbench runs them and returns their findings, the second turn answers with "
             "violations and a JSON Patch, and the session scores it with the default (executable) rubric. "
             "What the policy reads and writes is documented in `train/svtrain/e2.py`.\n"
             % (runs[seeds[0]]["policy"], runs[seeds[0]]["train_rows"], " and ".join(splits)))
    metrics = [("reward", "reward"), ("f1", "detection F1"), ("fix", "patch fix score"), ("patch_applied", "patch applied"),
               ("format", "answer format valid"), ("tool_calls", "tool calls / episode"), ("solved", "solved")]
    for split in splits:
        teacher = os.path.join(a.root, "teacher_%s.jsonl" % split)
        L.append("## %s split: warm start and after GRPO\n" % split)
        L.append("Greedy answers; after − before with a paired bootstrap 95% interval over rows.\n")
        L.append("| seed | metric | warm start | after GRPO | after − before |")
        L.append("|---|---|---|---|---|")
        deltas = {k: [] for k, _ in metrics}
        for s in seeds:
            b = _rows(os.path.join(a.root, s, "eval_before_%s.jsonl" % split))
            f = _rows(os.path.join(a.root, s, "eval_after_%s.jsonl" % split))
            b.sort(key=lambda r: r["example_id"]); f.sort(key=lambda r: r["example_id"])
            for k, name in metrics:
                d = paired_diff(b, f, lambda rows, k=k: _m(rows, k))
                deltas[k].append(d[0])
                L.append("| %s | %s | %.3f | %.3f | %s |" % (s, name, _m(b, k), _m(f, k), _ci(d)))
        if len(seeds) > 1:
            L.append("\nAcross seeds (t interval): " + "; ".join("%s %s" % (name, _ci(t_interval(deltas[k]))) for k, name in metrics) + ".\n")
        if os.path.exists(teacher):
            t = _rows(teacher)
            L.append("\nTeacher `builtin:tool-autofix` (unified diffs, its episodes through `svbench eval`) on the same %d rows: " % len(t) +
                     ", ".join("%s %.3f" % (name, _m(t, k)) for k, name in metrics) + ".\n")
    L.append("## Learning curves (training batches, sampled at temperature %.1f)\n" % runs[seeds[0]]["config"]["temperature"])
    for s in seeds:
        h = _rows(os.path.join(a.root, s, "history.jsonl"))
        w = max(1, len(h) // 10)
        L.append("### %s\n" % s)
        L.append("| steps | reward | detection F1 | fix score | patch applied | tool calls | groups with one reward |")
        L.append("|---|---|---|---|---|---|---|")
        for i in range(0, len(h), w):
            c = h[i: i + w]
            L.append("| %d–%d | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |" % (c[0]["step"] + 1, c[-1]["step"] + 1, _m(c, "reward"), _m(c, "f1"), _m(c, "fix"), _m(c, "patch_applied"), _m(c, "tool_calls"), _m(c, "constant_groups")))
        L.append("")
        tm = runs[s]["timing"]
        if runs[s].get("stopped_by_deadline"):
            L.append("GRPO was stopped by `--deadline` after %d of the %d steps asked for; the evaluation after it is of that policy.\n" % (
                runs[s]["grpo_steps_done"], runs[s]["config"]["steps"]))
        L.append("Time: SFT %s, GRPO %s s (%.2f s a step: playing the episodes %.2f, the update %.2f).\n" % (
            tm.get("sft_s", tm.get("sft")), tm.get("grpo_s"), tm.get("grpo_s", 0) / max(1, len(h)), _m(h, "play_s"), _m(h, "update_s")))
    records = dev_records(a.dev_log, a.dev)
    if records:
        L.append("## Every configuration tried on dev\n")
        L.append("Runs of `train/run.py e2 … --eval-splits dev` from the same warm start (SFT is deterministic: the "
                 "seed-1 checkpoint is reused), kept in `%s`. The recipe was chosen on dev only, from the runs made "
                 "before the test run; a run's note says when it came after.\n" % a.dev_log)
        L.append("| run | GRPO steps | temperature | lr | KL β | prompts × G | dev reward before → after | F1 | fix | patch applied |")
        L.append("|---|---|---|---|---|---|---|---|---|---|")
        for r in records:
            c, b, f = r["config"], r["before"], r["after"]
            L.append("| `%s` | %d | %.2f | %g | %g | %d × %d | %.3f → %.3f | %.3f → %.3f | %.3f → %.3f | %.3f → %.3f |" % (
                r["run"], c["steps"], c["temperature"], c["lr"], c.get("kl") or 0, c["prompts"], c["group"], b["reward"], f["reward"],
                b["f1"], f["f1"], b["fix"], f["fix"], b["patch_applied"], f["patch_applied"]))
            if r.get("note"):
                L.append("| | %s | | | | | | | | |" % r["note"])
        L.append("")
    L.append("## Configuration\n")
    L.append("```json\n%s\n```\n" % json.dumps(runs[seeds[0]]["config"], indent=1, sort_keys=True))
    text = "\n".join(L) + "\n"
    with open(a.results, "w") as f:
        f.write(text)
    print(text)


def add_parsers(sub) -> None:
    from svtrain.cli import kl_coefficient  # cli imports this module
    p = sub.add_parser("e2", help="E2 (Kubernetes rows) through /v1/sessions: warm start on tool-autofix, then GRPO")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    p.add_argument("--out", default=os.path.join(repo, "train", "out", "e2"))
    p.add_argument("--svbench", default=os.path.join(repo, "bin", "svbench"))
    p.add_argument("--server", default=None, help="a running svbench serve's URL (default: start one)")
    p.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",") if x], default=[1],
                   help="comma-separated; empty: only the teacher's scores on the evaluated rows")
    p.add_argument("--eval-splits", type=lambda s: s.split(","), default=["dev", "test"],
                   help="splits answered greedily before and after GRPO (dev to choose a recipe on, test to report)")
    p.add_argument("--train-limit", type=int, default=0, help="train on the first N Kubernetes rows (0: all)")
    p.add_argument("--eval-limit", type=int, default=0, help="evaluate on the first N Kubernetes rows of each split (0: all)")
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--sft-steps", type=int, default=600)
    p.add_argument("--sft-batch", type=int, default=32)
    p.add_argument("--sft-lr", type=float, default=1e-3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--ppo-epochs", type=int, default=1, help="updates per batch of episodes (PPO's clipped ratio to the sampler)")
    p.add_argument("--clip", type=float, default=0.2, help="PPO's ratio clip")
    p.add_argument("--kl", type=kl_coefficient, default=0.0, metavar="BETA",
                   help="KL penalty to the warm start (k3 per token, token-mean); 0: none")
    p.add_argument("--scale-rewards", choices=SCALES, default="group",
                   help="what a group's centred rewards are divided by: the group's std, the step's, or nothing")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default=None, help="torch device of the policy (cuda, cpu); default: the CPU")
    p.add_argument("--jobs", type=int, default=1,
                   help="run the seeds in this many worker processes at once (each with --threads torch threads)")
    p.add_argument("--session-workers", type=int, default=8,
                   help="episodes stepped at once over /v1/sessions (the server runs their scanners side by side)")
    p.add_argument("--deadline", type=float, default=0, metavar="EPOCH",
                   help="wall-clock time (seconds since the epoch) by which each seed must be done: GRPO stops early enough "
                        "for the evaluation after it, and the run records how many steps it took (0: none)")
    p.add_argument("--teacher-concurrency", type=int, default=2,
                   help="svbench eval -c of builtin:tool-autofix's episodes (the warm start's and the comparison's)")
    p.set_defaults(func=cmd_e2)
    r = sub.add_parser("e2-results", help="write RESULTS-e2.md from an e2 run's files")
    r.add_argument("root")
    r.add_argument("--results", default="train/RESULTS-e2.md")
    r.add_argument("--dev-log", default=None, help="JSONL of every configuration tried on dev, listed in the document")
    r.add_argument("--dev", action="append", default=[], metavar="DIR",
                   help="an e2 run evaluated on dev (repeatable): appended to --dev-log unless there already")
    r.set_defaults(func=cmd_results)
