"""Each arm is compared with the control, the judge and the distillation
baseline from its own warm start, never with another start's.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain import results  # noqa: E402
from svtrain.arms import ARMS, from_format, sibling, start_of  # noqa: E402


def run(seed: int, reward: float, correct: bool, n: int = 20) -> dict:
    out = {"reward": reward, "correct": correct, "abstain": False, "decided": True}
    return {"seed": seed, "after": [{"outcome": dict(out)} for _ in range(n)]}


class TestSiblings(unittest.TestCase):
    def test_every_arm_has_its_starts_controls(self):
        for arm in ARMS:
            for role in ("random", "rm", "distill"):
                with self.subTest(arm=arm, role=role):
                    s = sibling(arm, role)
                    self.assertIn(s, ARMS)
                    self.assertEqual(start_of(s), start_of(arm))
        self.assertEqual(sibling("format_gdpo", "distill"), "format_distill")
        self.assertEqual(sibling("gdpo", "random"), "random")
        self.assertTrue(from_format("format"))
        self.assertFalse(from_format("formatting"))  # not an arm, and not a format arm by accident

    def test_attribution_pairs_within_a_start(self):
        arms = {
            "gdpo": [run(1, 1.5, True), run(2, 1.5, True)],
            "format_gdpo": [run(1, 1.2, True), run(2, 1.4, True)],
            "format_distill": [run(1, 1.0, False), run(2, 1.0, False)],
        }
        text = "\n".join(results._attribution_section(arms, [1, 2], 200))
        self.assertIn("`format_gdpo` − `format_distill`: reward +0.300", text)
        self.assertIn("accuracy +1.000", text)
        # seed-paired t over +0.2 and +0.4
        self.assertIn("across seeds +0.300", text)
        # gdpo's start has no distillation arm here: no line for it
        self.assertNotIn("`gdpo` −", text)

    def test_no_distillation_no_section(self):
        self.assertEqual(results._attribution_section({"format": [run(1, 1.0, True)]}, [1], 100), [])


if __name__ == "__main__":
    unittest.main()
