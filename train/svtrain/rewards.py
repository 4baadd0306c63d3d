"""Reward sources of the research matrix.

* ``Executable``: svbench's verifier, over HTTP (``svbench serve``, the Python
  package ``svbench``). Every rollout of every arm is scored by it, so the
  arms that train on something else still log what the verifier thinks.
* ``LearnedRM``: a small classifier trained on labelled answers (answers to
  training prompts, labelled by the executable verifier), standing in for a
  model-based verifier. It reads the flow as ``key=value`` features and the
  answer as a bag of its tokens, and predicts the rubric total.
* ``RandomReward``: the control: a fair coin per rollout, 0 or 1.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import torch
import torch.nn as nn

from svtrain.policy import last_user_text
from svtrain.tokenizer import pieces


class Executable:
    source = "executable"

    def __init__(self, client, env: str = "e1", rubric: str | None = None):
        from svbench import rubric_info

        self.client = client
        self.env = env
        self.rubric = rubric
        info = rubric_info(client, env, rubric)
        self.rubric_name = info["name"]
        self.components = [c["name"] for c in info["components"]]
        self.weights = {c["name"]: float(c["weight"]) for c in info["components"]}
        self.total_min, self.total_max = info.get("total_min"), info.get("total_max")
        self.calls = 0

    def score(self, completions: list[str], answers: list[Any], example_ids: list[str | None] | None = None) -> list[dict]:
        """Score completions; a row with an example id is scored as the
        server's own example, the gold answer otherwise. The id matters:
        only the server's example carries what the rubric reads beside the
        answer (E1's meta.ambiguous, where the default rubric pays an
        abstention), so scoring by answer alone never paid an abstention and
        every run learned that abstaining is worth 0.3 everywhere."""
        from svbench import make_item
        from svbench.client import _check_count, checked_result

        ids = example_ids if example_ids is not None else [None] * len(completions)
        if len(ids) != len(completions):
            raise ValueError("svtrain: %d example ids for %d completions" % (len(ids), len(completions)))
        items = [make_item(self.env, c, answer=a, example_id=i or None, rubric=self.rubric)
                 for c, a, i in zip(completions, answers, ids)]
        self.calls += 1
        results = self.client.score(items)
        # Checked here as well as in svbench.Client: the client is whatever
        # the caller passed, and one NaN reward turns its whole group's
        # advantages into NaN; one result too many shifts every reward
        # after it onto the wrong completion.
        _check_count("results", len(results), len(items))
        out = []
        for r in map(checked_result, results):
            if r.get("error"):
                # A failed item (the server's error, or a reward or component
                # that is not a finite number) scores 0 with empty
                # components; it is counted in score_errors.
                out.append({"reward": 0.0, "components": {}, "parsed": {}, "solved": False, "error": r["error"]})
            else:
                out.append(r)
        return out


# -- learned reward model ------------------------------------------------------

_KV = re.compile(r"([A-Za-z_]+)=(\S+)")


def _bucket(v: float) -> str:
    if v <= 0:
        return "0" if v == 0 else "neg"
    return "b%d" % int(math.floor(math.log2(1 + v) * 2))


def prompt_features(text: str) -> list[str]:
    """key=value features of a flow record; numbers by half-octave buckets,
    addresses by port and private/public class."""
    feats = []
    for k, v in _KV.findall(text):
        if k in ("src", "dst") and ":" in v:
            host, _, port = v.rpartition(":")
            private = host.startswith(("10.", "192.168.", "172.16.", "172.17.", "172.18.", "172.2", "172.3", "127."))
            feats.append("%s_private=%s" % (k, private))
            if port.isdigit():
                p = int(port)
                feats.append("%s_port=%s" % (k, p if p < 1024 or p in (1337, 3389, 4444, 5900, 8080, 8443) else "high"))
            continue
        if k == "ts":
            feats.append("hour=%s" % v[11:13])
            continue
        try:
            feats.append("%s=%s" % (k, _bucket(float(v))))
        except ValueError:
            feats.append("%s=%s" % (k, v))
    return feats


def completion_features(text: str) -> list[str]:
    """The completion's pieces as a bag, and its length in pieces (a judge
    reading the text sees how long it is; a bag alone cannot tell one answer
    from the same answer with its tail repeated)."""
    ps = pieces(text)
    return ["c:" + p for p in ps] + ["c:#len=%d" % min(len(ps), 40)] if ps else ["c:<empty>"]


class LearnedRM(nn.Module):
    """Hashed prompt and completion features, each summed into an embedding
    (EmbeddingBag), concatenated, then an MLP → predicted reward."""

    source = "learned_rm"

    def __init__(self, n_features: int = 4096, dim: int = 64, hidden: int = 128):
        super().__init__()
        self.n = n_features
        self.prompt_bag = nn.EmbeddingBag(n_features, dim, mode="sum")
        self.completion_bag = nn.EmbeddingBag(n_features, dim, mode="sum")
        self.net = nn.Sequential(nn.Linear(2 * dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def featurize(self, prompts: list[str], completions: list[str]):
        """Index lists of each pair's prompt and completion features."""
        return ([[hash_feature(f) % self.n for f in prompt_features(p)] for p in prompts],
                [[hash_feature(f) % self.n for f in completion_features(c)] for c in completions])

    @staticmethod
    def _bag(lists, idx=None):
        sel = lists if idx is None else [lists[i] for i in idx]
        flat = torch.tensor([i for l in sel for i in l], dtype=torch.long)
        offsets = torch.tensor([0] + [len(l) for l in sel[:-1]], dtype=torch.long).cumsum(0)
        return flat, offsets

    def forward(self, feats, idx=None):
        pf, cf = feats
        p = self.prompt_bag(*self._bag(pf, idx))
        c = self.completion_bag(*self._bag(cf, idx))
        return self.net(torch.cat([p, c], dim=-1)).squeeze(-1)

    @torch.no_grad()
    def score_texts(self, prompts: list[str], completions: list[str]) -> list[float]:
        self.eval()
        return [float(v) for v in self(self.featurize(prompts, completions))]

    def save(self, path: str, meta: dict) -> None:
        torch.save({"n": self.n, "state": self.state_dict(), "meta": meta}, path)

    @classmethod
    def load(cls, path: str) -> "LearnedRM":
        ck = torch.load(path)
        rm = cls(ck["n"])
        rm.load_state_dict(ck["state"])
        rm.meta = ck.get("meta", {})
        return rm


def hash_feature(f: str) -> int:
    """A stable hash (Python's str hash is salted per process)."""
    h = 2166136261
    for b in f.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def candidate_answers(rng: random.Random) -> list[str]:
    """Answers a reward model is trained to judge: each label at a few
    confidences, written the way the policy writes them."""
    out = []
    for label in ("Malicious", "Benign", "Abstain"):
        for conf in (0.55, 0.75, 0.95):
            c = round(min(1.0, max(0.0, conf + rng.uniform(-0.1, 0.05))), 2)
            out.append('{"label": "%s", "confidence": %s}' % (label, c))
    return out


# Tails a policy optimising a bag-of-pieces judge writes (svtrain's RM arm
# found `}}}}}}}}}}}}` worth 5.1 and `", "confidence": ` repeated): the judge
# has to have seen them, labelled by the verifier, or its hacking gap
# measures an untrained corner rather than the judge.
_DEGENERATE_TAILS = ("}", "}}", '"', ", ", '", "confidence": ', '"label": ', "Malicious", "Benign", "Abstain", " 0.9", "{")


def degenerate_answers(rng: random.Random, valid: list[str], n: int = 4) -> list[str]:
    """n malformed or degenerate variants of well-formed answers: cut short,
    a tail repeated after the answer, the answer twice, its pieces shuffled,
    a bare label, nothing at all."""
    out = []
    for _ in range(n):
        v = rng.choice(valid)
        kind = rng.randrange(6)
        if kind == 0:
            out.append(v[: rng.randrange(1, len(v))])
        elif kind == 1:
            out.append(v + rng.choice(_DEGENERATE_TAILS) * rng.randint(1, 12))
        elif kind == 2:
            out.append(v[: rng.randrange(1, len(v))] + rng.choice(_DEGENERATE_TAILS) * rng.randint(2, 8))
        elif kind == 3:
            ps = pieces(v)
            rng.shuffle(ps)
            out.append("".join(ps))
        elif kind == 4:
            out.append(rng.choice(("Malicious", "Benign", "Abstain", "label: Malicious", v + v)))
        else:
            out.append("")
    return out


def train_rm(examples: list[dict], executable: Executable, seed: int, extra: list[tuple] | None = None,
             epochs: int = 30, log=print) -> tuple[LearnedRM, dict]:
    """Fit the reward model on labelled answers to training prompts.

    examples: training rows from the server ({"prompt", "answer", ...}), each
    with well-formed answers and degenerate ones (degenerate_answers); extra:
    more (prompt text, completion, gold answer[, example id]) rows (the
    baseline's answers, the warm-start policy's samples). Labels are the
    executable verifier's rewards. A fifth of the prompts is held out to
    report the model's fit.
    """
    rng = random.Random(seed)
    torch.manual_seed(seed)
    triples = []
    ids = []
    for ex in examples:
        p = last_user_text(ex["prompt"])
        cands = candidate_answers(rng)
        for c in cands + degenerate_answers(rng, cands):
            triples.append((p, c, ex.get("answer")))
            ids.append(ex.get("example_id"))
    for t in extra or []:
        triples.append(t[:3])
        ids.append(t[3] if len(t) > 3 else None)
    rewards = []
    B = 1024
    for i in range(0, len(triples), B):
        chunk = triples[i: i + B]
        rewards += [r["reward"] for r in executable.score([c for _, c, _ in chunk], [a for _, _, a in chunk], ids[i: i + B])]
    prompts = sorted({p for p, _, _ in triples})
    rng.shuffle(prompts)
    held = set(prompts[: len(prompts) // 5])
    rm = LearnedRM()
    X = rm.featurize([p for p, _, _ in triples], [c for _, c, _ in triples])
    y = torch.tensor(rewards, dtype=torch.float32)
    is_held = torch.tensor([p in held for p, _, _ in triples])
    train_idx = (~is_held).nonzero().flatten()
    opt = torch.optim.AdamW(rm.parameters(), lr=2e-3, weight_decay=1e-4)
    for ep in range(epochs):
        rm.train()
        perm = train_idx[torch.randperm(len(train_idx))]
        for i in range(0, len(perm), 256):
            idx = perm[i: i + 256].tolist()
            loss = ((rm(X, idx) - y[idx]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    rm.eval()
    with torch.no_grad():
        pred = rm(X)
    fit = {}
    for name, m in (("train", ~is_held), ("held_out", is_held)):
        if int(m.sum()) == 0:
            continue
        err = (pred[m] - y[m])
        # Ranking check: on each held-out prompt, does the RM prefer the
        # verifier's best answer? (pairwise accuracy over answer pairs)
        fit[name] = {"n": int(m.sum()), "rmse": float(err.pow(2).mean().sqrt()), "mae": float(err.abs().mean())}
    agree, pairs = 0, 0
    by_prompt: dict[str, list[int]] = {}
    for i, (p, _, _) in enumerate(triples):
        if p in held:
            by_prompt.setdefault(p, []).append(i)
    for idx in by_prompt.values():
        for a in idx:
            for b in idx:
                if a < b and abs(rewards[a] - rewards[b]) > 1e-6:
                    pairs += 1
                    agree += int((pred[a] - pred[b]) * (rewards[a] - rewards[b]) > 0)
    fit["held_out_pairwise_accuracy"] = agree / pairs if pairs else None
    fit["labelled_answers"] = len(triples)
    log("svtrain: reward model fit %s" % fit)
    return rm, fit


class RandomReward:
    source = "random"

    def __init__(self, seed: int):
        self.rng = random.Random(seed * 7919 + 17)

    def __call__(self, n: int) -> list[float]:
        return [float(self.rng.random() < 0.5) for _ in range(n)]
