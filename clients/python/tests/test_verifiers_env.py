"""svbench.verifiers_env (the verifiers v1 taskset and env) driven the way
verifiers v1 drives them, with a scripted policy in place of the model:
``Env.run(task, agents)`` -> ``agents.agent.interaction(task)`` ->
``interaction.turn(...)`` per user turn -> leaving the interaction finishes
the rollout and runs ``Task.score(trace)``, whose rewards land on
``trace.rewards`` (``trace.reward`` is their weighted sum).

Offline tests always run. The live ones need a server serving e1, e2 and e6
at SVBENCH_VERIFIERS_URL (and SVBENCH_TOKEN if it has one), as
`go test ./server -run TestPythonSessionAdapters/test_verifiers_env` starts it:

    SVBENCH_VERIFIERS_URL=http://127.0.0.1:8080 python3 -m unittest -v tests.test_verifiers_env

Every live episode checks that the trace's reward is the one /v1/score gives
the transcript that was played, component by component with the server's weights.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
import unittest
from dataclasses import dataclass, field
from typing import Any, Callable

import svbench
import svbench_verifiers
from svbench import verifiers_env as ve

URL = os.environ.get("SVBENCH_VERIFIERS_URL")
live = unittest.skipUnless(URL, "SVBENCH_VERIFIERS_URL not set: run via go test ./server -run TestPythonSessionAdapters/test_verifiers_env")


# -- the parts of verifiers v1 the env touches (verifiers/v1/agent.py, trace.py) --------


@dataclass
class Reward:
    score: float
    weight: float = 1.0

    @property
    def value(self) -> float:
        return self.score * self.weight


@dataclass
class Trace:
    """verifiers.v1.Trace's fields and methods that tasks and envs use."""

    info: dict = field(default_factory=dict)
    rewards: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    assistant_messages: list = field(default_factory=list)
    stop_condition: Any = None
    is_completed: bool = False

    @property
    def reward(self) -> float:
        return sum(r.value for r in self.rewards.values() if r is not None)

    def record_reward(self, name, value, weight=1.0):
        self.rewards[name] = Reward(float(value), float(weight))

    def record_metric(self, name, value):
        self.metrics[name] = float(value)

    def stop(self, condition):
        self.is_completed = True
        if self.stop_condition is None:
            self.stop_condition = condition


@dataclass(frozen=True)
class Segment:
    messages: list
    terminated: bool = False


class Interaction:
    """Interaction.turn's contract: a prompted task opens with a bare turn();
    each later turn takes the user's messages; the policy's reply comes back
    as a Segment; past max_turns the segment is terminated."""

    def __init__(self, task, policy: Callable[[list, int], str], max_turns: int = 8):
        self.trace = Trace()
        self.task = task
        self.policy = policy
        self.max_turns = max_turns
        self.user_turns: list = []
        self.started = False

    async def turn(self, message=None) -> Segment:
        if not self.started and message is not None:
            raise ValueError("the task's prompt opens this exchange: take its first reply with a bare turn()")
        if self.started and message is None:
            raise ValueError("this exchange takes its next user message")
        self.started = True
        if message is not None:
            self.user_turns.append(message)
        if len(self.trace.assistant_messages) >= self.max_turns:
            self.trace.stop("max_turns")
            return Segment([], terminated=True)
        reply = {"role": "assistant", "content": self.policy(message or [], len(self.trace.assistant_messages) + 1)}
        self.trace.assistant_messages.append(reply)
        return Segment([reply])


class Agent:
    def __init__(self, policy, max_turns=8):
        self.policy, self.max_turns, self.interactions = policy, max_turns, []

    @contextlib.asynccontextmanager
    async def interaction(self, task):
        it = Interaction(task, self.policy, self.max_turns)
        self.interactions.append(it)
        try:
            yield it
        finally:
            it.trace.stop("user_closed")
            await task.score(it.trace)  # closing the rollout runs the task's scoring


class Agents:
    def __init__(self, agent):
        self.agent = agent


# -- offline -----------------------------------------------------------------------------


class OfflineTest(unittest.TestCase):
    def test_exports_and_stand_ins(self):
        self.assertEqual(svbench_verifiers.__all__, ["SvbenchTaskset", "SvbenchEnv"])
        self.assertIs(svbench_verifiers.SvbenchTaskset, ve.SvbenchTaskset)
        self.assertTrue(issubclass(ve.SvbenchTaskset, ve.vf.Taskset))
        self.assertTrue(issubclass(ve.SvbenchEnv, ve.vf.Env))
        self.assertTrue(issubclass(ve.SvbenchTask, ve.vf.Task))
        self.assertTrue(inspect.iscoroutinefunction(ve.SvbenchEnv.run))
        self.assertEqual(list(inspect.signature(ve.SvbenchEnv.run).parameters), ["self", "task", "agents"])
        self.assertTrue(inspect.iscoroutinefunction(ve.SvbenchTask.svbench))
        self.assertEqual(getattr(ve.SvbenchTask.svbench, "_vf_weight", None), 1.0)
        if not ve.HAVE_VERIFIERS:
            self.assertEqual(list(inspect.signature(ve.vf.Task.setup).parameters), ["self", "trace", "runtime"])
            self.assertEqual(list(inspect.signature(ve.vf.Task.score).parameters), ["self", "trace", "runtime"])
        cfg = ve.load_taskset("e2", split="test", base_url="http://x:1", limit=3).config
        self.assertEqual((cfg.id, cfg.env, cfg.split, cfg.limit, cfg.task.base_url), ("svbench-verifiers", "e2", "test", 3, "http://x:1"))
        self.assertEqual(ve.load_taskset().config.split, "train")
        self.assertEqual(ve.SvbenchEnvConfig().agent.harness, {"id": "null"})

    def test_messages(self):
        msg = ve.assistant_message({"role": "assistant", "content":
                                    '<think>maybe <tool_call>{"name": "run_opa", "arguments": {}}</tool_call></think>'
                                    'Scan.<tool_call>{"name": "run_trivy", "arguments": {"path": "a.tf"}}</tool_call>'}, "c")
        self.assertEqual(msg["content"], "Scan.")
        self.assertEqual([c["name"] for c in msg["tool_calls"]], ["run_trivy"])  # the call inside thinking is not made
        self.assertIn("run_opa", msg["reasoning_content"])
        obs = [{"role": "tool", "content": "A"}, {"role": "tool", "content": "B"}, {"role": "user", "content": "next?"}]
        self.assertEqual(ve.observation_messages(obs), [
            {"role": "user", "content": "<tool_response>\nA\n</tool_response>\n<tool_response>\nB\n</tool_response>"},
            {"role": "user", "content": "next?"}])
        self.assertIn('"name": "run_x"', ve.tools_system_text([{"type": "function", "function": {"name": "run_x"}}]))


# -- live --------------------------------------------------------------------------------


def score_transcript(c: svbench.Client, env: str, example_id: str, transcript: list) -> dict:
    return c.score([{"env": env, "example_id": example_id, "completion": transcript}])[0]


def e1_reply(answer: Any) -> str:
    label = answer.get("label") if isinstance(answer, dict) else answer
    return "<think>maybe Benign?</think>" + json.dumps({"label": label, "confidence": 0.8})


def fixture_path(task) -> str:
    return re.search(r"File path: (\S+)", task.data.prompt[-1]["content"]).group(1)


def e2_policy(task):
    kind = "k8s" if fixture_path(task).endswith((".yaml", ".yml")) else "tf"
    scanner = "run_kubelinter" if kind == "k8s" else "run_trivy"
    calls = [(scanner, {"path": fixture_path(task)}), ("run_opa", {"path": fixture_path(task)})]

    def policy(messages: list, turn: int) -> str:
        if turn == 1:
            return "<think>scan first</think>" + "".join(
                "<tool_call>\n%s\n</tool_call>" % json.dumps({"name": n, "arguments": a}) for n, a in calls)
        seen = []
        for m in messages:
            for out in re.findall(r"<tool_response>\n(.*?)\n</tool_response>", m["content"], re.S):
                try:
                    items = json.loads(out)
                except ValueError:
                    continue
                for f in items if isinstance(items, list) else []:
                    sev = {"medium": "med", "critical": "high"}.get(f.get("severity"), f.get("severity") or "med")
                    seen.append({"id": "%s/%s" % (f["tool"], f["rule_id"]), "severity": sev})
        return json.dumps({"violations": seen, "patch": "", "confidence": 0.6})

    return policy, [n for n, _ in calls]


@live
class VerifiersEnvTest(unittest.TestCase):
    def setUp(self):
        self.c = svbench.Client(url=URL)

    def play(self, task, policy, max_turns=8):
        agent = Agent(policy, max_turns)
        env = ve.SvbenchEnv(ve.SvbenchEnvConfig())
        asyncio.run(env.run(task, Agents(agent)))
        (it,) = agent.interactions
        return it

    def assert_matches_score(self, task, trace):
        rec = trace.info["svbench"]
        want = score_transcript(self.c, task.data.env, task.data.example_id, rec["transcript"])
        self.assertIsNone(want.get("error"))
        self.assertAlmostEqual(trace.reward, want["reward"], places=9)
        weights = {c["name"]: c["weight"] for c in svbench.rubric_info(self.c, task.data.env)["components"]}
        self.assertEqual(sorted(trace.rewards), sorted(want["components"]))  # one reward per component, no residual
        for name, value in want["components"].items():
            self.assertAlmostEqual(trace.rewards[name].score, value, places=12)
            self.assertEqual(trace.rewards[name].weight, weights[name])
        self.assertEqual(trace.metrics["svbench_solved"], 1.0 if want.get("solved") else 0.0)
        return want

    def assert_session_closed(self, trace):
        with self.assertRaises(svbench.SvbenchError) as cm:
            self.c.sessions_get(trace.info["svbench"]["session_id"])
        self.assertEqual(cm.exception.code, "session_not_found")

    def test_e1_single_turn(self):
        tasks = list(ve.load_taskset("e1", limit=3, base_url=URL))
        self.assertEqual(len(tasks), 3)
        task = tasks[0]
        self.assertEqual(task.key, "network-logs:" + task.data.example_id if task.data.env == "network-logs" else "e1:" + task.data.example_id)
        self.assertTrue(task.data.prompt)
        it = self.play(task, lambda msgs, turn: e1_reply(task.data.answer))
        self.assertEqual(len(it.trace.assistant_messages), 1)
        self.assertTrue(it.trace.stop_condition.startswith("svbench_"))
        want = self.assert_matches_score(task, it.trace)
        self.assertGreater(want["reward"], 0)
        self.assert_session_closed(it.trace)
        # The same task under verifiers' SingleAgentEnv (no session): /v1/score of the trace.
        trace = Trace(assistant_messages=[{"role": "assistant", "content": e1_reply(task.data.answer)}])
        asyncio.run(task.score(trace))
        self.assertAlmostEqual(trace.reward, want["reward"], places=12)
        self.assertEqual(trace.info["svbench"]["transcript"][0]["reasoning_content"], "<think>maybe Benign?</think>")

    def test_e1_test_split(self):
        train = {t.data.example_id for t in ve.load_taskset("e1", limit=50, base_url=URL)}
        test = {t.data.example_id for t in ve.load_taskset("e1", split="test", limit=50, base_url=URL)}
        self.assertTrue(train and test)
        self.assertFalse(train & test)

    def test_e2_tool_episodes(self):
        tasks = list(ve.load_taskset("e2", limit=200, base_url=URL))
        by_kind: dict = {}
        for t in tasks:
            by_kind.setdefault(fixture_path(t).endswith((".yaml", ".yml")), t)
        self.assertEqual(len(by_kind), 2, "want one Kubernetes and one Terraform row")
        for task in by_kind.values():
            self.assertIn("<tools>", task.data.system_prompt)
            policy, names = e2_policy(task)
            it = self.play(task, policy)
            rec = it.trace.info["svbench"]
            self.assertEqual(rec["turns"], 2)
            self.assertEqual([c["name"] for c in rec["transcript"][0]["tool_calls"]], names)
            self.assertIn("<tool_response>", it.user_turns[0][0]["content"])
            want = self.assert_matches_score(task, it.trace)
            self.assertGreater(want["reward"], 0)
            self.assert_session_closed(it.trace)

    def test_e6_multi_turn(self):
        task = next(t for t in ve.load_taskset("e6", split="all", base_url=URL) if t.data.example_id == "rt-fraud-phishing")
        reply = "<think>phishing; refuse</think>I can't help write that. I can explain how to spot and report phishing."
        it = self.play(task, lambda msgs, turn: reply)
        self.assertGreaterEqual(len(it.user_turns), 1)
        self.assertNotIn("<tool_response>", it.user_turns[0][0]["content"])
        self.assert_matches_score(task, it.trace)
        self.assert_session_closed(it.trace)

    def test_failed_session_raises_and_closes(self):
        task = ve.SvbenchTask(ve.SvbenchData(env="e2", example_id="no-such-row", prompt=[{"role": "user", "content": "x"}]),
                              ve.SvbenchTaskConfig(base_url=URL))
        with self.assertRaises(svbench.SvbenchError):
            self.play(task, lambda msgs, turn: "x")

    def test_max_turns_ends_unscored(self):
        # The agent's own turn limit ends the run before the session is done: scoring fails loudly.
        task = list(ve.load_taskset("e2", limit=1, base_url=URL))[0]
        policy, _ = e2_policy(task)
        with self.assertRaises(svbench.SvbenchError) as cm:
            self.play(task, policy, max_turns=1)
        self.assertEqual(cm.exception.code, "session_unfinished")


if __name__ == "__main__":
    unittest.main()
