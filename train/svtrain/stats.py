"""Detection metrics of scored answers and bootstrap intervals (stdlib only)."""

from __future__ import annotations

import math
import random
from typing import Callable, Sequence

LABELS = ("Malicious", "Benign")


def outcome(result: dict, gold: str) -> dict:
    """One answer's outcome from /v1/score's result and the gold label."""
    parsed = result.get("parsed") or {}
    label = str(parsed.get("predicted_label") or "").strip().capitalize()
    decided = label in LABELS
    correct = decided and label == str(gold).strip().capitalize()
    conf = parsed.get("confidence") if parsed.get("confidence_valid") else None
    fn = decided and not correct and gold == "Malicious"
    fp = decided and not correct and gold == "Benign"
    return {
        "reward": float(result.get("reward", 0.0)),
        "components": result.get("components") or {},
        "decided": decided,
        "correct": correct,
        "abstain": label == "Abstain",
        "format_valid": bool(parsed.get("format_valid")),
        "confidence": float(conf) if conf is not None else None,
        "cost": 10.0 if fn else (1.0 if fp else 0.0),
        "label": label or None,
    }


def _mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def accuracy(rows):
    return _mean([1.0 if r["correct"] else 0.0 for r in rows])


def abstain_rate(rows):
    return _mean([1.0 if r["abstain"] else 0.0 for r in rows])


def mean_reward(rows):
    return _mean([r["reward"] for r in rows])


def format_rate(rows):
    return _mean([1.0 if r["format_valid"] else 0.0 for r in rows])


def brier(rows):
    xs = [(r["confidence"] - (1.0 if r["correct"] else 0.0)) ** 2 for r in rows if r["decided"] and r["confidence"] is not None]
    return _mean(xs)


def ece(rows, bins: int = 10):
    d = [r for r in rows if r["decided"] and r["confidence"] is not None]
    if not d:
        return float("nan")
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        inb = [r for r in d if (lo <= r["confidence"] < hi) or (b == bins - 1 and r["confidence"] == 1.0)]
        if inb:
            total += len(inb) * abs(_mean([1.0 if r["correct"] else 0.0 for r in inb]) - _mean([r["confidence"] for r in inb]))
    return total / len(d)


def cost_per_row(rows):
    return _mean([r["cost"] for r in rows])


def cost_weighted_accuracy(rows):
    n = sum(1 for r in rows if r["decided"])
    if n == 0:
        return float("nan")
    return 1.0 - sum(r["cost"] for r in rows) / (10.0 * n)


METRICS: dict[str, Callable] = {
    "reward": mean_reward,
    "accuracy": accuracy,
    "abstain_rate": abstain_rate,
    "format_valid": format_rate,
    "ece": ece,
    "brier": brier,
    "cost_per_row": cost_per_row,
    "cost_weighted_accuracy": cost_weighted_accuracy,
}


def bootstrap(rows: Sequence, stat: Callable, reps: int = 1000, seed: int = 1):
    """Point estimate and percentile 95% interval, resampling rows."""
    point = stat(rows)
    if reps <= 0 or not rows:
        return point, point, point
    rng = random.Random(seed)
    n = len(rows)
    vals = []
    for _ in range(reps):
        v = stat([rows[rng.randrange(n)] for _ in range(n)])
        if not math.isnan(v):
            vals.append(v)
    if not vals:
        return point, float("nan"), float("nan")
    vals.sort()
    return point, vals[int(0.025 * len(vals))], vals[min(len(vals) - 1, int(0.975 * len(vals)))]


def paired_diff(before: Sequence, after: Sequence, stat: Callable, reps: int = 1000, seed: int = 1):
    """stat(after) − stat(before) over the same examples, resampling examples."""
    assert len(before) == len(after)
    point = stat(after) - stat(before)
    rng = random.Random(seed)
    n = len(before)
    vals = []
    for _ in range(reps):
        idx = [rng.randrange(n) for _ in range(n)]
        v = stat([after[i] for i in idx]) - stat([before[i] for i in idx])
        if not math.isnan(v):
            vals.append(v)
    if not vals:
        return point, float("nan"), float("nan")
    vals.sort()
    return point, vals[int(0.025 * len(vals))], vals[min(len(vals) - 1, int(0.975 * len(vals)))]


def summarize(rows, reps: int = 1000, seed: int = 1) -> dict:
    return {k: bootstrap(rows, f, reps, seed) for k, f in METRICS.items()}


def t_interval(xs: Sequence[float]):
    """Mean and 95% t interval across seeds (None bounds for one seed)."""
    xs = [x for x in xs if not math.isnan(x)]
    if not xs:
        return float("nan"), None, None
    m = _mean(xs)
    if len(xs) < 2:
        return m, None, None
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    t = {2: 12.706, 3: 4.303, 4: 3.182, 5: 2.776, 6: 2.571}.get(len(xs), 2.262 if len(xs) <= 10 else 1.96)
    h = t * sd / math.sqrt(len(xs))
    return m, m - h, m + h
