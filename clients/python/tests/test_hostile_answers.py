"""What reaches a trainer when the server's answer cannot be trusted: NaN and
Infinity (as JSON literals, as strings, as 1e400), strings, booleans,
missing rewards, a results list of the wrong length, a body too large.

A local stub server plays the hostile side; no svbench server, no trainer:

    /usr/bin/python3 -m pytest -q test_hostile_answers.py
    /usr/bin/python3 -m unittest -v tests.test_hostile_answers

Per item, a reward that is not a finite number is a failed item and every
adapter hands its trainer the value it already gives a failed item; a count
that does not match the items sent, or an oversized body, fails the request.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import threading
import time
import unittest
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import svbench
import svbench.verl as sverl
from svbench import SvbenchError
from svbench import openrlhf_agent as oa
from svbench import trl_env
from svbench import verifiers_env as ve
from svbench import verl_tools as vt

# clients/python: the package, the compatibility modules and examples/.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENVS = [{"id": "toy", "default_rubric": "default", "rubrics": ["default"], "tools": [],
         "rubric_info": [{"name": "default", "total_min": 0, "total_max": 1.5, "components": [
             {"name": "accuracy", "weight": 1, "min": 0, "max": 1},
             {"name": "format", "weight": 0.5, "min": 0, "max": 1}]}]}]

GOOD = '{"reward": 1.5, "components": {"accuracy": 1, "format": 1}, "solved": true}'

# One result each: reward (or a component) that is not a finite number.
# Raw JSON text, since Python's json would never write most of these.
BAD_RESULTS = {
    "nan_literal": '{"reward": NaN, "components": {"accuracy": 1}}',
    "infinity_literal": '{"reward": Infinity, "components": {"accuracy": 1}}',
    "minus_infinity_literal": '{"reward": -Infinity, "components": {"accuracy": 1}}',
    "overflowing_number": '{"reward": 1e400, "components": {"accuracy": 1}}',
    "infinity_string": '{"reward": "Infinity", "components": {"accuracy": 1}}',
    "nan_string": '{"reward": "nan", "components": {"accuracy": 1}}',
    "numeric_string": '{"reward": "1.5", "components": {"accuracy": 1}}',
    "word_string": '{"reward": "great", "components": {"accuracy": 1}}',
    "boolean": '{"reward": true, "components": {"accuracy": 1}}',
    "null": '{"reward": null, "components": {"accuracy": 1}}',
    "missing": '{"components": {"accuracy": 1}}',
    "list": '{"reward": [1.5], "components": {"accuracy": 1}}',
    "component_nan": '{"reward": 1.5, "components": {"accuracy": NaN, "format": 1}}',
    "component_string": '{"reward": 1.5, "components": {"accuracy": "Infinity", "format": 1}}',
    "components_not_object": '{"reward": 1.5, "components": [1, 1]}',
    "result_not_object": '"Infinity"',
}


class Hostile(BaseHTTPRequestHandler):
    """Answers /v1/score, /get_reward and session steps with whatever the
    test scripted on the server (server.answer: body -> raw text, or ->
    (status, headers, raw bytes))."""

    def log_message(self, *a):
        pass

    def _raw(self, status, headers, data):
        try:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the client hung up on an oversized body, as it should
            pass

    def _answer(self, body):
        got = self.server.answer(body)
        if isinstance(got, tuple):
            self._raw(*got)
            return
        data = got.encode()
        self._raw(200, {"Content-Type": "application/json", "Content-Length": str(len(data))}, data)

    def _json(self, obj):
        data = json.dumps(obj).encode()
        self._raw(200, {"Content-Type": "application/json", "Content-Length": str(len(data))}, data)

    def do_GET(self):
        self._json({"environments": ENVS})

    def do_DELETE(self):
        self.server.deleted += 1
        self._json({"deleted": True})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else {}
        if self.path == "/v1/sessions":
            self._json({"session_id": "s1", "prompt": [{"role": "user", "content": "q"}], "tools": [], "max_turns": 3})
        else:
            self._answer(body)


def score_answer(*results):
    return lambda body: '{"results": [%s]}' % ", ".join(results)


def step_answer(score):
    return lambda body: '{"turn": 1, "observations": [], "done": true, "reason": "answered", "score": %s}' % score


class HostileCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
        cls.httpd.daemon_threads = True
        cls.httpd.answer = score_answer(GOOD)
        cls.httpd.deleted = 0
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d" % cls.httpd.server_address[1]
        cls._env = {k: os.environ.get(k) for k in ("SVBENCH_URL", "SVBENCH_TOKEN", "SVBENCH_ENV", "SVBENCH_LABELS",
                                                    "SVBENCH_MAX_RESPONSE_BYTES")}
        os.environ["SVBENCH_URL"] = cls.url
        os.environ.pop("SVBENCH_TOKEN", None)
        os.environ.pop("SVBENCH_MAX_RESPONSE_BYTES", None)
        svbench.client._default_client = None

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        cls.httpd.server_close()
        for k, v in cls._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        svbench.client._default_client = None

    def setUp(self):
        self.client = svbench.Client(url=self.url)

    def answer(self, fn):
        self.httpd.answer = fn


# -- the core client -------------------------------------------------------------


class ClientResultsTest(HostileCase):
    def test_every_non_finite_or_missing_reward_is_a_failed_item(self):
        for name, raw in BAD_RESULTS.items():
            with self.subTest(name):
                self.answer(score_answer(GOOD, raw, GOOD))
                out = self.client.score([{"env": "toy", "completion": c, "answer": "a"} for c in "xyz"])
                self.assertEqual(len(out), 3)
                bad = out[1]
                self.assertIsInstance(bad, dict)
                self.assertEqual((bad.get("error") or {}).get("code"), "invalid_result", bad)
                self.assertEqual(bad["reward"], 0.0)
                self.assertEqual(bad["components"], {})
                # its neighbours are untouched: items fail independently
                for good in (out[0], out[2]):
                    self.assertEqual(good, {"reward": 1.5, "components": {"accuracy": 1, "format": 1}, "solved": True})

    def test_server_error_items_keep_their_error(self):
        self.answer(score_answer('{"reward": 0, "components": {}, "error": {"code": "unknown_example", "message": "x"}}',
                                 '{"reward": NaN, "error": "worker crashed"}'))
        out = self.client.score([{"env": "toy", "completion": "a"}, {"env": "toy", "completion": "b"}])
        self.assertEqual(out[0]["error"], {"code": "unknown_example", "message": "x"})
        self.assertEqual(out[1]["error"]["message"], "worker crashed")  # a bare string becomes {code, message}
        self.assertEqual(out[1]["reward"], 0.0)

    def test_more_results_than_items_fails_the_batch(self):
        self.answer(score_answer(GOOD, GOOD, GOOD))
        with self.assertRaises(SvbenchError) as cm:
            self.client.score([{"env": "toy", "completion": "a"}])
        self.assertEqual(cm.exception.code, "result_count_mismatch")
        self.assertIn("3 results for 1 item", str(cm.exception))

    def test_fewer_results_than_items_fails_the_batch(self):
        self.answer(score_answer(GOOD))
        with self.assertRaises(SvbenchError) as cm:
            self.client.score([{"env": "toy", "completion": "a"}, {"env": "toy", "completion": "b"}])
        self.assertEqual(cm.exception.code, "result_count_mismatch")

    def test_every_batch_is_counted(self):
        # batch_size 2: three items go as 2 + 1; the second request's extra
        # result must not be appended after the first's.
        self.answer(lambda body: '{"results": [%s]}' % ", ".join([GOOD] * 2))
        with self.assertRaises(SvbenchError) as cm:
            svbench.Client(url=self.url, batch_size=2).score([{"env": "toy", "completion": c} for c in "abc"])
        self.assertEqual(cm.exception.code, "result_count_mismatch")

    def test_results_not_a_list(self):
        for raw in ('{"results": {"0": %s}}' % GOOD, '{"results": null}', '{}', '[1.5]', 'NaN'):
            with self.subTest(raw):
                self.answer(lambda body, raw=raw: raw)
                with self.assertRaises(SvbenchError) as cm:
                    self.client.score([{"env": "toy", "completion": "a"}])
                self.assertEqual(cm.exception.code, "invalid_response")

    def test_nan_outside_a_reward_is_refused_loudly(self):
        # A NaN weight would make every weighted total NaN.
        self.answer(lambda body: '{"ok": NaN}')
        got = self.client._request("POST", "/anything", {})
        with self.assertRaises(SvbenchError) as cm:
            float(got["ok"])
        self.assertEqual(cm.exception.code, "non_finite_number")

    def test_get_reward_non_finite_is_a_failed_item(self):
        self.answer(lambda body: '{"rewards": [1.5, NaN, "Infinity", null], "scores": [1.5, 1.5, Infinity, 0],'
                                 ' "extra_logs": {"accuracy": [1, 1, 1, NaN], "svbench_error": [0, 0, 0, 0]},'
                                 ' "errors": ["", "", "", ""]}')
        out = self.client.get_reward(["q"] * 4, ["p"] * 4, ["l"] * 4)
        self.assertEqual(out["rewards"], [1.5, 0.0, 0.0, 0.0])
        self.assertEqual(out["scores"], [1.5, 0.0, 0.0, 0.0])
        self.assertEqual(out["extra_logs"]["svbench_error"], [0.0, 1.0, 1.0, 1.0])
        self.assertEqual(out["extra_logs"]["accuracy"], [1.0, 0.0, 0.0, 0.0])
        self.assertEqual(out["errors"][0], "")
        self.assertTrue(all(e.startswith("invalid_result") for e in out["errors"][1:]), out["errors"])

    def test_get_reward_count_mismatch_fails(self):
        for raw in ('{"rewards": [1.5, 1.5, 1.5], "scores": [1.5, 1.5, 1.5], "extra_logs": {}}',
                    '{"rewards": [1.5], "scores": [1.5, 0, 0], "extra_logs": {}}',
                    '{"rewards": [1.5], "scores": [1.5], "extra_logs": {"accuracy": [1, 1, 1]}}',
                    '{"rewards": 1.5}', '{"scores": [1.5]}'):
            with self.subTest(raw):
                self.answer(lambda body, raw=raw: raw)
                with self.assertRaises(SvbenchError) as cm:
                    self.client.get_reward(["q"], ["p"], ["l"])
                self.assertIn(cm.exception.code, ("result_count_mismatch", "invalid_response"))

    def test_session_score_non_finite_is_an_error_score(self):
        self.answer(step_answer('{"reward": Infinity, "components": {"accuracy": 1}}'))
        res = self.client.sessions_step("s1", {"role": "assistant", "content": "a"})
        self.assertEqual(res["score"]["error"]["code"], "invalid_result")
        self.assertEqual(res["score"]["reward"], 0.0)

    def test_rollout_score_non_finite_is_an_error_score(self):
        self.answer(lambda body: '{"transcript": [], "score": {"reward": "NaN", "components": {}}}')
        res = self.client.rollout("toy", "http://127.0.0.1:1", "m")
        self.assertEqual(res["score"]["error"]["code"], "invalid_result")


class ResponseSizeTest(HostileCase):
    def test_oversized_body_without_length(self):
        big = b'{"results": [' + b" " * 5000 + GOOD.encode() + b"]}"
        self.answer(lambda body: (200, {"Content-Type": "application/json", "Connection": "close"}, big))
        c = svbench.Client(url=self.url, max_response_bytes=1000)
        with self.assertRaises(SvbenchError) as cm:
            c.score([{"env": "toy", "completion": "a"}])
        self.assertEqual(cm.exception.code, "response_too_large")
        self.assertIn("1000", str(cm.exception))
        # the same answer under the limit is read
        self.assertEqual(svbench.Client(url=self.url, max_response_bytes=len(big)).score([{"env": "toy", "completion": "a"}])[0]["reward"], 1.5)

    def test_announced_400_mib_is_refused_before_reading(self):
        # The stub announces 400 MiB and sends 1 MiB; with the default limit
        # the client refuses on the header (reading would wait for the rest).
        self.answer(lambda body: (200, {"Content-Type": "application/json", "Content-Length": str(400 << 20)},
                                  b'{"results": [' + b" " * (1 << 20)))
        c = svbench.Client(url=self.url, timeout=20)
        t0 = time.monotonic()
        with self.assertRaises(SvbenchError) as cm:
            c.score([{"env": "toy", "completion": "a"}])
        self.assertEqual(cm.exception.code, "response_too_large")
        self.assertIn("64 MiB", str(cm.exception))
        self.assertLess(time.monotonic() - t0, 10)

    def test_oversized_error_body(self):
        self.answer(lambda body: (500, {"Content-Type": "text/plain", "Connection": "close"}, b"x" * 50000))
        c = svbench.Client(url=self.url, max_response_bytes=1000)
        with self.assertRaises(SvbenchError) as cm:
            c.score([{"env": "toy", "completion": "a"}])
        self.assertEqual(cm.exception.status, 500)
        self.assertLessEqual(len(cm.exception.message), 300)

    def test_limit_from_the_environment(self):
        # The module-level hooks (verl, OpenRLHF) build their own Client.
        os.environ["SVBENCH_MAX_RESPONSE_BYTES"] = "1000"
        try:
            self.assertEqual(svbench.Client(url=self.url).max_response_bytes, 1000)
        finally:
            os.environ.pop("SVBENCH_MAX_RESPONSE_BYTES")
        self.assertEqual(svbench.Client(url=self.url).max_response_bytes, 64 << 20)
        with self.assertRaises(ValueError):
            svbench.Client(url=self.url, max_response_bytes=0)


# -- each trainer's failure value -----------------------------------------------------


def trl_call(funcs, completions, **columns):
    # GRPOTrainer._calculate_rewards: plain functions called in turn (ours are
    # plain: AsyncGRPOTrainer pickles them), coroutine functions gathered.
    return [f(prompts=["q"] * len(completions), completions=completions, **columns) for f in funcs]


class RewardAdaptersTest(HostileCase):
    """Per trainer, what a non-finite or missing reward becomes: the value
    that trainer already gets for an item the server failed."""

    def test_trl_reward_funcs_none(self):
        # TRL: None, which it turns into NaN and leaves out of the reward
        # (not a zero: a zero would be a real reward).
        funcs = svbench.trl_reward_funcs("toy", client=self.client)
        for name, raw in BAD_RESULTS.items():
            with self.subTest(name):
                self.answer(score_answer(GOOD, raw))
                out = trl_call(funcs, ["a", "b"], answer=["a", "a"])
                self.assertEqual(out, [[1.0, None], [1.0, None]])
        (total,) = svbench.trl_reward_funcs("toy", client=self.client, components=False)
        self.answer(score_answer('{"reward": NaN, "components": {}}'))
        self.assertEqual(trl_call([total], ["a"]), [[None]])

    def test_trl_reward_funcs_count_mismatch_raises(self):
        (total,) = svbench.trl_reward_funcs("toy", client=self.client, components=False)
        self.answer(score_answer(GOOD, GOOD, GOOD))
        with self.assertRaises(SvbenchError):
            trl_call([total], ["a"])

    def test_trl_reward_sync_zero_with_warning(self):
        f = svbench.trl_reward("toy", client=self.client)
        self.answer(score_answer('{"reward": "Infinity", "components": {}}', GOOD))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            self.assertEqual(f(prompts=["q", "q"], completions=["a", "b"]), [0.0, 1.5])
        self.assertTrue(any("invalid_result" in str(x.message) for x in w))
        with self.assertRaises(SvbenchError):
            svbench.trl_reward("toy", client=self.client, strict=True)(prompts=["q", "q"], completions=["a", "b"])

    def test_verl_score_zero_and_error_flag(self):
        keys = {"score", "accuracy", "format", "svbench_error"}
        for name, raw in BAD_RESULTS.items():
            with self.subTest(name):
                self.answer(score_answer(raw))
                r = sverl.compute_score(data_source="toy", solution_str="a", ground_truth="a")
                self.assertEqual(r, {"score": 0.0, "accuracy": 0.0, "format": 0.0, "svbench_error": 1.0})
                self.assertEqual(set(r), keys)

    def test_verl_batch_count_mismatch_raises(self):
        self.answer(score_answer(GOOD, GOOD, GOOD))
        with self.assertRaises(SvbenchError):
            sverl.compute_score(data_sources=["toy"], solution_strs=["a"], ground_truths=["a"], extra_infos=[{}])

    def test_verifiers_v0_zero_with_warning(self):
        f = svbench.verifiers_reward("toy", client=self.client)
        self.answer(score_answer('{"reward": NaN, "components": {}}'))
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            self.assertEqual(f("a", answer="a"), 0.0)

    def load_openrlhf(self):
        spec = importlib.util.spec_from_file_location("reward_func", os.path.join(HERE, "svbench", "openrlhf_reward.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.reward_func

    def test_openrlhf_zero_and_error_flag(self):
        reward_func = self.load_openrlhf()
        for raw in ("NaN", '"Infinity"', "null", "1e400", "true"):
            with self.subTest(raw):
                self.answer(lambda body, raw=raw: '{"rewards": [%s], "scores": [%s], "extra_logs": {"accuracy": [1],'
                                                  ' "svbench_error": [0]}, "errors": [""]}' % (raw, raw))
                out = reward_func(["q"], ["p"], ["l"])
                self.assertEqual(out["rewards"], [0.0])
                self.assertEqual(out["scores"], [0.0])
                self.assertEqual(out["extra_logs"], {"accuracy": [0.0], "svbench_error": [1.0]})

    def test_openrlhf_count_mismatch_raises(self):
        reward_func = self.load_openrlhf()
        self.answer(lambda body: '{"rewards": [1.5, 0, 0], "scores": [1.5, 0, 0], "extra_logs": {}}')
        with self.assertRaises(SvbenchError):
            reward_func(["q"], ["p"], ["l"])


class Trace:
    """The parts of a verifiers v1 trace SvbenchTask.svbench touches."""

    def __init__(self):
        self.info, self.rewards, self.metrics = {}, {}, {}
        self.assistant_messages = [{"role": "assistant", "content": "a"}]

    def record_reward(self, name, value, weight):
        self.rewards[name] = (value, weight)

    def record_metric(self, name, value):
        self.metrics[name] = value


class SessionAdaptersTest(HostileCase):
    """The session-backed adapters when the episode's score is not finite."""

    HOSTILE_SCORES = ('{"reward": NaN, "components": {"accuracy": 1}}',
                      '{"reward": "Infinity", "components": {"accuracy": 1}}',
                      '{"reward": 1.5, "components": {"accuracy": -Infinity}}',
                      '{"components": {"accuracy": 1}}')

    def test_openrlhf_agent_zero_and_error_flag(self):
        for score in self.HOSTILE_SCORES:
            with self.subTest(score):
                self.answer(step_answer(score))
                inst = oa.SvbenchAgentInstance(client=self.client, env="toy")

                async def run():
                    await inst.reset({"observation": "q", "label": "x1"})
                    return await inst.step({"action_text": "answer", "label": "x1"})

                res = asyncio.run(run())
                self.assertTrue(res["done"])
                self.assertEqual(res["rewards"].item(), 0.0)
                self.assertEqual(res["extra_logs"]["svbench_error"], 1.0)
                self.assertEqual(res["extra_logs"]["accuracy"], 0.0)

    def test_trl_env_none(self):
        factory = trl_env.trl_environment("toy", client=self.client)
        (total,) = trl_env.trl_env_reward_funcs("toy", client=self.client)
        comps = trl_env.trl_env_reward_funcs("toy", client=self.client, components=True)
        for score in self.HOSTILE_SCORES:
            with self.subTest(score):
                self.answer(step_answer(score))
                e = factory()
                e.reset(example_id="x1")

                done = [{"role": "assistant", "content": "answer"}]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self.assertEqual([f(completions=[done], environments=[e]) for f in [total] + comps],
                                     [[None], [None], [None]])

    def test_verl_tools_zero_and_error_flag(self):
        inter = vt.SvbenchInteraction({"name": "svbench", "url": self.url, "env": "toy"})
        for score in self.HOSTILE_SCORES:
            with self.subTest(score):
                self.answer(step_answer(score))

                async def run():
                    rid = await inter.start_interaction("r1", example_id="x1")
                    return await inter.generate_response(rid, [{"role": "assistant", "content": "answer"}])

                done, _, turn_score, _ = asyncio.run(run())
                self.assertTrue(done)
                self.assertIsNone(turn_score)
                self.assertEqual(vt.compute_score(extra_info={"turn_scores": [turn_score]}),
                                 {"score": 0.0, "svbench_error": 1.0, "svbench_unfinished": 0.0})
        # A turn score handed over some other way is checked as well.
        for bad in (float("nan"), float("inf"), "Infinity", True):
            self.assertEqual(vt.compute_score(extra_info={"turn_scores": [bad]}),
                             {"score": 0.0, "svbench_error": 1.0, "svbench_unfinished": 0.0})

    def test_verifiers_v1_raises(self):
        # verifiers records a reward hook's exception as the rollout's error.
        task = ve.SvbenchTask(ve.SvbenchData(env="toy", example_id="x1"),
                              ve.SvbenchTaskConfig(base_url=self.url))
        for score in self.HOSTILE_SCORES:
            with self.subTest(score):
                self.answer(score_answer(score))
                trace = Trace()
                with self.assertRaises(SvbenchError):
                    asyncio.run(task.svbench(trace))
                self.assertEqual(trace.rewards, {})
        # a score already on the trace (a session's) is checked too
        trace = Trace()
        trace.info["svbench"] = {"score": {"reward": float("nan"), "components": {"accuracy": 1.0}}}
        with self.assertRaises(SvbenchError):
            asyncio.run(task.svbench(trace))
        self.assertEqual(trace.rewards, {})


if __name__ == "__main__":
    unittest.main()
