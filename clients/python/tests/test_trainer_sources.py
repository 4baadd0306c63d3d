"""The adapters under the trainers' own code, taken from their repositories at
the pinned commits (trainer_sources.PINS), heavy imports stood in for.

    SVBENCH_SRC_VERL=… SVBENCH_SRC_TRL=… SVBENCH_SRC_OPENRLHF=… SVBENCH_SRC_VERIFIERS=… \\
        python3 -m unittest -v tests.test_trainer_sources

Each test names the trainer files it runs. Tests that need a live server
(sessions) also need SVBENCH_SESSIONS_URL (and SVBENCH_TOKEN), as
`go test ./server -run TestPythonSessionAdapters` sets them; the others use
test_adapters' stub server. A test whose trainer source is not there is
skipped with the variable to set.
"""

from __future__ import annotations

import json
import os
import unittest

import svbench
from tests import trainer_sources as ts
from tests.test_adapters import StubCase

# clients/python: the package, the compatibility modules and examples/.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LIVE = os.environ.get("SVBENCH_SESSIONS_URL")
live = unittest.skipUnless(LIVE, "SVBENCH_SESSIONS_URL not set: a server serving e2 (go test ./server -run "
                                 "TestPythonSessionAdapters sets it)")


def verl_prime_tree(src: ts.Source, dest: str) -> None:
    """verl's prime reward manager and the loader of custom reward functions,
    with ray, torch, psutil and transformers stood in for."""
    src.extract(dest,
                "verl/workers/reward_manager/prime.py",
                "verl/trainer/ppo/reward.py",
                "verl/utils/import_utils.py",
                "verl/utils/ray_utils.py")
    for mod in ("torch", "psutil", "transformers", "ray"):
        ts.write(dest, mod + ".py", ts.ANY_MODULE)
    ts.write(dest, "verl/__init__.py", "DataProto = object\n")
    ts.write(dest, "verl/utils/reward_score/__init__.py",
             "def default_compute_score(*a, **k):\n    raise AssertionError('the custom function was not used')\n")
    ts.write(dest, "verl/utils/transferqueue_utils.py", "def tqbridge(*a, **k):\n    return lambda f: f\n")
    ts.write(dest, "verl/workers/reward_manager/__init__.py", "def register(name):\n    return lambda cls: cls\n")
    ts.write(dest, "verl/workers/reward_manager/abstract.py",
             "class AbstractRewardManager:\n    pass\n\nRawRewardFn = object\n")
    ts.packages(dest, "verl/utils", "verl/trainer", "verl/trainer/ppo", "verl/workers")


PRIME_SCENARIO = """
    import json, multiprocessing, sys
    multiprocessing.set_start_method(sys.argv[1] if len(sys.argv) > 1 else %(method)r, force=True)
    from verl.trainer.ppo.reward import get_custom_reward_fn
    from verl.workers.reward_manager.prime import run_reward_scoring

    # load_reward_manager's path: get_custom_reward_fn(config) hands prime
    # partial(_call_with_kwargs, <function loaded by path>, reward_kwargs).
    fn = get_custom_reward_fn({"custom_reward_function": {"path": %(path)r, "name": %(name)r,
                                                          "reward_kwargs": {"rubric": "default"}}})
    # PrimeRewardManager.verify calls run_reward_scoring(..., num_processes=64).
    scores = run_reward_scoring(fn, completions=["yes", "no", "yes", "yes"], references=["yes", "yes", "yes", "yes"],
                                tasks=["toy", "toy", "toy", "sv-env-toy"],
                                extra_info=[{"index": 0}, {}, {"example_id": "bad"}, None], num_processes=64)
    print("SCORES " + json.dumps(scores))
"""


class VerlPrimeTest(StubCase):
    """verl/workers/reward_manager/prime.py (run_reward_scoring: a
    ProcessPoolExecutor, the function called positionally, float(result[0]))
    and verl/trainer/ppo/reward.py get_custom_reward_fn + verl/utils/
    import_utils.py load_extern_object (the file loaded by path as
    custom_module_<hash>), volcengine/verl b178a3c."""

    def run_prime(self, path: str, name: str, method: str) -> list[float]:
        src = ts.Source("verl")
        src.require(self)
        dest = ts.tempdir(self)
        verl_prime_tree(src, dest)
        r = ts.run_script(dest, PRIME_SCENARIO % {"path": path, "name": name, "method": method},
                          env={"SVBENCH_URL": self.url, "SVBENCH_TOKEN": "tok"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("SCORES ")]
        self.assertTrue(line, r.stdout + r.stderr)
        return json.loads(line[-1][len("SCORES "):])

    def test_compute_score_by_path_in_the_process_pool(self):
        for method in ("fork", "spawn"):  # Linux's default before Python 3.14, and what macOS and 3.14+ use
            with self.subTest(start_method=method):
                scores = self.run_prime(os.path.join(HERE, "svbench", "verl.py"), "compute_score", method)
                # right, wrong, failed item (0.0, as prime gives any failure), an alias of the env
                self.assertEqual(scores, [1.5, 0.0, 0.0, 1.5])

    def test_old_module_by_path(self):
        scores = self.run_prime(os.path.join(HERE, "svbench_client.py"), "compute_score", "fork")
        self.assertEqual(scores, [1.5, 0.0, 0.0, 1.5])


# -- OpenRLHF --------------------------------------------------------------------

OPENRLHF_SCENARIO = """
    import asyncio, json, os
    from openrlhf.utils.agent import SingleTurnAgentExecutor

    # --reward.remote_url <file>.py: the executor imports the file by path.
    executor = SingleTurnAgentExecutor(os.environ["REWARD_FILE"])

    class Tokenizer:  # one token per character
        def __call__(self, text, add_special_tokens=False, return_tensors=None):
            return {"input_ids": [Ids([ord(c) for c in text])]}

        def decode(self, ids, skip_special_tokens=False):
            return "".join(chr(i) for i in ids)

    class Ids(list):
        def tolist(self):
            return list(self)

    class Engine:  # the vLLM engine's generate: one output
        def __init__(self, text):
            self.text = text

        async def generate(self, prompt_token_ids, sampling_params, multi_modal_data=None):
            out = type("O", (), {"token_ids": [ord(c) for c in self.text], "finish_reason": "stop", "logprobs": None})
            return type("R", (), {"outputs": [out]})

    class Sampling:
        max_tokens, logprobs = 64, None

    async def main():
        labels = ["yes", "status:504", "status:503", "sleep:4", "drop", "status:401"]
        outs = await asyncio.gather(*[executor.execute("P:", label, Sampling(), 4096, Tokenizer(), Engine("yes"))
                                      for label in labels])
        return [{"label": l, "reward": o["reward"], "scores": o["scores"], "extra_logs": o["extra_logs"]}
                for l, o in zip(labels, outs)]

    print("OUTPUTS " + json.dumps(asyncio.run(main())))
"""


class OpenRLHFRewardFuncTest(StubCase):
    """openrlhf/utils/agent.py SingleTurnAgentExecutor (__init__ loads the
    reward_func file by path; execute generates, decodes the query and calls
    _fetch_rewards_via_func: reward_func in a thread, one sample, exceptions
    logged and the sample left without a reward), OpenRLHF/OpenRLHF 3c3be62."""

    def test_failed_requests_still_reward_their_samples(self):
        src = ts.Source("openrlhf")
        src.require(self)
        dest = ts.tempdir(self)
        src.extract(dest, "openrlhf/utils/agent.py", "openrlhf/utils/logging_utils.py")
        ts.packages(dest, "openrlhf", "openrlhf/utils")
        ts.write(dest, "aiohttp.py", ts.ANY_MODULE)  # the URL client, not used by a reward_func file
        r = ts.run_script(dest, OPENRLHF_SCENARIO, env={
            "REWARD_FILE": os.path.join(HERE, "svbench", "openrlhf_reward.py"), "SVBENCH_URL": self.url,
            "SVBENCH_TOKEN": "tok", "SVBENCH_ENV": "toy", "SVBENCH_LABELS": "answer", "SVBENCH_TIMEOUT": "2"})
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-6000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("OUTPUTS ")]
        self.assertTrue(line, r.stdout[-3000:] + r.stderr[-6000:])
        outs = {o["label"]: o for o in json.loads(line[-1][len("OUTPUTS "):])}
        ok = outs["yes"]
        self.assertEqual((ok["reward"], ok["scores"]), ([1.5], [1.5]))
        for label in ("status:504", "status:503", "sleep:4", "drop"):
            o = outs[label]
            self.assertEqual((o["reward"], o["scores"]), ([0.0], [0.0]), label)
            self.assertEqual(sorted(o["extra_logs"]), sorted(ok["extra_logs"]), label)
            self.assertEqual(o["extra_logs"]["svbench_error"], [1.0], label)
        # A wrong token scores nothing: OpenRLHF logs it and leaves the sample unrewarded.
        self.assertIsNone(outs["status:401"]["reward"])
        self.assertIn("Failed to fetch reward", r.stdout + r.stderr)
        for post in self.posts():
            self.assertEqual(post[3], "Bearer tok")
            self.assertNotIn("token", post[1])


# -- verl agent loop ---------------------------------------------------------------

# Our scripted policy for E2 rows: scan the file with the right scanner and
# OPA, then report what they found (the second rollout of a group reports
# nothing, so a group's rewards differ).
E2_POLICY = """
import json, re


def e2_calls(prompt):
    path = re.search(r"File path: (\\S+)", prompt[-1]["content"]).group(1)
    scanner = "run_trivy" if path.endswith(".tf") else "run_kubelinter"
    return [{"type": "function", "function": {"name": scanner, "arguments": {"path": path}}},
            {"type": "function", "function": {"name": "run_opa", "arguments": {"path": path}}}]


def e2_answer(tool_messages, report=True):
    seen = []
    for m in tool_messages if report else []:
        try:
            items = json.loads(m["content"])
        except ValueError:
            continue
        for f in items if isinstance(items, list) else []:
            sev = {"medium": "med", "critical": "high"}.get(f.get("severity"), f.get("severity") or "med")
            seen.append({"id": "%s/%s" % (f["tool"], f["rule_id"]), "severity": sev})
    return "<think>report</think>" + json.dumps({"violations": seen, "patch": "", "confidence": 0.6})
"""



OMEGACONF = '''
    import copy
    from collections.abc import Mapping

    import yaml


    def _wrap(v):
        if isinstance(v, dict):
            return DictConfig(v)
        if isinstance(v, list):
            return [_wrap(x) for x in v]
        return v


    class DictConfig(Mapping):
        def __init__(self, data):
            object.__setattr__(self, "_data", data)

        def __getattr__(self, key):
            try:
                return _wrap(self._data[key])
            except KeyError:
                raise AttributeError(key) from None

        def __getitem__(self, key):
            return _wrap(self._data[key])

        def get(self, key, default=None):
            return _wrap(self._data.get(key, default))

        def __contains__(self, key):
            return key in self._data

        def __iter__(self):
            return iter(self._data)

        def __len__(self):
            return len(self._data)


    class OmegaConf:
        @staticmethod
        def load(path):
            with open(path) as f:
                return _wrap(yaml.safe_load(f))

        @staticmethod
        def create(obj):
            return _wrap(obj)

        @staticmethod
        def to_container(node, resolve=True):
            if isinstance(node, DictConfig):
                return copy.deepcopy(node._data)
            if isinstance(node, list):
                return [OmegaConf.to_container(x) for x in node]
            return node
'''


def verl_agent_loop_tree(src: ts.Source, dest: str) -> None:
    """verl's tool agent loop, tool parser, tool and interaction registries,
    BaseTool, BaseInteraction and tool schemas as they are; from
    verl/experimental/agent_loop/agent_loop.py (ray, hydra, vLLM) only
    AgentLoopBase, DictConfigWrap and register, with a plain AgentLoopOutput."""
    src.extract(dest,
                "verl/experimental/agent_loop/tool_agent_loop.py",
                "verl/experimental/agent_loop/tool_parser.py",
                "verl/experimental/agent_loop/utils.py",
                "verl/interactions/base.py",
                "verl/interactions/utils/interaction_registry.py",
                "verl/tools/base_tool.py",
                "verl/tools/schemas.py",
                "verl/tools/utils/tool_registry.py",
                "verl/utils/ray_utils.py")
    ts.packages(dest, "verl", "verl/experimental", "verl/experimental/agent_loop", "verl/interactions",
                "verl/interactions/utils", "verl/tools", "verl/tools/utils", "verl/utils")
    path = "verl/experimental/agent_loop/agent_loop.py"
    ts.write(dest, path, "\n\n".join([
        "from abc import ABC, abstractmethod\nfrom typing import Any, Optional\n\nimport torch\n"
        "from omegaconf import DictConfig\nfrom PIL import Image\nfrom transformers import AutoProcessor, AutoTokenizer\n\n"
        "from verl.utils.ray_utils import get_event_loop\n\nRLHFDataset = object\nAsyncLLMServerManager = object\n",
        "def initialize_system_prompt(tokenizer, **kwargs):\n    return []\n",
        "class AgentLoopOutput:\n    def __init__(self, **fields):\n        self.__dict__.update(fields)\n",
        src.function(path, "DictConfigWrap"),
        src.function(path, "AgentLoopBase"),
        "_agent_loop_registry: dict[str, dict] = {}\n",
        src.function(path, "register"),
    ]))
    ts.write(dest, "verl/utils/rollout_trace.py", "def rollout_trace_op(func):\n    return func\n")
    ts.write(dest, "verl/utils/profiler/__init__.py", '''
        import contextlib
        import time


        @contextlib.contextmanager
        def simple_timer(name, timing):
            start = time.time()
            yield
            timing[name] = timing.get(name, 0.0) + time.time() - start
        ''')
    ts.write(dest, "omegaconf.py", OMEGACONF)
    ts.write(dest, "ray.py", ts.ANY_MODULE)
    ts.stub_missing(dest, "torch")
    ts.stub_missing(dest, "transformers")
    ts.stub_missing(dest, "PIL", submodules=("Image",))
    ts.write(dest, "e2_policy.py", E2_POLICY)


VERL_AGENT_LOOP_SCENARIO = """
    import asyncio, importlib, json, os, re
    import yaml
    from omegaconf import OmegaConf
    import svbench
    from svbench import verl_tools as vt
    import verl.experimental.agent_loop.tool_agent_loop  # registers tool_agent
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
    from e2_policy import e2_answer, e2_calls

    URL, EXAMPLES = os.environ["SVBENCH_URL"], os.environ["SVBENCH_EXAMPLES"]
    client = svbench.Client()
    with open("tools.yaml", "w") as f:
        f.write(vt.tool_config("e2", client=client))
    with open(os.path.join(EXAMPLES, "verl_svbench_interaction.yaml")) as f:
        inter = yaml.safe_load(f)
    inter["interaction"][0]["config"]["url"] = URL
    with open("interaction.yaml", "w") as f:
        yaml.safe_dump(inter, f)
    # AgentLoopWorker.__init__: entries of agent_loop_config_path join the registry.
    for entry in OmegaConf.load(os.path.join(EXAMPLES, "verl_svbench_agent_loop.yaml")):
        _agent_loop_registry[entry.name] = entry

    opened, steps = [], {}  # every session the adapters open and its steps, to look at afterwards
    create, step = svbench.Client.sessions_create, svbench.Client.sessions_step
    def recording_create(self, *a, **k):
        info = create(self, *a, **k)
        opened.append(info["session_id"])
        return info
    def recording_step(self, sid, message):
        steps[sid] = steps.get(sid, 0) + 1
        return step(self, sid, message)
    svbench.Client.sessions_create, svbench.Client.sessions_step = recording_create, recording_step

    class Tokenizer:  # one token per character; ChatML
        def apply_chat_template(self, messages, tools=None, add_generation_prompt=True, tokenize=True, **kw):
            text = "".join("<|im_start|>%s\\n%s<|im_end|>\\n" % (m["role"], m["content"]) for m in messages)
            return [ord(ch) for ch in text + ("<|im_start|>assistant\\n" if add_generation_prompt else "")]

        def decode(self, ids, skip_special_tokens=True):
            return "".join(chr(i) for i in ids)

    class Output:
        def __init__(self, text):
            self.token_ids, self.log_probs = [ord(ch) for ch in text], None
            self.num_preempted = self.routed_experts = None

    class Policy:  # AsyncLLMServerManager.generate
        async def generate(self, request_id, prompt_ids, sampling_params, image_data=None, video_data=None):
            text = "".join(chr(i) for i in prompt_ids)
            tools = re.findall(r"<\\|im_start\\|>tool\\n(.*?)<\\|im_end\\|>", text, re.S)
            if not tools:
                prompt = [{"role": "user", "content": text}]
                return Output("".join("<tool_call>%s</tool_call>" % json.dumps(c["function"]) for c in e2_calls(prompt)))
            return Output(e2_answer([{"content": t} for t in tools]))

    def config(response_length, max_assistant_turns=None):
        return OmegaConf.create({"data": {}, "actor_rollout_ref": {"rollout": {
            "prompt_length": 8192, "response_length": response_length, "multi_turn": {
                "max_user_turns": None, "max_assistant_turns": max_assistant_turns, "max_parallel_calls": 8,
                "max_tool_response_length": 100000, "tool_response_truncate_side": "middle", "format": "hermes",
                "tool_config_path": "tools.yaml", "interaction_config_path": "interaction.yaml"}}}})

    async def run(agent_name, cfg, ex):
        # AgentLoopWorker._run_agent_loop: hydra.utils.instantiate of the registry entry, then run().
        target = _agent_loop_registry[agent_name]["_target_"]
        module, _, name = target.rpartition(".")
        loop = getattr(importlib.import_module(module), name)(
            trainer_config=DictConfigWrap(cfg), server_manager=Policy(), tokenizer=Tokenizer(), processor=None,
            dataset_cls=None, dataset_config=DictConfigWrap(cfg.data))
        first = len(opened)
        out = await loop.run({}, raw_prompt=ex["prompt"], tools_kwargs={}, index=0, agent_name=agent_name,
                             extra_info={"interaction_kwargs": {"name": "svbench", "env": "e2",
                                                                "example_id": ex["example_id"]}})
        sessions = {}
        for sid in opened[first:]:
            try:
                client.sessions_get(sid)
                sessions[sid] = "open"
                client.sessions_delete(sid)  # the test's own clean-up
            except svbench.SvbenchError as e:
                sessions[sid] = e.code
        extra = dict(out.extra_fields)  # the reward loop merges these into extra_info
        return {"agent": agent_name, "turn_scores": out.extra_fields["turn_scores"], "sessions": sessions,
                "steps": [steps.get(sid, 0) for sid in opened[first:]],
                "unfinished": bool(extra.get("svbench_unfinished")),
                "score": vt.compute_score(data_source="e2", solution_str="", ground_truth=None, extra_info=extra)}

    ex = [e for e in client.examples("e2", limit=200)["examples"] if e["meta"].get("fixture_type") == "k8s"][0]
    # Room for the first turn's tool calls but not for their results: the
    # loop runs the tools, then stops in _handle_processing_tools_state.
    calls_len = len(asyncio.run(Policy().generate("", Tokenizer().apply_chat_template(ex["prompt"]), {})).token_ids)
    results = []
    for agent in ("svbench_tool_agent", "tool_agent"):
        results.append(dict(asyncio.run(run(agent, config(response_length=100000), ex)), case="whole"))
        results.append(dict(asyncio.run(run(agent, config(response_length=calls_len + 40), ex)),
                            case="response_length"))
        results.append(dict(asyncio.run(run(agent, config(100000, max_assistant_turns=1), ex)), case="max_turns"))
    print("RESULTS " + json.dumps(results))
"""


@live
class VerlAgentLoopTest(unittest.TestCase):
    """verl/experimental/agent_loop/tool_agent_loop.py ToolAgentLoop.run,
    volcengine/verl b178a3c, with its tool parser (hermes), tool and
    interaction registries loading clients/python/examples' configs, and
    AgentLoopBase; the agent loop picked through agent_loop_config_path
    (examples/verl_svbench_agent_loop.yaml) as AgentLoopWorker does. The
    model is a scripted policy behind AsyncLLMServerManager.generate."""

    def test_cut_off_trajectories_close_their_sessions(self):
        ts.require_modules(self, "pydantic", "regex", "yaml")
        src = ts.Source("verl")
        src.require(self)
        dest = ts.tempdir(self)
        verl_agent_loop_tree(src, dest)
        r = ts.run_script(dest, VERL_AGENT_LOOP_SCENARIO, env={"SVBENCH_URL": LIVE,
                                                               "SVBENCH_EXAMPLES": os.path.join(HERE, "examples")})
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-6000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULTS ")]
        self.assertTrue(line, r.stdout[-3000:] + r.stderr[-6000:])
        res = {(x["agent"], x["case"]): x for x in json.loads(line[-1][len("RESULTS "):])}
        for agent in ("svbench_tool_agent", "tool_agent"):
            whole = res[agent, "whole"]
            self.assertEqual(len(whole["turn_scores"]), 1, whole)
            self.assertGreater(whole["score"]["score"], 0)
            self.assertEqual(whole["score"]["svbench_unfinished"], 0.0)
            self.assertEqual(list(whole["sessions"].values()), ["session_not_found"], "ended and closed")
            self.assertEqual(whole["steps"], [3])  # two tool calls, then the answer
        for case, steps in (("response_length", [2]), ("max_turns", [0])):
            ours, theirs = res["svbench_tool_agent", case], res["tool_agent", case]
            self.assertEqual(ours["turn_scores"], [])
            self.assertEqual(ours["steps"], steps, "cut off after the tools ran, or before any step")
            self.assertEqual(list(ours["sessions"].values()), ["session_not_found"], ours)
            self.assertEqual(ours["score"], {"score": 0.0, "svbench_error": 1.0, "svbench_unfinished": 1.0})
            # verl's own loop leaves the session open: what the agent loop is for
            self.assertEqual(list(theirs["sessions"].values()), ["open"], theirs)


# -- verifiers: the NeMo Gym taskset against svbench's resources-server routes ----

HTTPX = '''
    """httpx.AsyncClient as NeMoGymState.post uses it: headers and cookies on
    every request, post(url, json=), the answer's status, text, json and
    Set-Cookie values."""
    import asyncio
    import http.cookies
    import json as _json
    import urllib.error
    import urllib.request


    class HTTPError(Exception):
        pass


    class HTTPStatusError(HTTPError):
        def __init__(self, message, response):
            super().__init__(message)
            self.response = response


    class Timeout:
        def __init__(self, *a, **k):
            pass


    class Response:
        def __init__(self, status, headers, body):
            self.status_code, self.headers, self.content = status, headers, body
            self.text = body.decode("utf-8", "replace")
            self.cookies = {}
            for value in headers.get_all("Set-Cookie") or []:
                jar = http.cookies.SimpleCookie()
                jar.load(value)
                self.cookies.update({k: m.value for k, m in jar.items()})

        @property
        def is_success(self):
            return 200 <= self.status_code < 300

        def json(self):
            return _json.loads(self.text)

        def raise_for_status(self):
            if not self.is_success:
                raise HTTPStatusError("%d %s" % (self.status_code, self.text[:300]), self)
            return self


    class AsyncClient:
        def __init__(self, headers=None, cookies=None, timeout=None, **kwargs):
            self.headers, self.cookies, self.timeout = dict(headers or {}), dict(cookies or {}), timeout

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            return False

        async def post(self, url, json=None):
            return await asyncio.to_thread(self._post, url, json)

        def _post(self, url, body):
            headers = {"Content-Type": "application/json", **self.headers}
            if self.cookies:
                headers["Cookie"] = "; ".join("%s=%s" % kv for kv in self.cookies.items())
            req = urllib.request.Request(url, data=_json.dumps(body).encode(), headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as r:
                    return Response(r.status, r.headers, r.read())
            except urllib.error.HTTPError as e:
                return Response(e.code, e.headers, e.read())
'''


def verifiers_nemo_gym_tree(src: ts.Source, dest: str) -> None:
    """verifiers/v1/tasksets/nemo_gym (taskset, toolset, response) with
    verifiers' message types, State and reward decorator as they are; the
    v1 framework around them (Task, Taskset, the MCP toolset base, runtimes,
    the Responses dialect) and httpx/mcp stood in for."""
    src.extract(dest,
                "verifiers/v1/tasksets/nemo_gym/__init__.py",
                "verifiers/v1/tasksets/nemo_gym/taskset.py",
                "verifiers/v1/tasksets/nemo_gym/toolset.py",
                "verifiers/v1/tasksets/nemo_gym/response.py",
                "verifiers/v1/types.py",
                "verifiers/v1/state.py",
                "verifiers/v1/utils/generic.py",
                "verifiers/v1/utils/decorators.py")
    ts.packages(dest, "verifiers", "verifiers/v1", "verifiers/v1/tasksets", "verifiers/v1/utils",
                "verifiers/v1/dialects", "verifiers/v1/envs", "renderers", "mcp", "mcp/client", "mcp/server")
    ts.write(dest, "renderers/base.py", "MultiModalData = dict\n")
    ts.write(dest, "httpx.py", HTTPX)
    ts.write(dest, "mcp/__init__.py", "class ClientSession:\n    pass\n")
    ts.write(dest, "mcp/types.py", '''
        class _Fields:
            def __init__(self, **fields):
                self.__dict__.update(fields)


        class CallToolResult(_Fields):
            pass


        class TextContent(_Fields):
            pass


        class Tool(_Fields):
            pass
        ''')
    ts.write(dest, "mcp/client/streamable_http.py", "create_mcp_http_client = streamable_http_client = None\n")
    ts.write(dest, "mcp/server/fastmcp.py", "class FastMCP:\n    pass\n")
    ts.write(dest, "verifiers/v1/mcp.py", '''
        from typing import Generic, TypeVar

        from pydantic import BaseModel

        C = TypeVar("C")
        S = TypeVar("S")


        class SharedToolsetConfig(BaseModel):
            pass


        class Toolset(Generic[C, S]):
            def __init__(self, config=None):
                self.config, self.state = config, None
        ''')
    ts.write(dest, "verifiers/v1/task.py", '''
        from typing import Any, Generic, TypeVar

        from pydantic import BaseModel

        D, S, C = TypeVar("D"), TypeVar("S"), TypeVar("C")


        class TaskConfig(BaseModel):
            pass


        class TaskData(BaseModel):
            idx: int
            name: str
            prompt: list[Any]


        class Task(Generic[D, S, C]):
            def __init__(self, data, config):
                self.data, self.config = data, config
        ''')
    ts.write(dest, "verifiers/v1/taskset.py", '''
        from typing import Generic, TypeVar

        from pydantic import BaseModel

        T, C = TypeVar("T"), TypeVar("C")


        class TasksetConfig(BaseModel):
            pass


        class Taskset(Generic[T, C]):
            def __init__(self, config):
                self.config = config
        ''')
    ts.write(dest, "verifiers/v1/dialects/responses.py", '''
        class ResponsesDialect:
            def parse_request(self, params):
                return type("Request", (), {"messages": list(params["input"])})()
        ''')
    ts.write(dest, "verifiers/v1/envs/single_agent.py", "class SingleAgentEnv:\n    pass\n")
    ts.write(dest, "verifiers/v1/runtimes.py", ts.ANY_MODULE)
    ts.write(dest, "verifiers/v1/trace.py", "class Trace:\n    pass\n")
    ts.write(dest, "e2_policy.py", E2_POLICY)


VERIFIERS_NEMO_GYM_SCENARIO = """
    import asyncio, json, os, time
    import svbench
    from svbench import nemo_gym
    from verifiers.v1.tasksets.nemo_gym import NeMoGymConfig, NeMoGymTaskset
    from verifiers.v1.tasksets.nemo_gym.toolset import NeMoGymState, NeMoGymToolset
    from verifiers.v1.types import AssistantMessage, ToolCall, ToolMessage
    from e2_policy import e2_answer, e2_calls

    URL, TOKEN = os.environ["SVBENCH_URL"], os.environ["SVBENCH_TOKEN"]
    client = svbench.Client()
    picked = {}
    for ex in client.examples("e2", limit=200)["examples"]:
        picked.setdefault(ex["meta"].get("fixture_type"), ex)
    with open("svbench_e2.jsonl", "w") as f:  # python3 -m svbench.nemo_gym e2
        for ex in (picked["k8s"], picked["tf"]):
            f.write(json.dumps(nemo_gym.row("e2", ex)) + "\\n")

    class Node:
        def __init__(self, message, sampled):
            self.message, self.sampled, self.timestamp = message, sampled, time.time()

    class Trace:  # what the taskset and trace_to_nemo_response read of a Trace
        def __init__(self):
            self.id, self.state, self.info, self.metrics, self.branches = "t1", NeMoGymState(), {}, {}, []

        def record_metric(self, name, value):
            self.metrics[name] = value

    async def rollout(task, tools_config):
        trace = Trace()
        await task.setup(trace, None)  # POST /seed_session with the row; keeps the cookie
        toolset = NeMoGymToolset(tools_config)
        toolset.state = trace.state  # the shared tool server's per-rollout state
        listed = [t.name for t in await toolset.list_tools()]
        calls = [ToolCall(id="call_%d" % i, name=c["function"]["name"], arguments=json.dumps(c["function"]["arguments"]))
                 for i, c in enumerate(e2_calls(task.data.prompt))]
        nodes = [Node(AssistantMessage(content="", tool_calls=calls), True)]
        for call in calls:  # the harness's tool calls through the toolset: POST /<tool> with the cookie
            result = await toolset.call_tool(call.name, json.loads(call.arguments))
            assert not result.isError, result.content[0].text
            nodes.append(Node(ToolMessage(tool_call_id=call.id, content=result.content[0].text), False))
        answer = e2_answer([{"content": n.message.content} for n in nodes[1:]])
        nodes.append(Node(AssistantMessage(content=answer), True))
        trace.branches = [type("Branch", (), {"nodes": nodes})()]
        reward = await task.nemo_gym(trace)  # POST /verify with the row and the Responses object
        after = await trace.state.post(calls[0].name, json.loads(calls[0].arguments))
        transcript = [{"role": "assistant", "content": "", "tool_calls": [c.model_dump() for c in calls]}]
        transcript += [{"role": "tool", "tool_call_id": n.message.tool_call_id, "content": n.message.content}
                       for n in nodes[1:-1]]
        transcript.append({"role": "assistant", "content": answer})
        return {"example_id": task.data.row["verifier_metadata"]["example_id"], "reward": reward, "tools": listed,
                "metrics": trace.metrics, "after_verify": after.status_code, "transcript": transcript,
                "cookies": sorted(trace.state.cookies)}

    async def main():
        config = NeMoGymConfig(dataset="svbench_e2.jsonl",
                               task={"resources_url": URL, "headers": {"Authorization": "Bearer " + TOKEN}})
        tasks = list(NeMoGymTaskset(config).load())
        out = [await rollout(t, config.tools) for t in tasks]
        bare = NeMoGymConfig(dataset="svbench_e2.jsonl", task={"resources_url": URL})
        try:
            await rollout(list(NeMoGymTaskset(bare).load())[0], bare.tools)
            unauthenticated = "accepted"
        except Exception as e:  # raise_for_status on /seed_session
            unauthenticated = str(e)[:3]
        return {"rollouts": out, "without_token": unauthenticated}

    print("NEMO " + json.dumps(asyncio.run(main())))
"""


@live
class VerifiersNeMoGymTest(unittest.TestCase):
    """verifiers/v1/tasksets/nemo_gym (NeMoGymTaskset.load, NeMoGymTask.setup
    and its nemo_gym reward, NeMoGymState.post with headers and the cookie,
    NeMoGymToolset.list_tools/call_tool on the row's direct tools,
    trace_to_nemo_response), PrimeIntellect-ai/verifiers a60a606, against
    svbench's /seed_session, /<tool>, /verify with a bearer token; the E2
    fixtures of test_session_adapters (a k8s and a Terraform row, scanner
    and OPA calls, an answer listing the findings)."""

    def test_e2_rollouts_with_a_token_and_native_tools(self):
        ts.require_modules(self, "pydantic", "typing_extensions")
        src = ts.Source("verifiers")
        src.require(self)
        if not os.environ.get("SVBENCH_TOKEN"):
            self.skipTest("SVBENCH_TOKEN not set: the test is about a server that requires one")
        dest = ts.tempdir(self)
        verifiers_nemo_gym_tree(src, dest)
        r = ts.run_script(dest, VERIFIERS_NEMO_GYM_SCENARIO, env={"SVBENCH_URL": LIVE})
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-6000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("NEMO ")]
        self.assertTrue(line, r.stdout[-3000:] + r.stderr[-6000:])
        out = json.loads(line[-1][len("NEMO "):])
        c = svbench.Client(url=LIVE)
        self.assertEqual(len(out["rollouts"]), 2)
        for ro in out["rollouts"]:
            want = c.score([{"env": "e2", "example_id": ro["example_id"], "completion": ro["transcript"]}])[0]
            self.assertAlmostEqual(ro["reward"], want["reward"], places=9)
            self.assertGreater(ro["reward"], 0)
            for name, value in want["components"].items():
                self.assertAlmostEqual(ro["metrics"][name], value, places=9)
            self.assertEqual(ro["metrics"].get("svbench_solved"), 1.0 if want.get("solved") else 0.0)
            self.assertEqual(set(ro["tools"]), {"run_kubelinter", "run_trivy", "run_opa"})
            self.assertEqual(ro["cookies"], ["svbench_nemo_gym_session"])
            self.assertGreaterEqual(ro["after_verify"], 400, "verify closes the cookie's session")
        self.assertEqual(out["without_token"], "401")


# -- TRL -----------------------------------------------------------------------


def trl_async_tree(src: ts.Source, dest: str) -> None:
    """trl/experimental/async_grpo/async_rollout_worker.py as it is, with
    get_callable_name from trl/trainer/utils.py; its other imports (vLLM
    checks, chat templates, aiohttp, accelerate, datasets) stood in for."""
    src.extract(dest, "trl/experimental/async_grpo/async_rollout_worker.py")
    ts.packages(dest, "trl", "trl/experimental", "trl/experimental/async_grpo", "trl/trainer")
    ts.write(dest, "trl/trainer/utils.py", "import functools\nfrom typing import Callable\n\n\n"
             + src.function("trl/trainer/utils.py", "get_callable_name")
             + "\n\ndef print_prompt_completions_sample(*a, **k):\n    pass\n")
    ts.write(dest, "trl/import_utils.py", "def is_vllm_available(min_version=None):\n    return True\n")
    ts.write(dest, "trl/chat_template_utils.py", '''
        _SUPPORTS_RESPONSE_TEMPLATE = True


        def add_response_schema(tokenizer):
            return tokenizer


        def is_chat_template_prefix_preserving(tokenizer):
            return True


        def get_training_chat_template(tokenizer):
            return None


        def parse_response(*a, **k):
            raise AssertionError("the scripted loop parses nothing")
        ''')
    ts.write(dest, "aiohttp.py", '''
        class ClientError(Exception):
            pass


        class TCPConnector:
            def __init__(self, *a, **k):
                pass


        class ClientTimeout:
            def __init__(self, *a, **k):
                pass


        class ClientSession:
            def __init__(self, *a, **k):
                pass

            async def __aenter__(self):
                return self

            async def __aexit__(self, *exc):
                return False
        ''')
    ts.write(dest, "accelerate/__init__.py", "")
    ts.write(dest, "accelerate/logging.py", "import logging\n\n\ndef get_logger(name):\n    return logging.getLogger(name)\n")
    ts.write(dest, "accelerate/state.py", "class PartialState:\n    pass\n")
    ts.stub_missing(dest, "datasets")
    ts.stub_missing(dest, "transformers")
    ts.write(dest, "e2_policy.py", E2_POLICY)
    # The model: _generate_one plays the scripted policy instead of asking
    # vLLM, and runs the tool calls through the loop's own _execute_tool_calls.
    ts.write(dest, "scripted_loop.py", '''
        import collections
        import json
        import uuid

        from e2_policy import e2_answer, e2_calls
        from trl.experimental.async_grpo.async_rollout_worker import (AsyncRolloutWorker, TrainingSequence,
                                                                       _AsyncRolloutLoop)


        class Tokenizer:
            response_template = "scripted"


        class ScriptedLoop(_AsyncRolloutLoop):
            async def _generate_one(self, prompt, tool_dict, tools, group_id=0):
                n = self.__dict__.setdefault("_nth", collections.Counter())
                n[group_id] += 1
                calls = e2_calls(prompt)
                first = {"role": "assistant", "content": "", "tool_calls": calls}
                tool_messages, n_calls, n_failures = self._execute_tool_calls(calls, tool_dict)
                answer = {"role": "assistant", "content": e2_answer(tool_messages, report=n[group_id] % 2 == 1)}
                seq = TrainingSequence([1, 2, 3, 4], [0, 1, 1, 1], [0.0] * 4, uuid.uuid4().hex)
                return [first] + tool_messages + [answer], [2, 3, 4], [seq], n_calls, n_failures, None


            async def _run_loops(self, stop_event):
                try:
                    await super()._run_loops(stop_event)
                finally:
                    # TRL never says a pooled environment's rollout is over, and
                    # the child ends with os._exit: record what is left open,
                    # then close it (the test's clean-up, not the adapter's).
                    left = [env.episode for pool in self._environment_pool.values() for env in pool
                            if env.episode is not None and not env.episode.done]
                    with open("left_open.json", "w") as f:
                        json.dump([ep.session_id for ep in left], f)
                    for ep in left:
                        ep.close()


        class ScriptedWorker(AsyncRolloutWorker):
            _loop_cls = ScriptedLoop
        ''')


ASYNC_GRPO_SCENARIO = """
    import json, queue
    import svbench
    from svbench import trl_env
    from scripted_loop import ScriptedWorker, Tokenizer

    client = svbench.Client()
    rows, kinds = [], set()
    for row in trl_env.trl_env_dataset("e2", client=client, limit=200):
        kind = row["prompt"][-1]["content"].split("File path: ")[1].split()[0].endswith(".tf")
        if kind not in kinds:
            kinds.add(kind)
            rows.append(row)
    funcs = trl_env.trl_env_reward_funcs("e2", client=client) + \\
        trl_env.trl_env_reward_funcs("e2", client=client, components=True)
    worker = ScriptedWorker(model_name="policy", dataset=rows, reward_funcs=funcs, processing_class=Tokenizer(),
                            environment_factory=trl_env.trl_environment("e2", client=client),
                            num_generations=2, max_inflight_tasks=2)
    worker.start()  # pickles reward_funcs and environment_factory, spawns the rollout process
    try:
        samples = [worker.rollout_buffer.get(timeout=300) for _ in range(4)]
    finally:
        worker.stop()
    with open("left_open.json") as f:
        left_open = json.load(f)
    print("SAMPLES " + json.dumps([{"prompt": s.prompt, "completion": s.completion, "metrics": s.metrics,
                                    "advantage": s.advantage, "group": s.group_id} for s in samples]))
    print("LEFT_OPEN " + json.dumps(left_open))
"""


@live
class TRLAsyncGRPOTest(unittest.TestCase):
    """trl/experimental/async_grpo/async_rollout_worker.py, huggingface/trl
    f2cd577: AsyncRolloutWorker.start() (pickles every reward function and
    the environment factory, spawns the child), _child_main, the
    _AsyncRolloutLoop's generate loop (environment pool, reset(**row),
    get_reward when defined, _execute_tool_calls) and _score_group (reward
    functions without environments, plain ones in threads, numpy sums and
    advantages); only _generate_one is ours, a scripted policy in place of
    vLLM."""

    def test_tool_episodes_through_the_rollout_worker(self):
        ts.require_modules(self, "numpy")
        src = ts.Source("trl")
        src.require(self)
        dest = ts.tempdir(self)
        trl_async_tree(src, dest)
        r = ts.run_script(dest, ASYNC_GRPO_SCENARIO, env={"SVBENCH_URL": LIVE})
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-6000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("SAMPLES ")]
        self.assertTrue(line, r.stdout[-3000:] + r.stderr[-6000:])
        samples = json.loads(line[-1][len("SAMPLES "):])
        c = svbench.Client(url=LIVE)
        rows = {json.dumps(r["prompt"]): r for r in svbench.trl_env_dataset("e2", client=c, limit=200)}
        weights = svbench.trl_reward_weights("e2", client=c)
        names = [comp["name"] for comp in svbench.rubric_info(c, "e2")["components"]]
        totals = []
        for s in samples:
            row = rows[json.dumps(s["prompt"])]
            want = c.score([{"env": "e2", "example_id": row["example_id"], "completion": s["completion"]}])[0]
            m = s["metrics"]
            self.assertAlmostEqual(m["rewards/svbench_e2_session_reward"], want["reward"], places=9)
            self.assertAlmostEqual(sum(w * m["rewards/svbench_e2_" + n] for w, n in zip(weights, names)),
                                   want["reward"], places=9)
            self.assertEqual([x["role"] for x in s["completion"]], ["assistant", "tool", "tool", "assistant"])
            self.assertNotIn("svbench: ", s["completion"][1]["content"])  # the tools ran in a session
            totals.append(want["reward"])
        self.assertGreater(max(totals), min(totals))
        self.assertTrue(any(s["advantage"] != 0 for s in samples))
        # Sessions still open when the worker stopped: at most one per pooled
        # environment (max_inflight_tasks=2).
        left = json.loads([ln for ln in r.stdout.splitlines() if ln.startswith("LEFT_OPEN ")][-1][len("LEFT_OPEN "):])
        self.assertLessEqual(len(left), 2)


GRPO_SCENARIO = """
    import asyncio, contextlib, inspect, json, logging, threading
    import torch
    from torch import nn
    import svbench
    from svbench import trl_env
    from e2_policy import e2_answer, e2_calls

    # GRPOTrainer._calculate_rewards, as the file writes it; the names it
    # takes from its module are given here (profiling and gather are no-ops
    # on one process).
    ns = dict(torch=torch, nn=nn, inspect=inspect, asyncio=asyncio, logger=logging.getLogger("trl"),
              is_conversational=lambda example: False, apply_chat_template=None, gather=lambda t: t,
              profiling_decorator=lambda f: f, profiling_context=lambda trainer, name: contextlib.nullcontext())
    with open("grpo_calculate_rewards.py") as f:
        exec(f.read(), ns)

    client = svbench.Client()
    factory = trl_env.trl_environment("e2", client=client)
    funcs = trl_env.trl_env_reward_funcs("e2", client=client) + \\
        trl_env.trl_env_reward_funcs("e2", client=client, components=True)

    class Trainer:
        _calculate_rewards = ns["_calculate_rewards"]

    t = Trainer()
    t.accelerator = type("A", (), {"device": "cpu"})()
    t.reward_funcs = list(funcs)
    t.reward_func_names = [f.__name__ for f in funcs]  # get_callable_name: the instances' __name__
    t.reward_processing_classes = [None] * len(funcs)
    t.state, t.chat_template_kwargs = None, {}
    t._log_completion_extra = t._log_metric = lambda *a, **k: None
    t.async_loop = asyncio.new_event_loop()
    threading.Thread(target=t.async_loop.run_forever, daemon=True).start()

    # __init__: one probe instance; get_reward would add a reward column.
    probe = factory()
    assert not any(n == "get_reward" for n, _ in inspect.getmembers(probe, inspect.ismethod))
    rows, kinds = [], set()
    for row in trl_env.trl_env_dataset("e2", client=client, limit=200):
        kind = row["prompt"][-1]["content"].split("File path: ")[1].split()[0].endswith(".tf")
        if kind not in kinds:
            kinds.add(kind)
            rows.append(row)
    inputs = [r for r in rows for _ in range(2)]  # two generations per prompt
    # _generate_and_score_completions: pooled instances, reset(**row) each.
    t.environments = [probe] + [factory() for _ in inputs[1:]]
    for env, x in zip(t.environments, inputs):
        env.reset(**x)
    prompts = [list(x["prompt"]) for x in inputs]
    completions = []
    for i, (env, prompt) in enumerate(zip(t.environments, prompts)):
        calls = e2_calls(prompt)
        completion = [{"role": "assistant", "content": "", "tool_calls": calls}]
        tools = {n: m for n, m in inspect.getmembers(env, inspect.ismethod) if n != "reset" and not n.startswith("_")}
        for call in calls:  # _tool_call_loop: sync_tool_dict[name](**function["arguments"]), str(result)
            fn = call["function"]
            completion.append({"role": "tool", "name": fn["name"], "content": str(tools[fn["name"]](**fn["arguments"]))})
        completion.append({"role": "assistant", "content": e2_answer(completion[1:], report=i % 2 == 0)})
        completions.append(completion)
    rewards = t._calculate_rewards(inputs, prompts, completions, [[1, 2, 3]] * len(inputs))
    print("REWARDS " + json.dumps({"names": t.reward_func_names, "rewards": rewards.tolist(),
                                   "episodes": [{"example_id": x["example_id"], "transcript": e.episode.transcript,
                                                 "session_id": e.episode.session_id, "turns": e.episode.turns}
                                                for x, e in zip(inputs, t.environments)]}))
"""


@live
class TRLGRPOTest(unittest.TestCase):
    """trl/trainer/grpo_trainer.py GRPOTrainer._calculate_rewards, huggingface/
    trl f2cd577: plain reward functions called in turn with environments,
    the columns, trainer_state and the log hooks, None to NaN in a torch
    tensor; the environment pool, reset(**row) and the tool calls as
    _generate_and_score_completions and _tool_call_loop make them."""

    def test_tool_episodes_scored_by_calculate_rewards(self):
        ts.require_modules(self, "torch")
        src = ts.Source("trl")
        src.require(self)
        dest = ts.tempdir(self)
        ts.write(dest, "grpo_calculate_rewards.py", src.function("trl/trainer/grpo_trainer.py",
                                                                 "GRPOTrainer._calculate_rewards"))
        ts.write(dest, "e2_policy.py", E2_POLICY)
        r = ts.run_script(dest, GRPO_SCENARIO, env={"SVBENCH_URL": LIVE})
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr[-6000:])
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("REWARDS ")]
        self.assertTrue(line, r.stdout[-3000:] + r.stderr[-6000:])
        out = json.loads(line[-1][len("REWARDS "):])
        c = svbench.Client(url=LIVE)
        weights = svbench.trl_reward_weights("e2", client=c)
        for row, ep in zip(out["rewards"], out["episodes"]):
            want = c.score([{"env": "e2", "example_id": ep["example_id"], "completion": ep["transcript"]}])[0]
            self.assertAlmostEqual(row[0], want["reward"], places=5)  # float32 tensor
            self.assertAlmostEqual(sum(w * v for w, v in zip(weights, row[1:])), want["reward"], places=5)
            self.assertEqual(ep["turns"], 3)  # a step per tool call, then the answer
            with self.assertRaises(svbench.SvbenchError):
                c.sessions_get(ep["session_id"])  # finished and closed
        self.assertGreater(out["rewards"][0][0], out["rewards"][1][0])


if __name__ == "__main__":
    unittest.main()
