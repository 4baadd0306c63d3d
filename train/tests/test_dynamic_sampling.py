"""Dynamic sampling (GRPOConfig.oversample, DAPO's filter) keeps the groups
whose reward varies, in draw order; GDPO's view also keeps a group whose sum
is constant while a component varies; too few varying groups are filled up
with constant ones so the batch keeps its shape.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain.loop import informative_groups  # noqa: E402


def sc(acc, fmt):
    return {"reward": acc + fmt, "components": {"accuracy": acc, "format": fmt}}


class InformativeGroupsTest(unittest.TestCase):
    def test_cases(self):
        G = 2
        const = [sc(1, 0), sc(1, 0)]          # sum 1, nothing varies
        varies = [sc(1, 0), sc(0, 0)]         # sum varies
        swap = [sc(1, 0), sc(0, 1)]           # sum constant, components vary
        cases = [
            # name, groups, want, multi, kept, informative
            ("varying first, in draw order", [const, varies, const, varies], 2, False, [1, 3], 2),
            ("filled with constant groups", [const, varies, const, const], 2, False, [0, 1], 1),
            ("summed view drops a component swap", [swap, const, varies], 1, False, [2], 1),
            ("GDPO view keeps a component swap", [swap, const, varies], 2, True, [0, 2], 2),
            ("more vary than wanted: the first ones", [varies, varies, varies], 2, False, [0, 1], 3),
            ("none vary", [const, const], 1, True, [0], 0),
        ]
        for name, groups, want, multi, kept, n in cases:
            with self.subTest(name):
                scores = [s for g in groups for s in g]
                rewards = [s["reward"] for s in scores]
                got, informative = informative_groups(rewards, scores, ["accuracy", "format"], G, want, multi)
                self.assertEqual(got, kept)
                self.assertEqual(informative, n)


if __name__ == "__main__":
    unittest.main()
