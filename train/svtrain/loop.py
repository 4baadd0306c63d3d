"""Supervised warm start, evaluation and the GRPO loop.

One loop, any policy backend (svtrain.policy). Per step: draw P training
prompts, sample G completions each, score every completion with svbench's
executable verifier over HTTP, compute the reward the arm trains on
(executable, learned reward model or random), advantages (GRPO on the
summed reward, or GDPO's per-component group normalisation), and take a
clipped policy-gradient step (no KL term). Everything is written in the
formats ``svbench report`` and ``svbench study`` read (svtrain.runfiles).
"""

from __future__ import annotations

import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from svtrain import runfiles
from svtrain.policy import last_user_text
from svtrain.rewards import Executable, LearnedRM, RandomReward
from svtrain.stats import outcome


def fetch_examples(client, env: str, split: str | None, limit: int = 0) -> tuple[list[dict], dict]:
    """Every example of a split (None: whatever the server serves) and the
    dataset description ({"id", "revision", ...})."""
    out: list[dict] = []
    offset = 0
    dataset: dict = {}
    while True:
        page = client.examples(env, split=split, offset=offset, limit=500)
        dataset = page.get("dataset") or dataset
        ex = page.get("examples") or []
        out.extend(ex)
        offset += len(ex)
        if not ex or offset >= page.get("total", 0) or (limit and len(out) >= limit):
            break
    return (out[:limit] if limit else out), dataset


def gold(example: dict) -> Any:
    return example.get("answer")


# -- supervised warm start -------------------------------------------------------


def sft_pairs(policy, sft_rows: list[dict], keep_rationale: bool = False) -> list[tuple[list[int], list[int]]]:
    """(prompt ids, answer ids) from `svbench sft export` conversations. The
    rationale is dropped unless asked for: the rubric pays nothing for it."""
    pairs = []
    for row in sft_rows:
        msgs = row["messages"]
        prompt = [m for m in msgs[:-1]]
        answer = msgs[-1].get("content") or ""
        if not keep_rationale:
            try:
                obj = json.loads(answer)
                answer = json.dumps({"label": obj["label"], "confidence": obj["confidence"]})
            except (ValueError, KeyError, TypeError):
                pass
        pairs.append((policy.prompt_ids(prompt), policy.answer_ids(answer)))
    return pairs


def sft(policy, pairs, steps: int, batch: int, lr: float, seed: int, log=print) -> list[dict]:
    rng = random.Random(seed)
    opt = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 20) * max(0.1, 1 - s / max(1, steps)))
    order: list[int] = []
    history = []
    policy.train()
    t0 = time.time()
    for step in range(steps):
        if len(order) < batch:
            order += rng.sample(range(len(pairs)), len(pairs))
        idx, order = order[:batch], order[batch:]
        prompts = [pairs[i][0] for i in idx]
        answers = [pairs[i][1] for i in idx]
        lp, mask = policy.logprobs(prompts, answers, 1)
        loss = -(lp * mask).sum() / mask.sum()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        sched.step()
        history.append({"step": step, "loss": float(loss)})
        if step % 20 == 0 or step == steps - 1:
            log("svtrain: sft step %d/%d loss %.4f (%.0fs)" % (step + 1, steps, float(loss), time.time() - t0))
    return history


# -- evaluation --------------------------------------------------------------------


def evaluate(policy, examples: list[dict], executable: Executable, max_new: int, batch: int = 64) -> list[dict]:
    """Greedy answers to examples, scored by the executable verifier. One
    record per example: id, gold, completion, the score and its outcome."""
    policy.eval()
    texts: list[str] = []
    lens: list[int] = []
    for i in range(0, len(examples), batch):
        chunk = examples[i: i + batch]
        toks, _ = policy.sample([policy.prompt_ids(e["prompt"]) for e in chunk], 1, max_new, greedy=True)
        texts += [policy.decode(t) for t in toks]
        lens += [len(t) for t in toks]
    scores = executable.score(texts, [gold(e) for e in examples], [e.get("example_id") for e in examples])
    out = []
    for i, (e, t, s) in enumerate(zip(examples, texts, scores)):
        out.append({"index": i, "example_id": e.get("example_id"), "gold": gold(e), "completion": t, "tokens": lens[i],
                    "score": s, "outcome": outcome(s, gold(e))})
    return out


# -- advantages ----------------------------------------------------------------------


# TRL GRPOTrainer's convention (scale_rewards="group", ε = 1e-4, Bessel's
# correction), so `svbench advantages` names the trainer setting that
# reproduces the recorded advantages: what svtrain measures transfers to a
# TRL run of the same rewards.
EPS = 1e-4


def _std(x: torch.Tensor, dim=None, keepdim=False) -> torch.Tensor:
    """Sample std; 0 where the spread is float noise (≤ 1e-12 of the values'
    scale: a trainer divides an exact 0 by ε and gets 0)."""
    std = x.std(dim=dim, unbiased=True, keepdim=keepdim) if dim is not None else x.std(unbiased=True)
    scale = x.abs().amax(dim=dim, keepdim=keepdim).clamp(min=1.0) if dim is not None else x.abs().max().clamp(min=1.0)
    return torch.where(std <= 1e-12 * scale, torch.zeros_like(std), std)


def _group_norm(x: torch.Tensor) -> torch.Tensor:
    """x: [P, G] → (x − group mean) / (group std + ε); 0 where a group is constant."""
    x = x.double()
    mean = x.mean(1, keepdim=True)
    std = _std(x, 1, keepdim=True)
    return torch.where(std > 0, (x - mean) / (std + EPS), torch.zeros_like(x))


def _require_finite(name: str, x: torch.Tensor) -> None:
    bad = ~torch.isfinite(x)
    if bool(bad.any()):
        where = [tuple(i) for i in bad.nonzero().tolist()[:5]]
        raise ValueError("svtrain: %s is not finite at [prompt, completion] %s (%d of %d values): one NaN or "
                         "Infinity makes its whole group's advantages NaN; refusing to train on it"
                         % (name, where, int(bad.sum()), x.numel()))


SCALES = ("group", "batch", "none")


def advantages(method: str, rewards: torch.Tensor, components: dict[str, torch.Tensor] | None, weights: dict[str, float] | None,
               scale: str = "group") -> torch.Tensor:
    """GRPO: the summed reward less its group's mean, divided by the group's
    std (TRL scale_rewards="group"), the batch's std ("batch") or nothing
    ("none", Dr. GRPO). A group's std makes the advantage of a lone outcome
    depend on its sign only: where seven abstentions earn 1.3 and one guess
    1.8 or 0.07, the guess gets ±7/√8 (sample std) whatever the stakes, so a guess right
    61% of the time is reinforced although its mean reward is 1.06. Scaling
    every group alike keeps the update pointed at the expected reward.
    per_component: group-normalise each component and take the rubric's
    weighted sum (svbench advantages' per_component). GDPO (decoupled; TRL
    multi_objective_aggregation="normalize_then_sum"): per_component, then
    normalised over the step's batch. rewards and components are [P, G].
    A value that is not finite raises ValueError: the executable verifier's
    bad items are already failed ones (Executable.score), so what is left
    is a broken reward source (a diverged reward model), which must stop
    the run rather than steer it."""
    _require_finite("reward", rewards)
    for c, t in (components or {}).items():
        _require_finite("component %s" % c, t)
    if scale not in SCALES:
        raise ValueError("unknown reward scaling %r (want one of %s)" % (scale, ", ".join(SCALES)))
    if method == "grpo":
        if scale == "group":
            return _group_norm(rewards).float()
        x = rewards.double()
        centred = x - x.mean(1, keepdim=True)
        if scale == "none":
            return centred.float()
        std = _std(x)
        return (centred / (std + EPS) if std > 0 else torch.zeros_like(centred)).float()
    if method in ("gdpo", "per_component"):
        assert components and weights
        a = sum(weights[c] * _group_norm(components[c]) for c in weights)
        if method == "per_component":
            return a.float()
        std = _std(a)
        return ((a - a.mean()) / (std + EPS) if std > 0 else torch.zeros_like(a)).float()
    raise ValueError("unknown advantage estimator %r" % method)


# -- GRPO ---------------------------------------------------------------------------


@dataclass
class GRPOConfig:
    arm: str = "grpo"
    reward: str = "executable"  # executable | learned_rm | random
    adv: str = "grpo"  # grpo | per_component | gdpo
    scale: str = "group"  # grpo's divisor: group | batch | none (SCALES)
    # β of a KL penalty to the warm start (k3 estimator per token, as verl's
    # low_var_kl and TRL's beta): 0 trains without an anchor.
    kl: float = 0.0
    steps: int = 50
    prompts: int = 16  # prompts per step
    group: int = 8  # completions per prompt (G)
    max_new: int = 12  # tokens per completion
    temperature: float = 1.0
    lr: float = 5e-4
    clip: float = 0.2
    ppo_epochs: int = 1
    micro_prompts: int = 0  # prompts per backward pass (0 = all)
    # DAPO's dynamic sampling: draw oversample × prompts prompts a step and
    # train on the groups whose reward varies (GDPO: or any component),
    # up to prompts; a group that scores the same G times has no advantage
    # and only dilutes the token-mean loss. 1 = off.
    oversample: int = 1
    checkpoint_every: int = 10  # steps between resumable checkpoints (0 = none)
    seed: int = 1
    env: str = "e1"
    model: str = ""
    notes: list[str] = field(default_factory=list)


CHECKPOINT = "checkpoint.pt"

# What a checkpoint must agree on with the run it resumes: everything that
# shapes the trajectory (checkpoint_every only says when to save).
_RESUME_KEYS = ("arm", "reward", "adv", "steps", "prompts", "group", "max_new", "temperature", "lr", "clip",
                "ppo_epochs", "micro_prompts", "seed", "env", "oversample", "scale", "kl")
# Keys added after checkpoints were written, with the value those runs had.
_RESUME_DEFAULTS = {"oversample": 1, "scale": "group", "kl": 0.0}


def _trainable_state(policy) -> dict:
    """The weights the update changes (all of them, or LoRA's adapters)."""
    return {n: p.detach().cpu().clone() for n, p in policy.model.named_parameters() if p.requires_grad}


def _save_checkpoint(path: str, state: dict) -> None:
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)  # a kill mid-save leaves the previous checkpoint


def informative_groups(rewards: list[float], scores: list[dict], comp_names: list[str], group: int, want: int,
                       multi: bool) -> tuple[list[int], int]:
    """Dynamic sampling's choice: the first want groups, in draw order, whose
    reward varies (with multi, GDPO's view: the reward or any component
    varies), filled up with the first constant ones when too few vary.
    Returns the kept groups' indices and how many of the drawn groups varied."""
    n = len(rewards) // group
    varies = []
    for p in range(n):
        rows = range(p * group, (p + 1) * group)
        v = len({rewards[i] for i in rows}) > 1
        if multi and not v:
            v = any(len({float((scores[i].get("components") or {}).get(c, 0.0)) for i in rows}) > 1 for c in comp_names)
        varies.append(v)
    keep = [p for p in range(n) if varies[p]][:want]
    keep += [p for p in range(n) if not varies[p]][: want - len(keep)]
    return sorted(keep), sum(varies)


def grpo(policy, cfg: GRPOConfig, train: list[dict], test: list[dict], executable: Executable, run_dir: str,
         dataset: dict, rm: LearnedRM | None = None, env_info: dict | None = None, log=print,
         stop_after: int = 0, ref=None) -> dict | None:
    """The GRPO loop. ref is the frozen warm start that cfg.kl anchors to. Every cfg.checkpoint_every steps it saves what the
    next step needs (trainable weights, optimiser, every random stream, the
    prompt order, the run files' state) to RUN/checkpoint.pt; started again
    on the same run directory and configuration it continues from there, and
    on CPU the result is the uninterrupted run's to the byte. stop_after > 0
    stops after that many steps of this call with a checkpoint written
    (time-sliced jobs) and returns None."""
    rng = random.Random(cfg.seed * 1000 + 1)
    gen = torch.Generator().manual_seed(cfg.seed * 1000 + 2)
    torch.manual_seed(cfg.seed)
    coin = RandomReward(cfg.seed) if cfg.reward == "random" else None
    if cfg.reward == "learned_rm" and rm is None:
        raise ValueError("reward learned_rm needs a reward model")
    if cfg.kl > 0 and ref is None:
        raise ValueError("a KL penalty needs the reference policy (the warm start)")
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, weight_decay=0.0)
    ck_path = os.path.join(run_dir, CHECKPOINT)
    ck = None
    if os.path.exists(ck_path):
        ck = torch.load(ck_path, weights_only=False)
        want = {k: getattr(cfg, k) for k in _RESUME_KEYS}
        have = {**_RESUME_DEFAULTS, **ck["cfg"]}
        if have != want:
            diff = sorted(k for k in want if have.get(k) != want[k])
            raise SystemExit("svtrain: %s was written by a run with other settings (%s); remove it or the run directory to start over" % (ck_path, ", ".join(diff)))
    writer = runfiles.RunWriter(run_dir, cfg, executable, dataset, env_info or {}, policy.describe(),
                                resume=ck["writer"] if ck else None)
    try:
        return _grpo(policy, cfg, train, test, executable, writer, rm, coin, rng, gen, opt, ck, ck_path, log, stop_after, ref)
    except BaseException:
        writer.suspend()  # what was flushed stays; the last checkpoint resumes
        raise


def _grpo(policy, cfg, train, test, executable, writer, rm, coin, rng, gen, opt, ck, ck_path, log, stop_after, ref=None):
    weights = executable.weights
    comp_names = executable.components

    def trained_on(prompts_text: list[str], texts: list[str], scores: list[dict]) -> list[float]:
        if cfg.reward == "executable":
            return [float(s["reward"]) for s in scores]
        if cfg.reward == "learned_rm":
            return rm.score_texts(prompts_text, texts)
        return coin(len(texts))

    order: list[int] = []
    start, elapsed = 0, 0.0
    if ck:
        missing, unexpected = policy.model.load_state_dict(ck["weights"], strict=False)
        if unexpected or any(n in ck["weights"] for n in missing):
            raise SystemExit("svtrain: %s does not fit this policy (unexpected %s)" % (ck_path, unexpected[:3]))
        opt.load_state_dict(ck["optimizer"])
        rng.setstate(ck["rng"])
        gen.set_state(ck["generator"])
        torch.set_rng_state(ck["torch_rng"])
        if ck.get("cuda_rng") is not None and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(ck["cuda_rng"])
        if coin is not None:
            coin.rng.setstate(ck["coin"])
        order, start, elapsed = ck["order"], ck["step"], ck["elapsed"]
        log("svtrain: %s: resuming at step %d/%d from %s" % (cfg.arm, start + 1, cfg.steps, ck_path))
    else:
        log("svtrain: %s: %s, reward %s, advantages %s, %d steps × %d prompts × G=%d" % (cfg.arm, policy.describe(), cfg.reward, cfg.adv, cfg.steps, cfg.prompts, cfg.group))
        ev0 = evaluate(policy, test, executable, cfg.max_new)
        writer.eval_records("before", 0, ev0)
    t_start = time.time() - elapsed

    def checkpoint(next_step: int) -> None:
        _save_checkpoint(ck_path, {
            "cfg": {k: getattr(cfg, k) for k in _RESUME_KEYS}, "step": next_step, "elapsed": time.time() - t_start,
            "weights": _trainable_state(policy), "optimizer": opt.state_dict(), "rng": rng.getstate(),
            "generator": gen.get_state(), "torch_rng": torch.get_rng_state(),
            "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
            "coin": coin.rng.getstate() if coin is not None else None, "order": list(order), "writer": writer.state(),
        })

    ran = 0
    for step in range(start, cfg.steps):
        if stop_after and ran >= stop_after:
            checkpoint(step)
            writer.suspend()
            log("svtrain: %s: stopped after step %d/%d; run again to resume" % (cfg.arm, step, cfg.steps))
            return None
        ran += 1
        t0 = time.time()
        n_draw = cfg.prompts * max(1, cfg.oversample)
        while len(order) < n_draw:
            order += rng.sample(range(len(train)), len(train))
        idx, order = order[:n_draw], order[n_draw:]
        exs = [train[i] for i in idx]
        prompts = [policy.prompt_ids(e["prompt"]) for e in exs]
        policy.eval()
        toks, old_lps = policy.sample(prompts, cfg.group, cfg.max_new, temperature=cfg.temperature, generator=gen)
        texts = [policy.decode(t) for t in toks]
        t1 = time.time()
        golds = [gold(e) for e in exs for _ in range(cfg.group)]
        scores = executable.score(texts, golds, [e.get("example_id") for e in exs for _ in range(cfg.group)])
        ptext = [last_user_text(e["prompt"]) for e in exs for _ in range(cfg.group)]
        r = trained_on(ptext, texts, scores)
        t2 = time.time()
        multi = cfg.adv in ("gdpo", "per_component")
        # What the policy did is measured on every drawn rollout; the update
        # and the rollout rows are the groups kept.
        drawn = {"executable": [float(s["reward"]) for s in scores], "outs": [outcome(s, g) for s, g in zip(scores, golds)],
                 "groups": len(exs), "informative": len(exs)}
        if cfg.oversample > 1:
            keep, drawn["informative"] = informative_groups(r, scores, comp_names, cfg.group, cfg.prompts, multi)
            rows_kept = [p * cfg.group + j for p in keep for j in range(cfg.group)]
            idx, exs, prompts = [idx[p] for p in keep], [exs[p] for p in keep], [prompts[p] for p in keep]
            toks, old_lps, texts = [toks[i] for i in rows_kept], [old_lps[i] for i in rows_kept], [texts[i] for i in rows_kept]
            golds, scores, r = [golds[i] for i in rows_kept], [scores[i] for i in rows_kept], [r[i] for i in rows_kept]
        R = torch.tensor(r, dtype=torch.float32).view(cfg.prompts, cfg.group)
        comps = {c: torch.tensor([float((s.get("components") or {}).get(c, 0.0)) for s in scores]).view(cfg.prompts, cfg.group) for c in comp_names}
        A = advantages(cfg.adv, R, comps if multi else None, weights if multi else None, cfg.scale)
        # clipped policy-gradient update, with a KL penalty to the warm start when cfg.kl > 0
        policy.train()
        flatA = A.flatten()
        old = [torch.tensor(l, dtype=torch.float32) for l in old_lps]
        stats = {"loss": 0.0, "clip_frac": 0.0, "ratio_dev": 0.0, "grad_norm": 0.0, "kl": 0.0}
        micro = cfg.micro_prompts or cfg.prompts
        n_tok_all = sum(len(t) for t in toks)
        # The reference's log-probabilities are fixed for the step, like the
        # sampler's: computed once, whatever the number of PPO epochs.
        ref_lps = {}
        if cfg.kl > 0:
            with torch.no_grad():
                for m0 in range(0, cfg.prompts, micro):
                    rows = range(m0 * cfg.group, min(cfg.prompts, m0 + micro) * cfg.group)
                    ref_lps[m0], _ = ref.logprobs(prompts[m0: m0 + micro], [toks[i] for i in rows], cfg.group, cfg.temperature)
        for _ in range(cfg.ppo_epochs):
            opt.zero_grad()
            for m0 in range(0, cfg.prompts, micro):
                rows = list(range(m0 * cfg.group, min(cfg.prompts, m0 + micro) * cfg.group))
                lp, mask = policy.logprobs(prompts[m0: m0 + micro], [toks[i] for i in rows], cfg.group, cfg.temperature)
                old_t = torch.zeros(lp.shape, dtype=lp.dtype)
                for k, i in enumerate(rows):
                    old_t[k, : len(old[i])] = old[i]
                ratio = torch.exp(lp - old_t.to(lp.device))
                a = flatA[rows].view(-1, 1).to(lp.device)
                surr = torch.minimum(ratio * a, ratio.clamp(1 - cfg.clip, 1 + cfg.clip) * a)
                loss = -(surr * mask).sum() / n_tok_all  # token-mean over the whole batch
                if cfg.kl > 0:
                    d = ref_lps[m0].to(lp.device) - lp
                    k3 = ((torch.exp(d) - d - 1) * mask).sum() / n_tok_all
                    loss = loss + cfg.kl * k3
                    stats["kl"] += float(k3)
                loss.backward()
                with torch.no_grad():
                    stats["loss"] += float(loss)
                    stats["clip_frac"] += float((((ratio - 1).abs() > cfg.clip) & mask).sum()) / n_tok_all
                    stats["ratio_dev"] = max(stats["ratio_dev"], float(((ratio - 1).abs() * mask).max()))
            stats["grad_norm"] = float(torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0))
            opt.step()
        t3 = time.time()
        outs = drawn["outs"]
        lens = [len(t) for t in toks]
        ent = -sum(sum(l) for l in old_lps) / max(1, n_tok_all)
        m = {
            "step": step,
            "reward": r,
            "executable": drawn["executable"],
            "drawn_groups": drawn["groups"],
            "informative_groups": drawn["informative"],
            "components": {c: float(comps[c].mean()) for c in comp_names},
            "decode_len": lens,
            "solved": sum(1 for o in outs if o["correct"]) / len(outs),
            "format_valid": sum(1 for o in outs if o["format_valid"]) / len(outs),
            "abstain_rate": sum(1 for o in outs if o["abstain"]) / len(outs),
            "malicious_rate": sum(1 for o in outs if o["label"] == "Malicious") / len(outs),
            "score_errors": sum(1 for s in scores if s.get("error")),
            "neg_logp_per_token": ent,
            "zero_adv_groups": int((A.abs().sum(1) == 0).sum()),
            "time": {"step": t3 - t0, "sample": t1 - t0, "score": t2 - t1, "update": t3 - t2},
            **stats,
        }
        writer.step(m, idx, exs, texts, golds, r, A.flatten().tolist(), scores)
        if step % 5 == 0 or step == cfg.steps - 1:
            log("svtrain: %s step %d/%d reward %.3f exec %.3f acc %.2f fmt %.2f len %.1f (%.1fs: sample %.1f score %.2f update %.1f)" % (
                cfg.arm, step + 1, cfg.steps, sum(r) / len(r), sum(m["executable"]) / len(m["executable"]), m["solved"], m["format_valid"],
                sum(lens) / len(lens), t3 - t0, t1 - t0, t2 - t1, t3 - t2))
        if cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0 and step + 1 < cfg.steps:
            checkpoint(step + 1)
    ev1 = evaluate(policy, test, executable, cfg.max_new)
    final_rewards = trained_on([last_user_text(test[e["index"]]["prompt"]) for e in ev1], [e["completion"] for e in ev1], [e["score"] for e in ev1])
    writer.eval_records("after", cfg.steps, ev1, final_rewards, test)
    summary = writer.finish(time.time() - t_start)
    if os.path.exists(ck_path):
        os.remove(ck_path)  # the summary marks the run finished
    return summary


def distill(policy, cfg: GRPOConfig, pairs, batch: int, lr: float, test: list[dict], executable: Executable, run_dir: str,
            dataset: dict, env_info: dict | None = None, log=print) -> dict:
    """The teacher-distillation baseline: the warm start trained further on
    the teacher's answers for as many answers as the GRPO arms sample
    (steps × prompts × G), evaluated on the test split before and after
    like every arm. Against it, an RL arm's gain is what the reward taught
    beyond imitating the teacher longer."""
    writer = runfiles.RunWriter(run_dir, cfg, executable, dataset, env_info or {}, policy.describe())
    t0 = time.time()
    log("svtrain: %s: teacher distillation, %d answers (the GRPO budget) in batches of %d" % (
        cfg.arm, cfg.steps * cfg.prompts * cfg.group, batch))
    writer.eval_records("before", 0, evaluate(policy, test, executable, cfg.max_new))
    n = max(1, math.ceil(cfg.steps * cfg.prompts * cfg.group / batch))
    hist = sft(policy, pairs, n, batch, lr, cfg.seed, log)
    for h in hist:
        # on the GRPO arms' step axis, so curves share it
        s_ = min(cfg.steps - 1, h["step"] * cfg.steps // n)
        writer.steps.setdefault(s_, {"step": s_})["monitor/%s/sft_loss" % cfg.env] = h["loss"]
    ev1 = evaluate(policy, test, executable, cfg.max_new)
    writer.eval_records("after", cfg.steps, ev1, [float(e["score"]["reward"]) for e in ev1], test)
    return writer.finish(time.time() - t0)