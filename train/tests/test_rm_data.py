"""The learned reward model's labelled set holds what a policy writes, not
only well-formed answers: degenerate variants (cut short, a tail repeated,
shuffled, bare labels, nothing), and its features tell an answer from the
same answer with a tail repeated.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import json
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain.rewards import candidate_answers, completion_features, degenerate_answers  # noqa: E402


def well_formed(text: str) -> bool:
    try:
        d = json.loads(text)
    except ValueError:
        return False
    return isinstance(d, dict) and set(d) == {"label", "confidence"}


class DegenerateAnswersTest(unittest.TestCase):
    def test_variants(self):
        valid = candidate_answers(random.Random(1))
        got = degenerate_answers(random.Random(7), valid, n=400)
        self.assertEqual(got, degenerate_answers(random.Random(7), valid, n=400), "seeded: the same set every run")
        self.assertEqual(len(got), 400)
        malformed = [g for g in got if not well_formed(g)]
        self.assertGreater(len(malformed), 300, "nearly all variants are not the answer format")
        self.assertIn("", got)
        self.assertTrue(any(g.endswith("}}}}") for g in got), "a repeated closing tail (the RM arm's hack)")
        self.assertTrue(any(g.count('"confidence"') >= 3 for g in got), "a repeated key")

    def test_features_see_a_repeated_tail(self):
        v = '{"label": "Benign", "confidence": 0.9}'
        self.assertNotEqual(sorted(completion_features(v)), sorted(completion_features(v + "}" * 12)))
        self.assertEqual(completion_features(""), ["c:<empty>"])


if __name__ == "__main__":
    unittest.main()
