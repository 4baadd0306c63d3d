"""Tests for svbench_client against a live `svbench serve`.

Run by the Go test server.TestPythonClient, which starts the server and sets
SVBENCH_URL (and SVBENCH_TOKEN); skipped when SVBENCH_URL is unset:

    SVBENCH_URL=http://127.0.0.1:8080 python3 -m unittest test_svbench_client
"""

import asyncio
import importlib.util
import json
import os
import unittest
import warnings

import svbench_client as sv

ENV = os.environ.get("SVBENCH_TEST_ENV", "e1")


def e1_answers(answer):
    wrong = "Benign" if answer == "Malicious" else "Malicious"
    right = json.dumps({"label": answer, "confidence": 0.9})
    bad = json.dumps({"label": wrong, "confidence": 0.9})
    return right, bad


@unittest.skipUnless(os.environ.get("SVBENCH_URL"), "SVBENCH_URL not set: start `svbench serve` first")
class LiveServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client = sv.Client(batch_size=7)
        page = cls.client.examples(ENV, limit=20, seed=3)
        cls.examples = page["examples"]

    def test_environments(self):
        envs = self.client.environments()
        ids = [e["id"] for e in envs]
        self.assertIn("network-logs", ids)
        e1 = envs[ids.index("network-logs")]
        self.assertTrue(e1["system_prompt"])
        self.assertIn("default", e1["rubrics"])

    def test_examples_are_trainer_ready(self):
        self.assertEqual(len(self.examples), 20)
        ex = self.examples[0]
        self.assertEqual(ex["prompt"][0]["role"], "system")
        self.assertTrue(ex["example_id"])
        again = self.client.examples("sv-env-network-logs", limit=20, seed=3)["examples"]
        self.assertEqual([e["example_id"] for e in again], [e["example_id"] for e in self.examples])

    def test_score_batches_and_orders(self):
        items = []
        for ex in self.examples:
            right, bad = e1_answers(ex["answer"])
            items.append(sv.make_item(ENV, right, example_id=ex["example_id"]))
            items.append(sv.make_item(ENV, bad, example_id=ex["example_id"]))
        results = self.client.score(items)  # 40 items in batches of 7
        self.assertEqual(len(results), 40)
        for i in range(0, 40, 2):
            self.assertIsNone(results[i].get("error"))
            self.assertGreater(results[i]["reward"], results[i + 1]["reward"])
            self.assertIn("accuracy", results[i]["components"])

    def test_verifiers_reward(self):
        f = sv.verifiers_reward(ENV, client=self.client)
        ex = self.examples[0]
        right, bad = e1_answers(ex["answer"])
        by_answer = f(right, ex["answer"])
        by_id = f([{"role": "assistant", "content": right}], None, info={"example_id": ex["example_id"]})
        self.assertEqual(by_answer, by_id)
        self.assertGreater(by_answer, f(bad, ex["answer"]))
        acc = sv.verifiers_reward(ENV, client=self.client, component="accuracy")
        self.assertEqual(acc(right, ex["answer"]), 1.0)
        self.assertEqual(acc(bad, ex["answer"]), 0.0)

    def test_trl_reward(self):
        f = sv.trl_reward(ENV, client=self.client)
        exs = self.examples[:5]
        completions = [[{"role": "assistant", "content": e1_answers(e["answer"])[0]}] for e in exs]
        prompts = [e["prompt"] for e in exs]
        by_id = f(prompts, completions, example_id=[e["example_id"] for e in exs])
        by_answer = f(prompts, completions, answer=[e["answer"] for e in exs])
        self.assertEqual(len(by_id), 5)
        self.assertEqual(by_id, by_answer)
        self.assertTrue(f.__name__.startswith("svbench_"))

    def test_verl_compute_score(self):
        ex = self.examples[1]
        right, bad = e1_answers(ex["answer"])
        good = sv.compute_score(data_source="sv-env-network-logs", solution_str=right, ground_truth=ex["answer"])
        worse = sv.compute_score(data_source="network-logs", solution_str=bad, ground_truth=ex["answer"],
                                 extra_info={"example_id": ex["example_id"]})
        self.assertGreater(good["score"], worse["score"])
        self.assertEqual(good["accuracy"], 1.0)
        self.assertEqual(set(good), set(worse))
        # A failed item does not raise (it would kill verl's batch).
        failed = sv.compute_score(data_source="no-such-env", solution_str=right, ground_truth=ex["answer"])
        self.assertEqual((failed["score"], failed["svbench_error"]), (0.0, 1.0))
        self.assertEqual(set(failed), set(good))
        # prime's positional call: the total alone
        self.assertEqual(sv.compute_score("network-logs", right, ex["answer"]), good["score"])

    def test_openrlhf_get_reward(self):
        ex = self.examples[2]
        right, _ = e1_answers(ex["answer"])
        prompt = "PROMPT:" + ex["prompt"][-1]["content"]
        out = self.client.get_reward([prompt + right], [prompt], [ex["example_id"]], env=ENV)
        self.assertEqual(len(out["rewards"]), 1)
        self.assertGreater(out["rewards"][0], 1.0)
        self.assertIn("accuracy", out["extra_logs"])
        # The plain gold answer as the label, declared, scores the same;
        # so does a query whose prompt was cut from the left.
        by_answer = self.client.get_reward([prompt + right], [prompt], [ex["answer"]], env=ENV, labels_as="answer")
        self.assertEqual(by_answer["rewards"], out["rewards"])
        cut = self.client.get_reward([prompt[7:] + right], [prompt], [ex["example_id"]], env=ENV)
        self.assertEqual(cut["rewards"], out["rewards"])
        self.assertEqual(cut["extra_logs"]["svbench_prompt_truncated"], [1])
        self.assertEqual(sorted(cut["extra_logs"]), sorted(out["extra_logs"]))

    def test_thinking_is_not_the_answer(self):
        # The server applies eval's rule to every completion: a hedge inside
        # <think> earns nothing, the answer after it counts, and a block left
        # open commits to nothing.
        ex = self.examples[3]
        right, bad = e1_answers(ex["answer"])
        f = sv.verifiers_reward(ENV, client=self.client)
        plain = f(right, ex["answer"])
        self.assertEqual(f("<think>maybe " + bad + "?</think>" + right, ex["answer"]), plain)
        self.assertEqual(f("<think>maybe " + right + "?</think>" + bad, ex["answer"]), f(bad, ex["answer"]))
        self.assertEqual(f("<think>" + right, ex["answer"]), f("", ex["answer"]))
        prompt = "PROMPT:" + ex["prompt"][-1]["content"]
        out = self.client.get_reward([prompt + "<think>" + bad + "</think>" + right], [prompt], [ex["example_id"]], env=ENV)
        self.assertEqual(out["rewards"][0], plain)

    def test_item_errors(self):
        f = sv.trl_reward(ENV, client=self.client)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            vals = f(["p"], ["x"], example_id=["no-such-example"])
        self.assertEqual(vals, [0.0])
        self.assertTrue(any("unknown_example" in str(w.message) for w in caught))
        strict = sv.trl_reward(ENV, client=self.client, strict=True)
        with self.assertRaises(sv.SvbenchError):
            strict(["p"], ["x"], example_id=["no-such-example"])

    def test_http_errors(self):
        with self.assertRaises(sv.SvbenchError) as cm:
            self.client.examples("no-such-env")
        self.assertEqual(cm.exception.status, 404)
        self.assertTrue(cm.exception.request_id)
        if self.client.token:
            anon = sv.Client(token="wrong-token")
            with self.assertRaises(sv.SvbenchError) as cm:
                anon.environments()
            self.assertEqual(cm.exception.code, "unauthorized")
            self.assertTrue(anon.healthy())


@unittest.skipUnless(os.environ.get("SVBENCH_URL"), "SVBENCH_URL not set: start `svbench serve` first")
class LiveAdaptersTest(unittest.TestCase):
    """The adapters of test_adapters, in each trainer's call shape, against a live server."""

    @classmethod
    def setUpClass(cls):
        cls.client = sv.Client()
        cls.examples = cls.client.examples(ENV, limit=6, seed=5)["examples"]

    def test_rubric_info_weights(self):
        info = sv.rubric_info(self.client, ENV)
        weights = sv.trl_reward_weights(ENV, client=self.client)
        self.assertEqual(weights, [c["weight"] for c in info["components"]])
        self.assertIn("accuracy", [c["name"] for c in info["components"]])

    def test_trl_component_funcs_sum_to_total(self):
        funcs = sv.trl_reward_funcs(ENV, client=self.client)
        (total,) = sv.trl_reward_funcs(ENV, client=self.client, components=False)
        weights = sv.trl_reward_weights(ENV, client=self.client)
        exs = self.examples
        completions = [[{"role": "assistant", "content": e1_answers(e["answer"])[i % 2]}] for i, e in enumerate(exs)]
        ids = [e["example_id"] for e in exs[:-1]] + ["no-such-example"]
        kw = dict(prompts=[e["prompt"] for e in exs], completions=completions, completion_ids=[[0]] * len(exs),
                  example_id=ids, trainer_state=None, log_extra=None, log_metric=None)

        cols = [f(**kw) for f in funcs + [total]]  # GRPOTrainer calls plain functions in turn
        totals = cols[-1]
        self.assertIsNone(totals[-1])
        self.assertTrue(all(col[-1] is None for col in cols))
        for i in range(len(exs) - 1):
            s = sum(w * col[i] for w, col in zip(weights, cols[:-1]) if col[i] is not None)
            self.assertAlmostEqual(s, totals[i], places=6)
        self.assertGreater(totals[0], totals[1])

    def test_verl_batch_manager(self):
        exs = self.examples
        right = [e1_answers(e["answer"])[0] for e in exs]
        out = sv.compute_score(data_sources=[ENV] * len(exs), solution_strs=right,
                               ground_truths=[e["answer"] for e in exs], extra_infos=[{} for _ in exs])
        self.assertEqual(len(out), len(exs))
        self.assertTrue(all(d["accuracy"] == 1.0 and d["svbench_error"] == 0.0 for d in out))
        one = asyncio.run(sv.compute_score_async(data_source=ENV, solution_str=right[0], ground_truth=exs[0]["answer"],
                                                 extra_info={}, reward_router_address=None))
        self.assertEqual(one, out[0])

    def test_openrlhf_reward_func_file(self):
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "svbench", "openrlhf_reward.py")
        spec = importlib.util.spec_from_file_location("reward_func", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        ex = self.examples[0]
        right, _ = e1_answers(ex["answer"])
        prompt = "PROMPT:" + ex["prompt"][-1]["content"]
        os.environ["SVBENCH_ENV"] = ENV
        try:
            got = mod.reward_func([prompt + right], [prompt], [ex["example_id"]])
        finally:
            os.environ.pop("SVBENCH_ENV")
        want = self.client.get_reward([prompt + right], [prompt], [ex["example_id"]], env=ENV)
        self.assertEqual(got["rewards"], want["rewards"])
        self.assertEqual(sorted(got["extra_logs"]), sorted(want["extra_logs"]))
        self.assertGreater(got["rewards"][0], 1.0)


class OfflineTest(unittest.TestCase):
    def test_make_item(self):
        self.assertEqual(sv.make_item("e2", "c", answer='{"violations": []}')["answer"], {"violations": []})
        self.assertEqual(sv.make_item("e1", "c", answer="Benign")["answer"], "Benign")
        item = sv.make_item("e1", "c", answer="Benign", example_id="x", rubric="reference")
        self.assertEqual(item, {"env": "e1", "completion": "c", "example_id": "x", "rubric": "reference"})

    def test_unreachable_server_raises(self):
        c = sv.Client(url="http://127.0.0.1:9", timeout=2)
        with self.assertRaises(OSError):
            c.environments()


if __name__ == "__main__":
    unittest.main()
