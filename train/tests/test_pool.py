"""--train-generate's pool: the generator's train rows less every row whose
prompt is a held-out (embedded dev or test) prompt up to numbers, case and
spacing, the rule the embedded splits and `svbench data overlap` apply
(dataset/integrity.Normalise); dev and test are the embedded rows as served.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    from svtrain import cli
except ImportError as err:  # torch missing: the other train tests say so too
    cli = None
    IMPORT_ERROR = err


def served(eid, question, answer, ambiguous=False):
    return {"example_id": eid, "prompt": [{"role": "system", "content": "sys"}, {"role": "user", "content": question}],
            "answer": answer, "meta": {"ambiguous": ambiguous}}


@unittest.skipIf(cli is None, "svtrain does not import here (torch?)")
class GeneratedPoolTest(unittest.TestCase):
    def test_near_form_is_integritys_normalise(self):
        # the cases of dataset/integrity's TestNormalise
        for text, want in {
            "Device  X observed tcp 6662→62336": "device x observed tcp 0→0",
            "  a\t\nB 12.5 ": "a b 0.0",
            "": "",
        }.items():
            self.assertEqual(cli.near_form(text), want, text)

    def test_pool_drops_near_copies_of_held_out_prompts(self):
        splits = {
            "dev": [served("dev-1", "flow to 10.0.0.1 port 443", "Benign")],
            "test": [served("synth-t", "Flow from 9.9.9.9 FAILED 12", "Malicious", True)],
        }
        generated = [
            {"id": "g1", "question": "flow to 10.2.3.4 port 8443", "answer": "Benign", "meta": {}},  # dev's form
            {"id": "g2", "question": "flow  from 1.1.1.1 failed 3", "answer": "Malicious", "meta": {}},  # test's form
            {"id": "g3", "question": "flow to host port 443", "answer": "Benign", "meta": {}},
            {"id": "g4", "question": "a sweep of 20 ports", "answer": "Malicious", "meta": {}},
        ]
        with tempfile.TemporaryDirectory() as out:
            def fake_run(cmd):
                gen = cmd[cmd.index("--out") + 1]
                os.makedirs(gen)
                with open(os.path.join(gen, "train.jsonl"), "w") as f:
                    f.write("".join(json.dumps(r) + "\n" for r in generated))

            class FakeServer:
                url = "http://fake"

                def __init__(self, *a, **k):
                    pass

                def close(self):
                    pass

            a = argparse.Namespace(svbench="svbench", train_generate=10, train_generate_seed=1002)
            with mock.patch.object(cli, "run", fake_run), mock.patch.object(cli, "Server", FakeServer), \
                    mock.patch.object(cli, "Client", lambda *a, **k: None), \
                    mock.patch.object(cli.loop, "fetch_examples", lambda client, env, split: (splits[split], {})):
                d = cli.generated_pool(a, out)
                # a second call reuses the pool, whatever the generator would now say
                self.assertEqual(cli.generated_pool(a, out), d)

            def rows(split):
                with open(os.path.join(d, split + ".jsonl")) as f:
                    return [json.loads(l) for l in f]

            self.assertEqual([r["id"] for r in rows("train")], ["g3", "g4"])
            test = rows("test")
            self.assertEqual(test, [{"id": "synth-t", "question": "Flow from 9.9.9.9 FAILED 12", "answer": "Malicious",
                                     "meta": {"ambiguous": True, "split": "test"}}])
            self.assertEqual([(r["id"], r["meta"]["split"]) for r in rows("dev")], [("dev-1", "dev")])


if __name__ == "__main__":
    unittest.main()
