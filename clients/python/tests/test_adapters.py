"""The trainer adapters against each trainer's calling convention, as its
sources call them (no trainer installed), with a stub server in-process:

    python3 -m unittest test_adapters

The same conventions against a live `svbench serve` are in
test_svbench_client.LiveAdaptersTest.
"""

import asyncio
import importlib.util
import inspect
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import svbench
import svbench.verl as sverl

# clients/python: the package, the compatibility modules and examples/.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENVS = [
    {"id": "toy", "aliases": ["sv-env-toy"], "default_rubric": "default", "rubrics": ["default"],
     "rubric_info": [{"name": "default", "total_min": 0, "total_max": 1.5, "components": [
         {"name": "accuracy", "weight": 1, "min": 0, "max": 1},
         {"name": "format", "weight": 0.5, "min": 0, "max": 1, "optional": True}]}]},
    {"id": "other", "default_rubric": "default", "rubrics": ["default"],
     "rubric_info": [{"name": "default", "total_min": 0, "total_max": 2, "components": [
         {"name": "coverage", "weight": 2, "min": 0, "max": 1}]}]},
]


def stub_score(item):
    env = item.get("env")
    if env not in ("toy", "sv-env-toy"):
        return {"reward": 0, "components": {}, "error": {"code": "unknown_environment", "message": env}}
    if item.get("example_id") == "bad":
        return {"reward": 0, "components": {}, "error": {"code": "unknown_example", "message": "bad"}}
    c = item["completion"]
    if isinstance(c, list):
        c = c[-1]["content"]
    gold = item.get("answer", "yes")
    if c == gold:
        return {"reward": 1.5, "components": {"accuracy": 1, "format": 1}}
    return {"reward": 0.0, "components": {"accuracy": 0}}  # format left out: optional


class Stub(BaseHTTPRequestHandler):
    requests = []

    def log_message(self, *a):
        pass

    def _send(self, obj):
        b = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)

    def do_GET(self):
        Stub.requests.append(("GET", self.path, None, self.headers.get("Authorization")))
        self._send({"environments": ENVS})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Stub.requests.append(("POST", self.path, body, self.headers.get("Authorization")))
        if self.path == "/v1/score":
            self._send({"results": [stub_score(it) for it in body["items"]]})
        elif self.path.startswith("/get_reward"):
            # Labels "status:N" answer N as svbench writes errors, "sleep:S"
            # answers after S seconds, "drop" closes the connection unanswered.
            for label in body["labels"]:
                if label.startswith("status:"):
                    return self._error(int(label[7:]))
                if label.startswith("sleep:"):
                    time.sleep(float(label[6:]))
                if label == "drop":
                    self.close_connection = True
                    return
            r = [1.5 if q.endswith(l) else 0.0 for q, l in zip(body["query"], body["labels"])]
            # The server's key set: every served component, then its own keys.
            logs = {c: [x / 1.5 for x in r] for c in ("accuracy", "coverage", "format")}
            logs.update({k: [0.0 for _ in r] for k in ("svbench_error", "svbench_prompt_mismatch",
                                                         "svbench_prompt_truncated")})
            self._send({"rewards": r, "scores": r, "extra_logs": logs, "errors": ["" for _ in r]})

    def _error(self, status):
        code = {504: "timeout", 503: "canceled", 500: "internal", 429: "busy", 413: "body_too_large",
                400: "bad_request", 401: "unauthorized"}.get(status, "http_%d" % status)
        b = json.dumps({"error": {"code": code, "message": "stub %d" % status}, "request_id": "r1"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)


class StubCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
        threading.Thread(target=cls.httpd.serve_forever, daemon=True).start()
        cls.url = "http://127.0.0.1:%d" % cls.httpd.server_address[1]
        cls.client = svbench.Client(url=cls.url, token="tok")
        cls._env = {k: os.environ.get(k) for k in ("SVBENCH_URL", "SVBENCH_TOKEN", "SVBENCH_ENV", "SVBENCH_LABELS")}
        os.environ["SVBENCH_URL"] = cls.url
        os.environ["SVBENCH_TOKEN"] = "tok"
        svbench.client._default_client = None

    @classmethod
    def tearDownClass(cls):
        cls.httpd.shutdown()
        for k, v in cls._env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        svbench.client._default_client = None

    def setUp(self):
        Stub.requests.clear()

    def posts(self):
        return [r for r in Stub.requests if r[0] == "POST"]


class TRLConventionTest(StubCase):
    """trl.GRPOTrainer._calculate_rewards (huggingface/trl f2cd577)."""

    def call_like_trl(self, funcs, prompts, completions, **columns):
        # GRPOTrainer's keywords: prompts, completions, completion_ids, the
        # other columns as lists, trainer_state, log_extra, log_metric; plain
        # functions called in turn (coroutine functions would be gathered);
        # None -> NaN.
        kw = dict(prompts=prompts, completions=completions, completion_ids=[[1, 2]] * len(completions),
                  trainer_state=object(), log_extra=lambda *a, **k: None, log_metric=lambda *a, **k: None, **columns)
        self.assertFalse(any(inspect.iscoroutinefunction(f) for f in funcs))
        return [f(**kw) for f in funcs]

    def call_like_async_grpo(self, funcs, prompts, completions, **columns):
        # AsyncRolloutWorker.start() pickles reward_funcs for its spawned
        # child, whose _score_group calls them with completions, prompts,
        # completion_ids and the columns, plain ones through asyncio.to_thread.
        funcs = pickle.loads(pickle.dumps(funcs))
        kw = dict(completions=completions, prompts=prompts, completion_ids=[[1, 2]] * len(completions), **columns)

        async def run():
            return await asyncio.gather(*[asyncio.to_thread(f, **kw) for f in funcs])

        return funcs, asyncio.run(run())

    def test_one_function_per_component_with_server_weights(self):
        funcs = svbench.trl_reward_funcs("toy", client=self.client)
        self.assertEqual([f.__name__ for f in funcs], ["svbench_toy_accuracy", "svbench_toy_format"])
        self.assertEqual(svbench.trl_reward_weights("toy", client=self.client), [1.0, 0.5])
        self.setUp()
        comps = [[{"role": "assistant", "content": c}] for c in ("yes", "no", "yes")]
        out = self.call_like_trl(funcs, [[{"role": "user", "content": "q"}]] * 3, comps,
                                 example_id=["e1", "e2", "bad"], answer=["yes", "yes", "yes"])
        self.assertEqual(out[0], [1.0, 0.0, None])  # failed item: None, not 0
        self.assertEqual(out[1], [1.0, None, None])  # optional component left out: None
        self.assertEqual(len(self.posts()), 1, "the component functions share one request per batch")
        self.assertEqual(self.posts()[0][3], "Bearer tok")

    def test_async_grpo_pickles_and_calls_in_threads(self):
        funcs = svbench.trl_reward_funcs("toy", client=self.client)
        self.setUp()
        comps = [[{"role": "assistant", "content": c}] for c in ("yes", "no", "yes")]
        got, out = self.call_like_async_grpo(funcs, [[{"role": "user", "content": "q"}]] * 3, comps,
                                             example_id=["e1", "e2", "bad"], answer=["yes", "yes", "yes"])
        self.assertEqual([f.__name__ for f in got], ["svbench_toy_accuracy", "svbench_toy_format"])
        self.assertEqual(out, [[1.0, 0.0, None], [1.0, None, None]])
        self.assertEqual(len(self.posts()), 1, "the unpickled functions still share one request per batch")
        self.assertEqual(self.posts()[0][3], "Bearer tok")
        (legacy,) = pickle.loads(pickle.dumps([svbench.trl_reward("toy", client=self.client)]))
        self.assertEqual(legacy(prompts=["q"], completions=["yes"], answer=["yes"]), [1.5])

    def test_total_function(self):
        (f,) = svbench.trl_reward_funcs("sv-env-toy", client=self.client, components=False)
        self.assertEqual(f.__name__, "svbench_sv_env_toy_reward")
        out = self.call_like_trl([f], ["q", "q"], ["yes", "no"], answer=["yes", "yes"])
        self.assertEqual(out, [[1.5, 0.0]])

    def test_legacy_sync(self):
        f = svbench.trl_reward("toy", client=self.client)
        self.assertFalse(inspect.iscoroutinefunction(f))
        self.assertEqual(f(prompts=["q"], completions=["yes"], answer=["yes"], trainer_state=None), [1.5])

    def test_unknown_env_refused_up_front(self):
        with self.assertRaises(svbench.SvbenchError):
            svbench.trl_reward_funcs("nope", client=self.client)


class VerlConventionTest(StubCase):
    """verl's reward managers (volcengine/verl b178a3c)."""

    KEYS = {"score", "accuracy", "format", "coverage", "svbench_error"}

    def test_naive_and_dapo_keywords(self):
        r = sverl.compute_score(data_source="toy", solution_str="yes", ground_truth="yes", extra_info={"index": 0})
        self.assertEqual(r, {"score": 1.5, "accuracy": 1.0, "format": 1.0, "coverage": 0.0, "svbench_error": 0.0})

    def test_prime_positional(self):
        # verl/workers/reward_manager/prime.py: evaluation_func(task, completion,
        # reference, task_extra_info), then float(result) of a number or
        # float(result[0]) of anything else.
        for args, want in ((("toy", "yes", "yes", {"index": 3}), 1.5), (("toy", "no", "yes", None), 0.0),
                           (("toy", "yes", "yes", {"example_id": "bad"}), 0.0), (("toy", "yes", "yes"), 1.5)):
            r = sverl.compute_score(*args, rubric="default")
            self.assertIsInstance(r, float)
            self.assertEqual(r, want)
        with self.assertRaises(TypeError):
            sverl.compute_score("toy", "yes", solution_str="no")

    def test_prime_process_pool(self):
        # prime's shape with this test's own pool: the function loaded by path
        # as verl loads it, wrapped as get_custom_reward_fn wraps it, sent to
        # worker processes (pickled), called positionally.
        from concurrent.futures import ProcessPoolExecutor
        import multiprocessing
        import pickle

        def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
            return raw_fn(*args, **{**kwargs, **extra_kwargs})

        spec = importlib.util.spec_from_file_location("custom_module_%d" % hash(HERE), os.path.join(HERE, "svbench", "verl.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        self.assertNotIn(spec.name, sys.modules)
        pickle.dumps(mod.compute_score)
        pickle.dumps(mod.compute_score_async)
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as ex:
            futs = [ex.submit(partial(mod.compute_score, "toy", c, "yes", None)) for c in ("yes", "no")]
            self.assertEqual([f.result(timeout=120) for f in futs], [1.5, 0.0])
        self.assertTrue(callable(partial(_call_with_kwargs, mod.compute_score, {})))

    def test_custom_reward_function_kwargs_merged(self):
        # verl.trainer.ppo.reward.get_custom_reward_fn: partial(_call_with_kwargs, raw_fn, reward_kwargs)
        def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
            return raw_fn(*args, **{**kwargs, **extra_kwargs})

        fn = partial(_call_with_kwargs, sverl.compute_score, {"overlong_buffer_cfg": None, "max_resp_len": 10, "rubric": "default"})
        r = fn(data_source="svbench/toy-v1", solution_str="yes", ground_truth="yes", extra_info={"env": "toy"})
        self.assertEqual(r["score"], 1.5)
        self.assertEqual(self.posts()[-1][2]["items"][0]["rubric"], "default")

    def test_batch_manager(self):
        out = sverl.compute_score(data_sources=["toy", "toy", "nope"], solution_strs=["yes", "no", "yes"],
                                  ground_truths=["yes", "yes", "yes"], extra_infos=[{}, {"rollout_reward_scores": {}}, {}],
                                  sandbox_fusion_url=None)
        self.assertEqual([d["score"] for d in out], [1.5, 0.0, 0.0])
        self.assertEqual([d["svbench_error"] for d in out], [0.0, 0.0, 1.0])
        self.assertTrue(all(set(d) == self.KEYS for d in out), "every item carries the same keys")
        self.assertEqual(len([p for p in self.posts() if p[1] == "/v1/score"]), 1)

    def test_failed_item_does_not_raise(self):
        r = sverl.compute_score(data_source="toy", solution_str="yes", ground_truth=None, extra_info={"example_id": "bad"})
        self.assertEqual(r["svbench_error"], 1.0)
        self.assertEqual(r["score"], 0.0)

    def test_reward_loop_awaits_coroutine(self):
        # verl/experimental/reward_loop/reward_manager/naive.py: awaited when
        # inspect.iscoroutinefunction (also through the kwargs partial).
        async def _call_with_kwargs_async(raw_fn, extra_kwargs, *args, **kwargs):
            return await raw_fn(*args, **{**kwargs, **extra_kwargs})

        fn = partial(_call_with_kwargs_async, sverl.compute_score_async, {})
        self.assertTrue(inspect.iscoroutinefunction(fn))
        r = asyncio.run(fn(data_source="toy", solution_str="yes", ground_truth="yes", extra_info={},
                           reward_router_address=None, reward_model_tokenizer=None))
        self.assertEqual(r["score"], 1.5)

    def test_loaded_by_path(self):
        # verl.utils.import_utils.load_extern_object imports the file by path.
        for path in (os.path.join(HERE, "svbench", "verl.py"), os.path.join(HERE, "svbench_client.py")):
            spec = importlib.util.spec_from_file_location("custom_module", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            self.assertEqual(mod.compute_score(data_source="toy", solution_str="yes", ground_truth="yes")["score"], 1.5)
            self.assertEqual(mod.compute_score("toy", "yes", "yes"), 1.5)


class OpenRLHFConventionTest(StubCase):
    """openrlhf/utils/agent.py SingleTurnExecutor (OpenRLHF/OpenRLHF 3c3be62)."""

    def load(self):
        spec = importlib.util.spec_from_file_location("reward_func", os.path.join(HERE, "svbench", "openrlhf_reward.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod.reward_func

    def test_reward_func_one_sample_per_thread(self):
        os.environ["SVBENCH_ENV"] = "toy"
        os.environ["SVBENCH_LABELS"] = "answer"
        try:
            reward_func = self.load()

            async def run():  # _fetch_rewards_via_func: to_thread, one sample each
                return await asyncio.gather(*[asyncio.to_thread(reward_func, [q], [p], [l])
                                              for q, p, l in (("P:yes", "P:", "yes"), ("P:no", "P:", "yes"))])

            infos = asyncio.run(run())
        finally:
            os.environ.pop("SVBENCH_ENV")
            os.environ.pop("SVBENCH_LABELS")
        self.assertEqual([i["rewards"] for i in infos], [[1.5], [0.0]])
        self.assertEqual(infos[0]["scores"], [1.5])
        self.assertEqual(sorted(infos[0]["extra_logs"]), sorted(infos[1]["extra_logs"]))
        post = self.posts()[0]
        self.assertEqual(post[1], "/get_reward?env=toy&labels=answer")
        self.assertEqual(post[3], "Bearer tok")
        self.assertNotIn("token=", post[1])


    def test_a_failed_request_is_a_failed_sample(self):
        # One sample per call, in a thread, no timeout of OpenRLHF's own: what
        # the function returns is that sample's reward, and raising leaves the
        # sample without one. A request that fails on its own is a sample with
        # reward 0, svbench_error 1 and the keys the others carry.
        os.environ["SVBENCH_ENV"] = "toy"
        os.environ["SVBENCH_LABELS"] = "answer"
        os.environ["SVBENCH_TIMEOUT"] = "1"
        try:
            reward_func = self.load()
            ok = reward_func(["P:yes"], ["P:"], ["yes"])
            for label in ("status:504", "status:503", "status:500", "status:429", "status:413", "sleep:3", "drop"):
                with self.subTest(label):
                    with self.assertLogs("svbench.openrlhf_reward", "WARNING"):
                        info = reward_func(["P:x"], ["P:"], [label])
                    self.assertEqual((info["rewards"], info["scores"]), ([0.0], [0.0]))
                    self.assertEqual(sorted(info["extra_logs"]), sorted(ok["extra_logs"]))
                    self.assertEqual(info["extra_logs"]["svbench_error"], [1.0])
                    self.assertEqual(info["extra_logs"]["accuracy"], [0.0])
            for label in ("status:400", "status:401"):  # a wrong set-up: loud
                with self.subTest(label), self.assertRaises(svbench.SvbenchError):
                    reward_func(["P:x"], ["P:"], [label])
        finally:
            for k in ("SVBENCH_ENV", "SVBENCH_LABELS", "SVBENCH_TIMEOUT"):
                os.environ.pop(k)
        for post in self.posts():
            self.assertEqual(post[3], "Bearer tok")
            self.assertNotIn("token", post[1])


class PackageTest(unittest.TestCase):
    def test_old_module_still_works(self):
        import svbench_client as sv

        for name in ("Client", "SvbenchError", "make_item", "trl_reward", "verifiers_reward", "compute_score"):
            self.assertTrue(hasattr(sv, name), name)

    def test_pip_install(self):
        try:
            subprocess.run([sys.executable, "-m", "pip", "--version"], check=True, capture_output=True)
        except (subprocess.CalledProcessError, OSError):
            self.skipTest("pip is not available for %s" % sys.executable)
        tmp = tempfile.mkdtemp()
        try:
            src = os.path.join(tmp, "src")  # a copy: pip builds in place and would leave build/ in the tree
            shutil.copytree(HERE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            target = os.path.join(tmp, "site")
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                                "--no-index", "--quiet", "--target", target, src], capture_output=True, text=True)
            if r.returncode != 0 and ("bdist_wheel" in r.stderr or "build dependencies" in r.stderr):
                # pip cannot build wheels offline here (no `wheel`, no index):
                # build with the same pyproject.toml through setuptools itself.
                b = subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "build",
                                    "--build-lib", target], capture_output=True, text=True, cwd=src)
                if b.returncode != 0 and "No module named 'setuptools'" in b.stderr:
                    self.skipTest("neither pip nor setuptools can build here: " + r.stderr.strip().splitlines()[-1])
                self.assertEqual(b.returncode, 0, b.stdout + b.stderr)
            else:
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            code = ("import svbench, svbench_client, svbench.verl, svbench.trl, svbench.openrlhf_reward, svbench.nemo_gym;"
                    "print(svbench.__file__)")
            r = subprocess.run([sys.executable, "-I", "-c", "import sys; sys.path.insert(0, %r); %s" % (target, code)],
                               capture_output=True, text=True, cwd=tmp)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.strip().startswith(target), r.stdout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
