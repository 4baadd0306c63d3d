"""What a run writes, in the formats svbench reads (ingest/):

RUN/results.jsonl       the final policy's answers to the test split (greedy),
                        verifiers-style rows with ``step`` = the last step and
                        ``reward`` = the reward the arm trained on; what
                        ``svbench study`` cross-scores with the executable verifier
RUN/metrics_raw.json    per-step metrics, the hosted-training export's keys:
                        reward/e1/mean|min|max, metrics/e1/reward_<component>,
                        decode_len/e1/mean|min|max, time/step, eval/e1/avg@1 at
                        the first and last step (+ svtrain's own monitor/* keys)
RUN/run_manifest.json   model, dataset, seed, reward source, budget
RUN/rollouts/           every training rollout (results.jsonl, one row per
                        completion with its step, problem, sample, advantage),
                        with its own manifest: ``svbench report RUN/rollouts``
                        draws per-step curves with bootstrap bands from the rows
RUN/eval_before.jsonl, RUN/eval_after.jsonl, RUN/svtrain_summary.json
                        svtrain's own records (RESULTS.md is built from them)
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import subprocess
from dataclasses import asdict

from svtrain.stats import summarize


def _git_sha() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


class RunWriter:
    """resume: a ``state()`` from a checkpoint; the rollouts file is cut back
    to where that checkpoint was taken, so steps run after it and lost to a
    kill are not recorded twice."""

    def __init__(self, run_dir, cfg, executable, dataset: dict, env_info: dict, model_desc: str, resume: dict | None = None):
        self.dir = run_dir
        self.cfg = cfg
        self.ex = executable
        self.dataset = dataset or {}
        self.env_info = env_info
        self.model = model_desc
        self.env = cfg.env
        self.steps: dict[int, dict] = {}
        self.run_id = "svtrain-%s-s%d-%s" % (cfg.arm, cfg.seed, datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ"))
        os.makedirs(os.path.join(run_dir, "rollouts"), exist_ok=True)
        path = os.path.join(run_dir, "rollouts", "results.jsonl")
        self.evals: dict[str, list] = {}
        self.timing: list[dict] = []
        if resume is None:
            self.rollouts = open(path, "w")
            return
        self.run_id = resume["run_id"]
        self.steps = {int(k): v for k, v in resume["steps"].items()}
        self.timing = list(resume["timing"])
        self.evals = dict(resume["evals"])
        self.rollouts = open(path, "r+")
        self.rollouts.truncate(resume["rollouts_bytes"])
        self.rollouts.seek(resume["rollouts_bytes"])

    def state(self) -> dict:
        self.rollouts.flush()
        return {"run_id": self.run_id, "steps": self.steps, "timing": self.timing, "evals": self.evals,
                "rollouts_bytes": self.rollouts.tell()}

    def suspend(self) -> None:
        if not self.rollouts.closed:
            self.rollouts.close()

    # rows ---------------------------------------------------------------

    def _row(self, example, text, step, problem_id, sample_id, reward, score, advantage=None):
        comps = score.get("components") or {}
        metrics = {"reward_" + c: float(comps[c]) for c in self.ex.components if c in comps}
        # Not "…_reward": svbench's ingester reads such names as reward components.
        metrics["executable_total"] = float(score.get("reward", 0.0))
        row = {
            "prompt": example["prompt"],
            "completion": [{"role": "assistant", "content": text}],
            "answer": example.get("answer"),
            "example_id": example.get("example_id"),
            "step": step,
            "problem_id": problem_id,
            "sample_id": sample_id,
            "reward": reward,
            "metrics": metrics,
            "env_name": self.env,
            "run_id": self.run_id,
            "svbench_rubric": self.ex.rubric_name,
        }
        if advantage is not None:
            row["advantage"] = advantage
        return row

    def step(self, m, idx, exs, texts, golds, rewards, adv, scores):
        G = self.cfg.group
        for k, (text, r, a, s) in enumerate(zip(texts, rewards, adv, scores)):
            p = k // G
            self.rollouts.write(json.dumps(self._row(exs[p], text, m["step"], idx[p], k % G, r, s, a)) + "\n")
        self.rollouts.flush()
        e = "/" + self.env + "/"
        o = self.steps.setdefault(m["step"], {"step": m["step"]})
        lens = m["decode_len"]
        o.update({
            "reward" + e + "mean": _mean(rewards), "reward" + e + "min": min(rewards), "reward" + e + "max": max(rewards),
            "decode_len" + e + "mean": _mean(lens), "decode_len" + e + "min": min(lens), "decode_len" + e + "max": max(lens),
            "time/step": m["time"]["step"], "time/sample": m["time"]["sample"], "time/score": m["time"]["score"], "time/update": m["time"]["update"],
            "monitor" + e + "executable_reward": _mean(m["executable"]),
            "monitor" + e + "solved": m["solved"], "monitor" + e + "format_valid": m["format_valid"],
            "monitor" + e + "abstain_rate": m["abstain_rate"], "monitor" + e + "malicious_rate": m["malicious_rate"],
            "monitor/neg_logp_per_token": m["neg_logp_per_token"], "monitor/zero_adv_groups": m["zero_adv_groups"],
            "monitor/score_errors": m["score_errors"],
            "monitor/drawn_groups": m.get("drawn_groups", len(exs)), "monitor/informative_groups": m.get("informative_groups", len(exs)), "loss": m["loss"], "monitor/clip_frac": m["clip_frac"],
            "monitor/max_ratio_dev": m["ratio_dev"], "monitor/grad_norm": m["grad_norm"], "monitor/kl": m.get("kl", 0.0),
        })
        for c, v in m["components"].items():
            o["metrics" + e + "reward_" + c] = v
        self.timing.append(m["time"])

    def eval_records(self, which, step, ev, trained_rewards=None, test=None):
        self.evals[which] = ev
        with open(os.path.join(self.dir, "eval_%s.jsonl" % which), "w") as f:
            for r in ev:
                f.write(json.dumps(r) + "\n")
        e = "/" + self.env + "/"
        o = self.steps.setdefault(step, {"step": step})
        outs = [r["outcome"] for r in ev]
        o["eval" + e + "avg@1"] = _mean([x["reward"] for x in outs])
        o["eval" + e + "accuracy"] = _mean([1.0 if x["correct"] else 0.0 for x in outs])
        if trained_rewards is not None:
            with open(os.path.join(self.dir, "results.jsonl"), "w") as f:
                for r, tr in zip(ev, trained_rewards):
                    f.write(json.dumps(self._row(test[r["index"]], r["completion"], step, r["index"], 0, tr, r["score"])) + "\n")

    # manifests and summary ---------------------------------------------------

    def _manifest(self, split: str, results: str) -> dict:
        cfg = self.cfg
        rc = self.ex.rubric_name
        if cfg.reward != "executable":
            rc = cfg.reward
        return {
            "run_id": self.run_id,
            "git_sha": _git_sha(),
            "timestamp_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "environment_id": self.env_info.get("id", self.env),
            "environment_version": self.env_info.get("version", ""),
            "dataset_id": self.dataset.get("id", ""),
            "dataset_revision": self.dataset.get("revision", ""),
            "split": split,
            "model_id": self.model,
            "model_revision_or_digest": "",
            "sampling_params": {"temperature": cfg.temperature, "max_tokens": cfg.max_new, "n": cfg.group},
            "reward_config_id": rc,
            "reward_config_hash": hashlib.sha256(json.dumps({"rubric": self.ex.rubric_name, "weights": self.ex.weights, "source": cfg.reward}, sort_keys=True).encode()).hexdigest()[:16],
            "reward_source": cfg.reward,
            "seed": cfg.seed,
            "platform_mode": "local-cpu",
            "trainer": "svtrain-" + cfg.adv,
            "max_steps": cfg.steps,
            "rollouts_per_example": cfg.group,
            "max_tokens": cfg.max_new,
            "max_turns": 1,
            "tool_budget": 0,
            "budget_group": "svtrain-e1-P%d-G%d-T%d-S%d" % (cfg.prompts, cfg.group, cfg.max_new, cfg.steps),
            "input_artifacts": [],
            "output_artifacts": [results, "metrics_raw.json"],
            "metrics_summary_path": "",
            "results_jsonl_path": results,
            "metadata_json_path": "",
            "notes": "svtrain arm %s: reward %s, advantages %s%s, %d prompts x G=%d per step, lr %g, clip %g, ppo_epochs %d%s" % (
                cfg.arm, cfg.reward, cfg.adv, (" (scale_rewards=%s)" % cfg.scale) if cfg.adv == "grpo" else "", cfg.prompts, cfg.group, cfg.lr, cfg.clip, cfg.ppo_epochs,
                ("; " + "; ".join(cfg.notes)) if cfg.notes else ""),
        }

    def finish(self, seconds: float) -> dict:
        self.rollouts.close()
        steps = [self.steps[k] for k in sorted(self.steps)]
        for d, name in ((self.dir, "metrics_raw.json"), (os.path.join(self.dir, "rollouts"), "metrics_raw.json")):
            with open(os.path.join(d, name), "w") as f:
                json.dump({"metrics": steps}, f, indent=1)
        with open(os.path.join(self.dir, "run_manifest.json"), "w") as f:
            json.dump(self._manifest("test", "results.jsonl"), f, indent=2)
        with open(os.path.join(self.dir, "rollouts", "run_manifest.json"), "w") as f:
            json.dump(self._manifest("train", "results.jsonl"), f, indent=2)
        summary = {
            "run_id": self.run_id,
            "config": asdict(self.cfg),
            "model": self.model,
            "rubric": self.ex.rubric_name,
            "weights": self.ex.weights,
            "seconds": seconds,
            "mean_step_seconds": {k: _mean([t[k] for t in self.timing]) for k in ("step", "sample", "score", "update")} if self.timing else {},
            "eval": {k: {m: list(v) for m, v in summarize([r["outcome"] for r in ev], reps=0).items()} for k, ev in self.evals.items()},
            "score_calls": self.ex.calls,
        }
        with open(os.path.join(self.dir, "svtrain_summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
        return summary
