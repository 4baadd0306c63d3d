"""Rewards that are not finite numbers never reach the advantages.

The executable verifier's answer arrives through a client; whatever that
client lets through (NaN, Infinity, strings, a missing reward, a results list
of the wrong length), svtrain's Executable makes a non-finite item a failed
one (reward 0, counted in score_errors) and refuses a count mismatch. Any
other reward source (the learned reward model) that yields NaN or Infinity
stops the run at the advantage computation instead of training on it.

    /usr/bin/python3 -m pytest -q train/tests/test_rewards_finite.py
    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import math
import os
import sys
import unittest

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "clients", "python"))

from svbench import SvbenchError  # noqa: E402
from svtrain import loop  # noqa: E402
from svtrain.rewards import Executable  # noqa: E402

ENVS = [{"id": "network-logs", "aliases": ["e1"], "default_rubric": "default",
         "rubric_info": [{"name": "default", "total_min": 0, "total_max": 1.5, "components": [
             {"name": "accuracy", "weight": 1, "min": 0, "max": 1},
             {"name": "format", "weight": 0.5, "min": 0, "max": 1}]}]}]

GOOD = {"reward": 1.5, "components": {"accuracy": 1.0, "format": 1.0}, "parsed": {}, "solved": True}

# What a client other than svbench.Client, or an older one, may hand over.
BAD = {
    "nan": {"reward": float("nan"), "components": {"accuracy": 1.0}},
    "inf": {"reward": float("inf"), "components": {"accuracy": 1.0}},
    "minus_inf": {"reward": -float("inf"), "components": {"accuracy": 1.0}},
    "infinity_string": {"reward": "Infinity", "components": {"accuracy": 1.0}},
    "numeric_string": {"reward": "1.5", "components": {"accuracy": 1.0}},
    "boolean": {"reward": True, "components": {"accuracy": 1.0}},
    "none": {"reward": None, "components": {"accuracy": 1.0}},
    "missing": {"components": {"accuracy": 1.0}},
    "component_nan": {"reward": 1.5, "components": {"accuracy": float("nan"), "format": 1.0}},
}


class FakeClient:
    def __init__(self):
        self.results = []

    def environments_cached(self):
        return ENVS

    def score(self, items):
        return list(self.results)


class ExecutableTest(unittest.TestCase):
    def setUp(self):
        self.client = FakeClient()
        self.ex = Executable(self.client, "e1")

    def test_non_finite_or_missing_reward_is_a_failed_item(self):
        for name, bad in BAD.items():
            with self.subTest(name):
                self.client.results = [dict(GOOD), dict(bad)]
                out = self.ex.score(["a", "b"], ["Benign", "Benign"])
                self.assertEqual(out[0]["reward"], 1.5)
                self.assertEqual(out[1]["reward"], 0.0)
                self.assertEqual(out[1]["components"], {})
                self.assertTrue(out[1].get("error"), out[1])
                for r in out:
                    self.assertTrue(math.isfinite(r["reward"]))
                    self.assertTrue(all(math.isfinite(v) for v in r["components"].values()))

    def test_count_mismatch_refused(self):
        self.client.results = [dict(GOOD)] * 3
        with self.assertRaises(SvbenchError) as cm:
            self.ex.score(["a"], ["Benign"])
        self.assertEqual(cm.exception.code, "result_count_mismatch")
        self.client.results = []
        with self.assertRaises(SvbenchError):
            self.ex.score(["a", "b"], ["Benign", "Benign"])


class AdvantagesRefuseNonFiniteTest(unittest.TestCase):
    W = {"accuracy": 1.0, "format": 0.5}

    def test_grpo(self):
        self.assertTrue(torch.isfinite(loop.advantages("grpo", torch.tensor([[0.0, 1.0, 0.5]]), None, None)).all())
        for bad in (float("nan"), float("inf"), -float("inf")):
            with self.subTest(bad):
                r = torch.tensor([[0.0, 1.0, bad], [1.0, 0.0, 1.0]])
                with self.assertRaises(ValueError) as cm:
                    loop.advantages("grpo", r, None, None)
                self.assertIn("not finite", str(cm.exception))

    def test_gdpo_component(self):
        comps = {"accuracy": torch.tensor([[0.0, 1.0, float("nan")]]), "format": torch.tensor([[1.0, 1.0, 1.0]])}
        with self.assertRaises(ValueError) as cm:
            loop.advantages("gdpo", torch.tensor([[0.5, 1.5, 0.5]]), comps, self.W)
        self.assertIn("accuracy", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
