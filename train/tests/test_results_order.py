"""The teacher's test-split figures do not depend on the order its eval
wrote its rows in (episodes finish in a different order every run).

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from svtrain import results, stats  # noqa: E402


class FakeExecutable:
    """Scores an answer 1 when its label is the gold one, as /v1/score's
    result shape has it."""

    def score(self, texts, answers, example_ids=None):
        out = []
        for t, a in zip(texts, answers):
            label = json.loads(t)["label"]
            out.append({"reward": 1.0 if label == a else 0.0,
                        "parsed": {"predicted_label": label, "confidence": 0.8, "confidence_valid": True}})
        return out


class TestBaselineOrder(unittest.TestCase):
    def test_same_rows_any_order(self):
        rng = random.Random(7)
        rows = []
        for i in range(60):
            gold = rng.choice(["Benign", "Malicious"])
            said = gold if rng.random() < 0.7 else ("Benign" if gold == "Malicious" else "Malicious")
            rows.append({"index": i, "rollout": 0, "example_id": "ex-%d" % i, "answer": gold,
                         "final_text": json.dumps({"label": said})})
        got = []
        for order in range(3):
            shuffled = rows[:]
            random.Random(order).shuffle(shuffled)
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "results.jsonl"), "w") as f:
                    for r in shuffled:
                        f.write(json.dumps(r) + "\n")
                scored = results.score_baseline(d, FakeExecutable())
            got.append((scored, stats.bootstrap([s["outcome"] for s in scored], stats.mean_reward, 200, 4)))
        self.assertEqual([s["example_id"] for s in got[0][0]], ["ex-%d" % i for i in range(60)])
        for other in got[1:]:
            self.assertEqual(other, got[0])


if __name__ == "__main__":
    unittest.main()
