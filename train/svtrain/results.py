"""RESULTS.md from a finished matrix directory: every table and curve is
computed here from the files the runs wrote; nothing is typed in."""

from __future__ import annotations

import glob
import json
import math
import os
import random

from svtrain import stats
from svtrain.arms import ARMS, sibling, start_of

ARM_ORDER = ["grpo", "per_component", "gdpo", "format", "format_per_component", "format_gdpo", "distill", "rm", "random",
             "format_distill", "format_rm", "format_random"]
ARM_TEXT = {
    "grpo": "GRPO, executable reward (summed rubric)",
    "per_component": "GRPO, executable reward, each component group-normalised and summed with the rubric weights (no batch step)",
    "distill": "no RL: the warm start trained further on the teacher's answers, as many as a GRPO arm samples (distillation baseline)",
    "format": "GRPO, executable reward, from a warm start on the answer format only (teacher's labels shuffled across prompts)",
    "format_per_component": "per-component normalisation (no batch step), executable reward, from the same format-only warm start",
    "format_gdpo": "GDPO, executable reward, from the same format-only warm start",
    "gdpo": "GDPO, executable reward (each component group-normalised, weighted sum, batch-normalised)",
    "rm": "GRPO, learned reward model",
    "random": "GRPO, random reward (control)",
    "format_distill": "no RL: the format-only warm start trained on the teacher's answers (true labels), as many as a GRPO arm samples",
    "format_rm": "GRPO, learned reward model, from the format-only warm start",
    "format_random": "GRPO, random reward (control), from the format-only warm start",
}
COLORS = {"grpo": "#1f77b4", "gdpo": "#ff7f0e", "rm": "#2ca02c", "random": "#7f7f7f", "per_component": "#9467bd", "format": "#8c564b", "format_per_component": "#17becf", "format_gdpo": "#bcbd22", "distill": "#e377c2",
          "format_distill": "#f7b6d2", "format_rm": "#98df8a", "format_random": "#c7c7c7"}


def score_baseline(run_dir: str, executable) -> list[dict]:
    """The baseline's test-split answers (an svbench eval run), scored by the
    server like the policies' answers."""
    rows = []
    with open(os.path.join(run_dir, "results.jsonl")) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    # An eval writes rows as its episodes finish, in an order that changes
    # run to run; the bootstrap resamples by position, so the rows are put
    # in the dataset's order first or the teacher's intervals move.
    rows.sort(key=lambda r: (r.get("index", 0), r.get("rollout", 0), str(r.get("example_id", ""))))
    answers = [r.get("answer") for r in rows]
    scores = executable.score([r.get("final_text") or "" for r in rows], answers, [r.get("example_id") for r in rows])
    return [{"index": i, "example_id": r.get("example_id"), "gold": a, "outcome": stats.outcome(s, a)}
            for i, (r, a, s) in enumerate(zip(rows, answers, scores))]


def _read_jsonl(p):
    with open(p) as f:
        return [json.loads(l) for l in f if l.strip()]


def _fmt(x, nd=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return ("%%.%df" % nd) % x


def _ci(t, nd=3):
    p, lo, hi = t
    return "%s [%s, %s]" % (_fmt(p, nd), _fmt(lo, nd), _fmt(hi, nd))


def _signed_ci(t, nd=3):
    p, lo, hi = t
    if any(isinstance(x, float) and math.isnan(x) for x in (p, lo, hi)):
        return "n/a"
    return "%+.*f [%+.*f, %+.*f]" % (nd, p, nd, lo, nd, hi)


def _verdict(t):
    p, lo, hi = t
    if any(isinstance(x, float) and math.isnan(x) for x in (p, lo, hi)):
        return "undefined"
    if lo > 0:
        return "up (interval above 0)"
    if hi < 0:
        return "down (interval below 0)"
    return "no separation (interval includes 0)"


def load(out: str) -> dict:
    runs = {}
    for rd in sorted(glob.glob(os.path.join(out, "runs", "*"))):
        name = os.path.basename(rd)
        if not os.path.exists(os.path.join(rd, "svtrain_summary.json")):
            continue
        arm, _, seed = name.rpartition("-s")
        with open(os.path.join(rd, "svtrain_summary.json")) as f:
            summ = json.load(f)
        with open(os.path.join(rd, "metrics_raw.json")) as f:
            steps = json.load(f)["metrics"]
        final = _read_jsonl(os.path.join(rd, "results.jsonl"))
        runs[name] = {"arm": arm, "seed": int(seed), "dir": rd, "summary": summ, "steps": steps,
                      "before": _read_jsonl(os.path.join(rd, "eval_before.jsonl")),
                      "after": _read_jsonl(os.path.join(rd, "eval_after.jsonl")), "final_rows": final}
    info = {}
    if os.path.exists(os.path.join(out, "matrix.json")):
        with open(os.path.join(out, "matrix.json")) as f:
            info = json.load(f)
    base = None
    if os.path.exists(os.path.join(out, "baseline_test_eval.jsonl")):
        base = _read_jsonl(os.path.join(out, "baseline_test_eval.jsonl"))
    return {"runs": runs, "info": info, "baseline": base}


def _by_arm(runs):
    arms = {}
    for r in runs.values():
        arms.setdefault(r["arm"], []).append(r)
    for v in arms.values():
        v.sort(key=lambda r: r["seed"])
    return {a: arms[a] for a in ARM_ORDER if a in arms} | {a: v for a, v in arms.items() if a not in ARM_ORDER}


# -- SVG ------------------------------------------------------------------------------


def svg_lines(title: str, ylabel: str, series: list[tuple[str, str, list[tuple[float, float]]]], w=640, h=320) -> str:
    pts = [p for _, _, s in series for p in s if not math.isnan(p[1])]
    if not pts:
        return ""
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if y1 - y0 < 1e-9:
        y0, y1 = y0 - 0.5, y1 + 0.5
    pad = (y1 - y0) * 0.05
    y0, y1 = y0 - pad, y1 + pad
    x1 = x1 if x1 > x0 else x0 + 1
    L, R, T, B = 60, 150, 30, 40

    def X(x):
        return L + (x - x0) / (x1 - x0) * (w - L - R)

    def Y(y):
        return h - B - (y - y0) / (y1 - y0) * (h - T - B)

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">' % (w, h),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="18" font-size="13">%s</text>' % (L, title)]
    for i in range(5):
        yv = y0 + (y1 - y0) * i / 4
        o.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, w - R, Y(yv), Y(yv)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (L - 4, Y(yv) + 4, yv))
    for i in range(5):
        xv = x0 + (x1 - x0) * i / 4
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(xv), h - B + 15, round(xv)))
    o.append('<text x="%d" y="%d" text-anchor="middle">training step</text>' % ((L + w - R) // 2, h - 6))
    o.append('<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>' % (h // 2, h // 2, ylabel))
    for k, (name, color, s) in enumerate(series):
        s = [p for p in s if not math.isnan(p[1])]
        if not s:
            continue
        d = " ".join("%s%.1f,%.1f" % ("M" if i == 0 else "L", X(x), Y(y)) for i, (x, y) in enumerate(s))
        o.append('<path d="%s" fill="none" stroke="%s" stroke-width="2"/>' % (d, color))
        o.append('<text x="%d" y="%d" fill="%s">%s</text>' % (w - R + 8, T + 16 * k + 10, color, name))
    o.append("</svg>")
    return "\n".join(o)


def _smooth(v, w=5):
    h = w // 2
    out = []
    for i in range(len(v)):
        win = [x for x in v[max(0, i - h): i + h + 1] if not math.isnan(x)]
        out.append(sum(win) / len(win) if win else float("nan"))
    return out


def _curve(runs, key):
    """Mean over seeds of a per-step key, smoothed over 5 steps."""
    by_step = {}
    for r in runs:
        for s in r["steps"]:
            if key in s:
                by_step.setdefault(s["step"], []).append(s[key])
    xs = sorted(by_step)
    ys = _smooth([sum(by_step[x]) / len(by_step[x]) for x in xs])
    return list(zip(xs, ys))


# -- the document -----------------------------------------------------------------------


# What a configuration's record keeps of its run's arguments: what shapes the
# result (not paths, ports or report switches).
_DEV_KEYS = ("train_generate", "train_split", "test_split", "baseline", "sft_generate", "prompt_mode", "size", "layers", "pool", "encoder", "condition", "sft_steps", "sft_batch", "sft_lr",
             "steps", "prompts", "group", "max_new", "temperature", "lr", "clip", "ppo_epochs", "oversample", "scale_rewards", "kl", "rubric", "hf_model", "seeds")


def append_dev_log(out: str, path: str) -> None:
    """One JSONL record of a finished matrix run: its configuration and each
    arm's scores before and after on the split it evaluated (dev, when
    choosing a recipe). RESULTS.md lists every record, so no configuration
    is chosen silently."""
    d = load(out)
    info = d["info"]
    args = info.get("args") or {}
    rec = {"out": os.path.relpath(out, os.path.dirname(os.path.abspath(path))), "argv": info.get("argv"),
           "config": {k: args.get(k) for k in _DEV_KEYS if k in args}, "model": info.get("model"), "arms": {}}
    cpath = os.path.join(out, "constant_answers.json")
    if os.path.exists(cpath):
        with open(cpath) as f:
            best = json.load(f)["best"]
        rec["best_constant"] = {"answer": best["answer"], "reward": best["reward"]}
    for a, rs in _by_arm(d["runs"]).items():
        def m(which, f):
            return sum(f([x["outcome"] for x in r[which]]) for r in rs) / len(rs)
        top = max(max(_label_counts(r["after"]).values()) / len(r["after"]) for r in rs)
        rec["arms"][a] = {"seeds": [r["seed"] for r in rs],
                          "before": {"reward": m("before", stats.mean_reward), "accuracy": m("before", stats.accuracy),
                                     "abstain_rate": m("before", stats.abstain_rate)},
                          "after": {"reward": m("after", stats.mean_reward), "accuracy": m("after", stats.accuracy),
                                    "abstain_rate": m("after", stats.abstain_rate)},
                          "largest_label_share": top}
    with open(path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def _label_counts(evals) -> dict:
    c: dict[str, int] = {}
    for x in evals:
        lab = x["outcome"].get("label") or "(unparsed)"
        c[lab] = c.get(lab, 0) + 1
    return c


def _dev_section(path: str) -> list[str]:
    L = ["## Configurations tried on dev\n",
         "Every configuration tried while choosing the recipe, in the order tried (`%s`, appended by `train/run.py matrix "
         "--test-split dev --dev-log`); the recipe above was chosen on these dev scores only, the test split was not "
         "consulted.\n" % os.path.basename(path),
         "| # | configuration | arm | dev reward before → after | dev accuracy before → after | abstain after | largest label share | best constant |",
         "|---|---|---|---|---|---|---|---|"]
    with open(path) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    for i, r in enumerate(recs, 1):
        cfg = ", ".join("%s=%s" % (k, v) for k, v in r["config"].items() if v not in (None, "", False))
        bc = r.get("best_constant")
        for a, v in r["arms"].items():
            L.append("| %d | %s | %s | %.3f → %.3f | %.3f → %.3f | %.2f | %.2f | %s |" % (
                i, cfg.replace("|", "/"), a, v["before"]["reward"], v["after"]["reward"], v["before"]["accuracy"],
                v["after"]["accuracy"], v["after"]["abstain_rate"], v["largest_label_share"],
                "%.3f" % bc["reward"] if bc else "n/a"))
            cfg = "〃"
    L.append("")
    return L


def write(out: str, path: str, dev_log: str | None = None) -> None:
    d = load(out)
    runs, info = d["runs"], d["info"]
    if not runs:
        raise SystemExit("svtrain: no finished runs under %s/runs" % out)
    arms = _by_arm(runs)
    # RESULTS.md's figures go to results/, RESULTS-gpu.md's to results-gpu/.
    stem = os.path.splitext(os.path.basename(path))[0]
    suffix = stem[len("RESULTS"):] if stem.startswith("RESULTS") else "-" + stem
    fig_dir = os.path.join(os.path.dirname(os.path.abspath(path)), "results" + suffix.lower())
    os.makedirs(fig_dir, exist_ok=True)
    rel = os.path.relpath(fig_dir, os.path.dirname(os.path.abspath(path)))
    any_run = next(iter(runs.values()))
    cfg = any_run["summary"]["config"]
    seeds = sorted({r["seed"] for r in runs.values()})
    reps = 1000
    L = []
    w = L.append
    w("# svtrain: the first training run against `svbench serve` (E1)\n")
    w("_Generated by `train/run.py results` from `%s` — every number and curve below comes from the run's files; "
      "nothing is typed. %s_\n" % (os.path.relpath(out, os.path.dirname(os.path.abspath(path))),
                                   "The command that made it is under Reproduce." if info.get("argv") else "Rerun `make train-demo` to regenerate."))
    where = info.get("device_name") or "CPU"
    w("**Caveat: this is a tiny model.** %s, trained from scratch on %s for %d GRPO steps; the results say what "
      "this loop does at this scale, not what GRPO, GDPO or a learned reward model do for a real LLM.%s\n" % (
          any_run["summary"]["model"], where, cfg["steps"],
          " One seed: intervals resample test examples and do not cover seed-to-seed variation." if len(seeds) < 2 else ""))
    w("## Set-up\n")
    t = info.get("timing", {})
    ds = info.get("dataset") or {}
    w("| | |\n|---|---|")
    w("| environment | E1 network-logs, rubric `%s`, weights %s |" % (any_run["summary"]["rubric"], ", ".join("%s %g" % kv for kv in any_run["summary"]["weights"].items())))
    w("| data | `%s` (%s): %s train / %s test examples served by `svbench serve` (`?split=`); the test split is evaluated at the first and last step |" % (
        os.path.basename(str(ds.get("id", "?"))), ds.get("revision", "?"), info.get("train_examples", "?"), info.get("test_examples", "?")))
    w("| warm start | %s answers of `%s` on the train split, exported by `svbench sft export` (test prompts refused), %s steps × batch %s |" % (
        info.get("sft_rows", "?"), info.get("baseline", "?"), info.get("args", {}).get("sft_steps", "?"), info.get("args", {}).get("sft_batch", "?")))
    over = int(cfg.get("oversample") or 1)
    kl = float(cfg.get("kl") or 0)
    scale = {"group": "the group's reward std (TRL scale_rewards=\"group\")", "batch": "the step's reward std (TRL scale_rewards=\"batch\")",
             "none": "nothing (Dr. GRPO, TRL scale_rewards=\"none\")"}.get(cfg.get("scale") or "group", str(cfg.get("scale")))
    w("| budget per arm | %d steps × %d prompts × G=%d%s, ≤ %d new tokens, temperature %g, lr %g, clip %g, %d PPO epoch(s), %s; GRPO's centred rewards divided by %s |" % (
        cfg["steps"], cfg["prompts"], cfg["group"],
        "" if over <= 1 else " trained, of %d prompts drawn a step (dynamic sampling: the groups whose reward varies)" % (cfg["prompts"] * over),
        cfg["max_new"], cfg["temperature"], cfg["lr"], cfg["clip"], cfg["ppo_epochs"],
        "KL to the warm start β = %g (k3 per token)" % kl if kl > 0 else "no KL", scale))
    w("| seeds | %s |" % ", ".join(map(str, seeds)))
    w("| arms | %s |" % "; ".join("`%s`: %s" % (a, ARM_TEXT.get(a, a)) for a in arms))
    if t:
        inv = info.get("invocations", 1)
        jobs = int((info.get("args") or {}).get("jobs") or 1)
        par = ", %d seeds at once (each stage's time is its own process's)" % min(jobs, len(seeds)) if jobs > 1 and len(seeds) > 1 else ""
        w("| wall time | %s total%s on %s, %s CPU thread(s)%s: %s |" % (_dur(t.get("total")), " over %d invocations (resumed)" % inv if inv > 1 else "", where, info.get("threads", "?"),
                                                             par, ", ".join("%s %s" % (k, _dur(v)) for k, v in t.items() if k != "total")))
    # GRPO steps only: a distillation arm takes none.
    step_t = [t for t in (r["summary"].get("mean_step_seconds") or {} for r in runs.values()) if "step" in t]
    if step_t:
        w("| mean GRPO step | %s s (sampling %s s, scoring over HTTP %s s, update %s s) |" % tuple(
            _fmt(sum(s[k] for s in step_t) / len(step_t), 2) for k in ("step", "sample", "score", "update")))
    w("")

    # curves
    w("## Learning curves\n")
    w("Means over seeds of each step's %d rollouts, 5-step moving average. The executable reward is the verifier's "
      "score of every training rollout, whatever the arm trained on.\n" % (cfg["prompts"] * cfg["group"]))
    for key, title, ylabel, fname in (
        ("monitor/e1/executable_reward", "Executable reward of training rollouts", "reward", "curve_executable.svg"),
        ("reward/e1/mean", "Reward each arm trained on", "reward", "curve_trained_on.svg"),
        ("monitor/e1/solved", "Share of rollouts with the gold label", "accuracy", "curve_accuracy.svg"),
        ("decode_len/e1/mean", "Decode length", "tokens", "curve_decode_len.svg"),
    ):
        series = [(a, COLORS.get(a, "#000"), _curve(rs, key)) for a, rs in arms.items()]
        svg = svg_lines(title, ylabel, series)
        if svg:
            with open(os.path.join(fig_dir, fname), "w") as f:
                f.write(svg)
            w("![%s](%s/%s)\n" % (title, rel, fname))

    # before/after on the test split
    w("## Test split before and after (greedy answers, executable verifier)\n")
    w("Pooled over seeds; 95%% intervals from %d bootstrap resamples of the test rows, Δ paired by example.%s\n" % (
        reps, " With several seeds, the across-seed mean and t-interval of Δ reward follows." if len(seeds) > 1 else ""))
    hdr = ["arm", "metric", "before", "after", "Δ (after − before)"]
    w("| " + " | ".join(hdr) + " |\n|" + "---|" * len(hdr))
    learned = {}
    moved: dict[str, list[str]] = {}
    metrics = ["reward", "accuracy", "ece", "brier", "cost_per_row", "cost_weighted_accuracy", "abstain_rate", "format_valid"]
    for a, rs in arms.items():
        before = [x["outcome"] for r in rs for x in r["before"]]
        after = [x["outcome"] for r in rs for x in r["after"]]
        for m in metrics:
            f = stats.METRICS[m]
            b = stats.bootstrap(before, f, reps, 1)
            af = stats.bootstrap(after, f, reps, 2)
            dd = stats.paired_diff(before, after, f, reps, 3)
            if m == "reward":
                learned[a] = dd
            if not math.isnan(dd[1]) and (dd[1] > 0 or dd[2] < 0) and m != "reward":
                moved.setdefault(a, []).append("%s %s" % (m, _signed_ci(dd)))
            w("| %s | %s | %s | %s | %s |" % (a if m == "reward" else "", m, _ci(b), _ci(af), _signed_ci(dd)))
    if d["baseline"]:
        bo = [x["outcome"] for x in d["baseline"]]
        w("\nThe warm start's teacher, `%s`, on the same test split: reward %s, accuracy %s, ECE %s, cost per row %s.\n" % (
            info.get("baseline", "baseline"), _ci(stats.bootstrap(bo, stats.mean_reward, reps, 4)),
            _ci(stats.bootstrap(bo, stats.accuracy, reps, 4)), _ci(stats.bootstrap(bo, stats.ece, reps, 4)),
            _ci(stats.bootstrap(bo, stats.cost_per_row, reps, 4))))
    if len(seeds) > 1:
        w("\n| arm | Δ reward per seed | mean [95% t-interval] |\n|---|---|---|")
        for a, rs in arms.items():
            ds_ = [stats.mean_reward([x["outcome"] for x in r["after"]]) - stats.mean_reward([x["outcome"] for x in r["before"]]) for r in rs]
            m, lo, hi = stats.t_interval(ds_)
            w("| %s | %s | %s |" % (a, ", ".join("%+.3f" % x for x in ds_), "%+.3f [%s, %s]" % (m, _fmt(lo), _fmt(hi))))
    w("")

    L.extend(_learned_section(out, arms, seeds, reps))

    # findings
    w("## What the run shows\n")
    w("**Which arm learned** (test reward after − before, executable verifier):\n")
    if len(seeds) > 1:
        w("With %d seeds the seed-level interval (t over the seeds' Δ) is the one to read; the pooled interval resamples "
          "test rows and ignores seed-to-seed variation.\n" % len(seeds))
    for a, dd in learned.items():
        seed_part = ""
        if len(seeds) > 1:
            per = [_seed_reward(r, "after") - _seed_reward(r, "before") for r in arms[a]]
            seed_part = "across seeds %s — %s; pooled rows " % (_t_text(per), _verdict(_t_tuple(per)))
        w("- `%s`: %s%s — %s.%s" % (a, seed_part, _signed_ci(dd), _verdict(dd),
                                    (" Other test metrics whose pooled Δ interval excludes 0: " + "; ".join(moved[a]) + ".") if moved.get(a) else ""))
    w("\n**On the training rollouts** (sampled at temperature %g; the executable verifier's reward, mean of the first five "
      "steps against the last five, per seed):\n" % cfg["temperature"])
    for a, rs in arms.items():
        per, acc, abst = [], [], []
        for r in rs:
            st = [x for x in r["steps"] if "monitor/e1/executable_reward" in x]
            if len(st) < 10:
                continue

            def ends(key):
                xs = [x.get(key, float("nan")) for x in st]
                return sum(xs[:5]) / 5, sum(xs[-5:]) / 5
            b, e = ends("monitor/e1/executable_reward")
            per.append(e - b)
            acc.append(ends("monitor/e1/solved"))
            abst.append(ends("monitor/e1/abstain_rate"))
        if not per:
            continue
        trend = (" across seeds %s — %s" % (_t_text(per), _verdict(_t_tuple(per)))) if len(per) > 1 else ""
        w("- `%s`: Δ %s%s; accuracy %.2f → %.2f, abstain rate %.2f → %.2f (means over seeds)." % (
            a, ", ".join("%+.3f" % x for x in per), trend, sum(x for x, _ in acc) / len(acc), sum(y for _, y in acc) / len(acc),
            sum(x for x, _ in abst) / len(abst), sum(y for _, y in abst) / len(abst)))
    w("\n**What the final policies write** (most frequent greedy answers to the test split, first seed):\n")
    for a, rs in arms.items():
        counts: dict[str, int] = {}
        for x in rs[0]["after"]:
            counts[x["completion"]] = counts.get(x["completion"], 0) + 1
        top = sorted(counts.items(), key=lambda kv: -kv[1])[:2]
        w("- `%s`: %s" % (a, "; ".join("`%s` ×%d" % (c[:90].replace("`", "'") + ("…" if len(c) > 90 else ""), n) for c, n in top)))
    # Each arm against the control from its own warm start.
    ctl_pairs = [(a, sibling(a, "random")) for a in arms if ARMS.get(a, ("",))[0] != "random" and sibling(a, "random") in arms]
    if ctl_pairs:
        w("\n**Against the random-reward control from the same warm start** (Δ of the arm − Δ of the control, resampling test examples):\n")
        for a, c in ctl_pairs:
            dd = _dd_diff(arms[a], arms[c], reps)
            w("- `%s` − `%s`: %s — %s." % (a, c, _signed_ci(dd), _verdict(dd)))
    L.extend(_attribution_section(arms, seeds, reps))
    if "grpo" in arms and "gdpo" in arms:
        w("\n**GDPO vs GRPO** (final test metrics, GDPO − GRPO, resampling test examples):\n")
        for m in ("reward", "accuracy", "ece", "cost_per_row"):
            dd = _final_diff(arms["gdpo"], arms["grpo"], stats.METRICS[m], reps)
            w("- %s: %s — %s." % (m, _signed_ci(dd), _verdict(dd)))
        if len(seeds) > 1:
            pairs = {r["seed"]: r for r in arms["grpo"]}
            per = [_seed_reward(r, "after") - _seed_reward(pairs[r["seed"]], "after") for r in arms["gdpo"] if r["seed"] in pairs]
            w("- reward across seeds (per seed %s): %s — %s." % (", ".join("%+.3f" % x for x in per), _t_text(per), _verdict(_t_tuple(per))))
        auc = {a: _auc(arms[a]) for a in ("grpo", "gdpo")}
        w("- mean executable training reward over all steps (area under the curve per step): GRPO %s, GDPO %s." % (_fmt(auc["grpo"]), _fmt(auc["gdpo"])))
    adv = _advantage_reports(out, arms)
    if adv:
        w("\n**Where the signal goes** (`svbench advantages` on every training rollout of the executable arms, "
          "groups = one prompt's G rollouts at one step; mean over seeds):\n")
        w("| arm | groups | summed reward constant | constant sum, a component varies | collapsed: GRPO (group std) | collapsed: GDPO | recorded advantages reproduced by |")
        w("|---|---:|---:|---:|---:|---:|---|")
        for a, reps_ in adv.items():
            def mean(f):
                return sum(f(d) for d in reps_) / len(reps_)
            repro = sorted({n for d in reps_ for n in ((d.get("recorded") or {}).get("reproduced_by") or [])})
            every = all((d.get("recorded") or {}).get("reproduced_by") for d in reps_)
            w("| %s | %d | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %s |" % (
                a, sum(d["groups"] for d in reps_) // len(reps_), 100 * mean(lambda d: d["zero_variance"]["reward"]),
                100 * mean(lambda d: d["zero_variance"]["reward_constant_component_varies"]),
                100 * mean(lambda d: d["schemes"]["grpo_std"]["collapsed_group_share"]),
                100 * mean(lambda d: d["schemes"]["gdpo"]["collapsed_group_share"]),
                (", ".join(repro) + ("" if every else " (not every seed)")) if repro else "none"))
        w("\nA group whose summed reward is constant teaches GRPO nothing; GDPO's per-component normalisation keeps a "
          "group whose sum is constant while a component varies. Per-component zero-variance shares are in "
          "`%s/advantages/<run>/advantages.md`.\n" % os.path.join("train", os.path.relpath(out, os.path.dirname(os.path.abspath(path)))))
    for rm_arm in [a for a in arms if ARMS.get(a, ("",))[0] == "learned_rm"]:
        L.extend(_rm_section(out, arms, rm_arm, seeds, reps))
    # svbench study
    studies = sorted(glob.glob(os.path.join(out, "study-*s*", "stdout.txt")))
    if studies:
        w("\n## `svbench study` on the runs\n")
        w("svbench's own cross-scoring of each warm start's RL arms' final test answers (`svbench study ARMS --control RANDOM --rubric default`): "
          "the reward each arm trained on as recorded, the executable verifier's re-score, gaps with problem-resampling intervals.\n")
        for p in studies:
            with open(p) as f:
                # The generating machine's paths say nothing to a reader.
                txt = f.read().strip().replace(out + os.sep, "").replace(out, ".")
            w("%s:\n\n```\n%s\n```\n" % (os.path.basename(os.path.dirname(p)), txt))
    if dev_log and os.path.exists(dev_log):
        L.extend(_dev_section(dev_log))
    w("\n## Reproduce\n")
    if info.get("argv"):
        import shlex

        w("This run:\n\n```sh\n/usr/bin/python3 train/run.py %s\n```\n" % shlex.join(info["argv"]))
    w("```sh\nmake train-demo                                   # every arm, three seeds, then RESULTS.md\n"
      "make train-demo TRAIN_ARGS='--seeds 1'             # one seed\n"
      "svbench report train/out/demo/runs/grpo-s1 --rubric default           # curves from metrics_raw.json, final answers re-scored\n"
      "svbench report train/out/demo/runs/grpo-s1/rollouts --rubric default  # per-step curves from the rollout rows\n"
      "svbench study train/out/demo/runs/{grpo,gdpo,rm}-s1 --control train/out/demo/runs/random-s1 --rubric default --out study\n```\n")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print("svtrain: wrote %s" % path)


def _rm_section(out: str, arms: dict, rm_arm: str, seeds: list[int], reps: int) -> list[str]:
    """What a learned reward model paid against what the verifier pays, on
    the answers of the arm trained on it, and that arm against executable
    GRPO from the same warm start."""
    L: list[str] = []
    w = L.append
    w("\n**The learned reward model's hacking gap (`%s`)** — on its final test answers, what the RM pays minus what the verifier pays "
      "(paired by answer):\n" % rm_arm)
    rows = [(fr["reward"], _exec_total(fr)) for r in arms[rm_arm] for fr in r["final_rows"]]
    gap = stats.bootstrap(rows, lambda rr: sum(x - y for x, y in rr) / len(rr), reps, 5)
    w("- RM reward %s vs executable %s: gap %s — %s." % (
        _ci(stats.bootstrap(rows, lambda rr: sum(x for x, _ in rr) / len(rr), reps, 6)),
        _ci(stats.bootstrap(rows, lambda rr: sum(y for _, y in rr) / len(rr), reps, 7)), _signed_ci(gap), _verdict(gap)))
    if len(seeds) > 1:
        per = [sum(fr["reward"] - _exec_total(fr) for fr in r["final_rows"]) / len(r["final_rows"]) for r in arms[rm_arm]]
        w("- gap across seeds (per seed %s): %s — %s." % (", ".join("%+.3f" % x for x in per), _t_text(per), _verdict(_t_tuple(per))))
    first = [s for s in arms[rm_arm][0]["steps"] if "reward/e1/mean" in s]
    if first:
        g0 = [s["reward/e1/mean"] - s["monitor/e1/executable_reward"] for s in first]
        w("- during training (seed %d): RM − executable on the rollouts was %+.3f at the first step and %+.3f at the last (5-step means: %+.3f → %+.3f)." % (
            arms[rm_arm][0]["seed"], g0[0], g0[-1], sum(g0[:5]) / len(g0[:5]), sum(g0[-5:]) / len(g0[-5:])))
    fit_p = os.path.join(out, "seed%d" % arms[rm_arm][0]["seed"], "rm_fit.json")
    if os.path.exists(fit_p):
        with open(fit_p) as f:
            fit = json.load(f)
        w("- the RM's fit before RL (%d labelled answers; held-out prompts): RMSE %s, pairwise ranking accuracy %s." % (
            fit.get("labelled_answers", 0), _fmt((fit.get("held_out") or {}).get("rmse")), _fmt(fit.get("held_out_pairwise_accuracy"))))
    for exe in [e for e in arms if ARMS.get(e, ("",))[0] == "executable" and start_of(e) == start_of(rm_arm)]:
        dd = _final_diff(arms[rm_arm], arms[exe], stats.mean_reward, reps)
        w("- final executable test reward, `%s` − `%s`: %s — %s." % (rm_arm, exe, _signed_ci(dd), _verdict(dd)))
    w("")
    return L


def _attribution_section(arms: dict, seeds: list[int], reps: int) -> list[str]:
    """Each RL arm against distillation from its own warm start on the same
    number of answers: what the reward taught beyond what imitating the
    teacher for the same budget teaches."""
    L: list[str] = []
    w = L.append
    pairs = [(a, sibling(a, "distill")) for a in arms
             if ARMS.get(a, ("",))[0] in ("executable", "learned_rm") and sibling(a, "distill") in arms]
    if not pairs:
        return L
    w("\n**Against distillation from the same warm start** (final test answers, the arm − the teacher distilled for as many "
      "answers as the arm sampled; pooled rows resampled, then t over seeds paired by seed):\n")
    for a, dist in pairs:
        parts = []
        for name, f in (("reward", stats.mean_reward), ("accuracy", stats.accuracy), ("abstain rate", stats.abstain_rate)):
            dd = _final_diff(arms[a], arms[dist], f, reps)
            by_seed = {r["seed"]: r for r in arms[dist]}
            per = [f([x["outcome"] for x in r["after"]]) - f([x["outcome"] for x in by_seed[r["seed"]]["after"]])
                   for r in arms[a] if r["seed"] in by_seed]
            parts.append("%s %s%s" % (name, _signed_ci(dd), (", across seeds %s" % _t_text(per)) if len(per) > 1 else ""))
        w("- `%s` − `%s`: %s." % (a, dist, "; ".join(parts)))
    return L


def _learned_section(out: str, arms: dict, seeds: list[int], reps: int) -> list[str]:
    """Did an arm learn the task (issue #42)? Four tests, each stated with
    its numbers: accuracy and reward gains over the arm's own start with
    seed-level intervals above 0; a margin over the best constant answer
    whose interval excludes 0; and answers that depend on the input (no
    single label on more than the majority label's share of test rows)."""
    L: list[str] = []
    w = L.append
    cpath = os.path.join(out, "constant_answers.json")
    const = None
    if os.path.exists(cpath):
        with open(cpath) as f:
            const = json.load(f)["best"]
    w("## Did it learn?\n")
    w("An arm learned the task when, on the test split, (1) its accuracy and (2) its reward rose over its own start with "
      "an interval above 0 (t over seeds; with one seed, test rows resampled), (3) it beat the best *constant* answer%s by "
      "a margin whose interval excludes 0 (test rows resampled, seeds pooled), and (4) its answers depend on the input: no "
      "label on more than the majority gold label's share of rows.\n" % (
          " (`%s`, reward %.3f)" % (const["answer"], const["reward"]) if const else ""))
    w("| arm | Δ accuracy | Δ reward | after − best constant | largest label share (majority gold share) | learned? |")
    w("|---|---|---|---|---|---|")
    for a, rs in arms.items():
        def delta(f, r):
            return f([x["outcome"] for x in r["after"]]) - f([x["outcome"] for x in r["before"]])

        checks = []
        cells = []
        for f in (stats.accuracy, stats.mean_reward):
            per = [delta(f, r) for r in rs]
            if len(per) > 1:
                m, lo, hi = stats.t_interval(per)
                cells.append("%+.3f [%+.3f, %+.3f]" % (m, lo, hi))
                checks.append(lo > 0)
            else:
                t_ = stats.paired_diff([x["outcome"] for x in rs[0]["before"]], [x["outcome"] for x in rs[0]["after"]], f, reps)
                cells.append(_signed_ci(t_))
                checks.append(t_[1] > 0)
        if const:
            by_id = dict(zip(const["example_ids"], const["rows"]))
            diffs = [x["outcome"]["reward"] - by_id[x["example_id"]] for r in rs for x in r["after"] if x.get("example_id") in by_id]
            t_ = stats.bootstrap(diffs, lambda v: sum(v) / len(v) if v else float("nan"), reps, 5)
            cells.append(_signed_ci(t_))
            checks.append(t_[1] > 0)
        else:
            cells.append("n/a")
        shares = []
        for r in rs:
            golds: dict[str, int] = {}
            for x in r["after"]:
                golds[str(x["gold"])] = golds.get(str(x["gold"]), 0) + 1
            n = len(r["after"])
            shares.append((max(_label_counts(r["after"]).values()) / n, max(golds.values()) / n))
        top = max(s_ for s_, _ in shares)
        maj = max(m_ for _, m_ in shares)
        cells.append("%.2f (%.2f)" % (top, maj))
        checks.append(top <= maj)
        w("| %s | %s | %s |" % (a, " | ".join(cells), "**yes**" if all(checks) and len(checks) == 4 else "no"))
    w("")
    return L


def _advantage_reports(out: str, arms: dict) -> dict:
    """advantages.json of each executable arm's runs, by arm."""
    got: dict = {}
    for a in [x for x in arms if ARMS.get(x, ("",))[0] == "executable"]:
        for r in arms.get(a, []):
            p = os.path.join(out, "advantages", "%s-s%d" % (a, r["seed"]), "advantages.json")
            if os.path.exists(p):
                with open(p) as f:
                    got.setdefault(a, []).append(json.load(f))
    return got


def _exec_total(row) -> float:
    m = row["metrics"]
    return m["executable_total"] if "executable_total" in m else m["monitor_executable_reward"]  # runs before the rename


def _seed_reward(run, which):
    xs = [x["outcome"]["reward"] for x in run[which]]
    return sum(xs) / len(xs)


def _t_tuple(xs):
    m, lo, hi = stats.t_interval(xs)
    return (m, lo if lo is not None else float("nan"), hi if hi is not None else float("nan"))


def _t_text(xs):
    m, lo, hi = stats.t_interval(xs)
    if lo is None:
        return "%+.3f" % m
    return "%+.3f [%+.3f, %+.3f] (t, %d seeds)" % (m, lo, hi, len(xs))


def _dur(s):
    if s is None:
        return "n/a"
    return "%dm%02ds" % (int(s) // 60, int(s) % 60)


def _auc(runs):
    xs = [s["monitor/e1/executable_reward"] for r in runs for s in r["steps"] if "monitor/e1/executable_reward" in s]
    return sum(xs) / len(xs) if xs else float("nan")


def _final_diff(a_runs, b_runs, f, reps):
    """f(final answers of a) − f(final answers of b), resampling each side."""
    a = [x["outcome"] for r in a_runs for x in r["after"]]
    b = [x["outcome"] for r in b_runs for x in r["after"]]
    rng = random.Random(11)
    point = f(a) - f(b)
    vals = sorted(f([a[rng.randrange(len(a))] for _ in a]) - f([b[rng.randrange(len(b))] for _ in b]) for _ in range(reps))
    vals = [v for v in vals if not math.isnan(v)]
    if not vals:  # undefined on every resample (e.g. ECE when nothing was decided)
        return point, float("nan"), float("nan")
    return point, vals[int(0.025 * len(vals))], vals[min(len(vals) - 1, int(0.975 * len(vals)))]


def _dd_diff(a_runs, b_runs, reps):
    """(after − before) of a − (after − before) of b in mean reward, resampling examples."""
    def deltas(rs):
        return [x["outcome"]["reward"] - y["outcome"]["reward"] for r in rs for x, y in zip(r["after"], r["before"])]
    a, b = deltas(a_runs), deltas(b_runs)
    rng = random.Random(12)
    m = lambda v: sum(v) / len(v)  # noqa: E731
    vals = sorted(m([a[rng.randrange(len(a))] for _ in a]) - m([b[rng.randrange(len(b))] for _ in b]) for _ in range(reps))
    return m(a) - m(b), vals[int(0.025 * len(vals))], vals[min(len(vals) - 1, int(0.975 * len(vals)))]
