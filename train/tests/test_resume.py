"""A killed GRPO run resumes to the uninterrupted run's result.

The verifier here is a local rule (the loop's scoring goes over HTTP in the
smoke test); what is under test is the loop's state: weights, optimiser,
every random stream, the prompt order and the run files. On CPU the
resumed run must equal the uninterrupted one row for row.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain import loop  # noqa: E402
from svtrain.policy import TinyPolicy  # noqa: E402
from svtrain.tokenizer import Tokenizer  # noqa: E402

from test_policy import ANSWERS, CHATS, HF_READY, ScratchHF  # noqa: E402


class Crash(Exception):
    pass


class LocalVerifier:
    """Pays a gold label named in the answer, and well-formed JSON; raises on
    call crash_at (the process dying mid-step)."""

    rubric_name = "local"
    components = ["accuracy", "format"]
    weights = {"accuracy": 1.0, "format": 0.1}

    def __init__(self, crash_at: int = 0):
        self.calls = 0
        self.crash_at = crash_at

    def score(self, texts, golds, example_ids=None):
        self.calls += 1
        if self.calls == self.crash_at:
            raise Crash()
        out = []
        for t, g in zip(texts, golds):
            try:
                ok = isinstance(json.loads(t), dict)
            except ValueError:
                ok = False
            acc = 1.0 if g in t else 0.0
            out.append({"reward": acc + 0.1 * ok, "components": {"accuracy": acc, "format": float(ok)}, "parsed": {}})
        return out


def examples(n, prefix):
    labels = ["Benign", "Malicious"]
    return [{"example_id": "%s%d" % (prefix, i), "prompt": CHATS[i % len(CHATS)], "answer": labels[i % 2]} for i in range(n)]


def policy():
    texts = [c[-1]["content"] for c in CHATS]
    return TinyPolicy.new(Tokenizer.fit(texts + ANSWERS, min_count=1, prompts=texts), "test", seed=0)


def read_rows(path, drop=("run_id",)):
    with open(path) as f:
        return [{k: v for k, v in json.loads(l).items() if k not in drop} for l in f]


def read_metrics(run):
    with open(os.path.join(run, "metrics_raw.json")) as f:
        return [{k: v for k, v in m.items() if not k.startswith("time/")} for m in json.load(f)["metrics"]]


class ResumeTest(unittest.TestCase):
    def policy(self):
        return policy()

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.train, self.test = examples(10, "t"), examples(4, "x")

    def tearDown(self):
        self.tmp.cleanup()

    def run_arm(self, name, arm="grpo", crash_at=0, stop_after=0):
        # "dapo": GRPO with dynamic sampling (3 × the prompts drawn a step).
        # "kl": GRPO on coin-flip rewards (so every step updates), scaled by the
        # step's std, with a KL penalty to the warm start.
        reward, adv = {"grpo": ("executable", "grpo"), "gdpo": ("executable", "gdpo"), "random": ("random", "grpo"),
                       "dapo": ("executable", "grpo"), "kl": ("random", "grpo")}[arm]
        cfg = loop.GRPOConfig(arm=arm, reward=reward, adv=adv, steps=5, prompts=2, group=3, max_new=6, seed=3, checkpoint_every=2,
                              oversample=3 if arm == "dapo" else 1, kl=0.5 if arm == "kl" else 0.0, scale="batch" if arm == "kl" else "group")
        d = os.path.join(self.tmp.name, name)
        return d, loop.grpo(self.policy(), cfg, self.train, self.test, LocalVerifier(crash_at), d, {}, log=lambda *_: None, stop_after=stop_after,
                            ref=self.policy() if arm == "kl" else None)

    def assertSameRun(self, a, b):
        self.assertEqual(read_rows(os.path.join(a, "rollouts", "results.jsonl")), read_rows(os.path.join(b, "rollouts", "results.jsonl")))
        self.assertEqual(read_metrics(a), read_metrics(b))
        self.assertEqual(read_rows(os.path.join(a, "results.jsonl")), read_rows(os.path.join(b, "results.jsonl")))
        self.assertFalse(os.path.exists(os.path.join(b, loop.CHECKPOINT)), "a finished run keeps its checkpoint")

    def test_killed_mid_step_resumes_to_the_same_run(self):
        for arm in ("grpo", "gdpo", "random", "dapo", "kl"):
            with self.subTest(arm=arm):
                whole, _ = self.run_arm(arm + "-whole", arm)
                # Calls: 1 before-evaluation, then one per step: the 5th is step
                # 4 of 5, after the checkpoint at step 2 and step 3's rows.
                with self.assertRaises(Crash):
                    self.run_arm(arm + "-killed", arm, crash_at=5)
                killed = os.path.join(self.tmp.name, arm + "-killed")
                with open(os.path.join(killed, "rollouts", "results.jsonl")) as f:
                    self.assertEqual(len(f.readlines()), 3 * 2 * 3, "steps 1-3 were written before the kill")
                _, summary = self.run_arm(arm + "-killed", arm)
                self.assertIsNotNone(summary)
                self.assertSameRun(whole, killed)

    def test_stop_after_steps_then_resume(self):
        whole, _ = self.run_arm("whole")
        d, out = self.run_arm("sliced", stop_after=3)
        self.assertIsNone(out)
        self.assertTrue(os.path.exists(os.path.join(d, loop.CHECKPOINT)))
        d, out = self.run_arm("sliced", stop_after=1)
        self.assertIsNone(out)
        _, out = self.run_arm("sliced")
        self.assertIsNotNone(out)
        self.assertSameRun(whole, d)

    def test_dynamic_sampling_trains_on_the_groups_that_vary(self):
        d, _ = self.run_arm("dapo", "dapo")
        rows = read_rows(os.path.join(d, "rollouts", "results.jsonl"))
        self.assertEqual(len(rows), 5 * 2 * 3, "the rollout rows are the kept groups: prompts × G a step")
        for m in read_metrics(d):
            if "monitor/drawn_groups" in m:
                self.assertEqual(m["monitor/drawn_groups"], 6)
                self.assertLessEqual(m["monitor/informative_groups"], 6)

    def test_kl_to_the_warm_start(self):
        # The first step samples from the warm start itself: its KL is 0 to
        # float precision; the updates then move the policy away from it.
        d, _ = self.run_arm("kl", "kl")
        kls = [m["monitor/kl"] for m in read_metrics(d) if "monitor/kl" in m]
        self.assertEqual(len(kls), 5, read_metrics(d)[0].keys())
        self.assertAlmostEqual(kls[0], 0.0, places=6)
        self.assertGreater(max(kls[1:]), 1e-6)
        cfg = loop.GRPOConfig(arm="grpo", steps=1, prompts=2, group=3, max_new=6, seed=3, kl=0.1)
        with self.assertRaises(ValueError):
            loop.grpo(self.policy(), cfg, self.train, self.test, LocalVerifier(), os.path.join(self.tmp.name, "noref"), {}, log=lambda *_: None)

    def test_other_settings_are_refused(self):
        d, _ = self.run_arm("x", stop_after=2)
        cfg = loop.GRPOConfig(arm="grpo", steps=5, prompts=2, group=3, max_new=6, seed=3, lr=1e-3)
        with self.assertRaises(SystemExit) as e:
            loop.grpo(self.policy(), cfg, self.train, self.test, LocalVerifier(), d, {}, log=lambda *_: None)
        self.assertIn("lr", str(e.exception))


@unittest.skipUnless(HF_READY, "transformers and tokenizers are not installed (the --hf-model path; a GPU machine has them)")
class HFResumeTest(ScratchHF, ResumeTest):
    """The same on a from-scratch Hugging Face model, on the GPU where there
    is one (CUDA's random stream is in the checkpoint too)."""

    def policy(self):
        return self.hf_policy()


if __name__ == "__main__":
    unittest.main()
