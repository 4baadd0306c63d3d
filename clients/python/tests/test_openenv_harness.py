"""svbench.openenv_harness driven as OpenEnv's harness and TRL's harness
rollout worker drive a ResourceSessionFactory, with a scripted policy in
place of the model. The driver below is written for these tests from the
calls TRL (trl.experimental.async_grpo.openenv_harness) makes: create(prompt,
seed=, episode_id=), initial_messages, list_tools, call_tool per tool call,
verify(transcript), close in a finally. openenv is not needed.

Offline tests always run (a scripted Client stands in for the server). The
live ones need a server serving e2 and e1 at SVBENCH_HARNESS_URL (and
SVBENCH_TOKEN if it has one), as `go test ./server -run
TestPythonSessionAdapters` starts it:

    SVBENCH_HARNESS_URL=http://127.0.0.1:8080 python3 -m unittest -v tests.test_openenv_harness
"""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import unittest
import urllib.request
import uuid
from typing import Any, Callable, Optional

import svbench
from svbench import openenv_harness as oh

URL = os.environ.get("SVBENCH_HARNESS_URL")
live = unittest.skipUnless(URL, "SVBENCH_HARNESS_URL not set: run via go test ./server -run TestPythonSessionAdapters")


def drive(factory: Any, task: Any, policy: Callable[[list, list, int], dict], *, seed: Optional[int] = 0,
          max_turns: int = 8, before_verify: Optional[Callable[[Any], None]] = None) -> dict[str, Any]:
    """One rollout as a white-box harness runs it: the policy's reply is an
    OpenAI assistant message; a reply without tool calls ends the loop and
    is not sent (the session's verify must send it)."""
    session = factory.create(task, seed=seed, episode_id=uuid.uuid4().hex)
    trace = []
    try:
        messages = list(session.initial_messages())
        tools = session.list_tools()
        for turn in range(max_turns):
            reply = policy(messages, tools, turn)
            messages.append(reply)
            calls = reply.get("tool_calls") or []
            if not calls:
                break
            ended = False
            for c in calls:
                args = json.loads(c["function"]["arguments"])
                res = session.call_tool(c["function"]["name"], args)
                trace.append(res)
                data = res.data if isinstance(res.data, str) else json.dumps(res.data)
                messages.append({"role": "tool", "tool_call_id": c["id"], "name": c["function"]["name"], "content": data})
                if res.done:
                    ended = True
                    break
            if ended:
                break
        if before_verify:
            before_verify(session)
        verify = session.verify(messages)
        # OpenEnv's rollout helper insists that verify forwards the reward a
        # tool result already carried.
        carried = [r.metadata.get("reward") for r in trace if r.metadata.get("reward") is not None]
        if carried:
            assert carried[-1] == verify.env_reward, (carried, verify.env_reward)
        return {"session": session, "messages": messages, "tools": tools, "trace": trace, "verify": verify}
    finally:
        session.close()


def call(name: str, args: dict, i: int = 0) -> dict:
    return {"id": "c%d" % i, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


# -- offline ------------------------------------------------------------------


class Scripted(svbench.Client):
    """A Client whose answers are scripted per (method, path); records requests."""

    def __init__(self, answers: dict):
        super().__init__(url="http://127.0.0.1:9")
        self.answers = {k: list(v) for k, v in answers.items()}
        self.sent: list[tuple] = []

    def _request(self, method, path, body=None, query=None):
        self.sent.append((method, path, body))
        key = (method, path if not path.startswith("/v1/sessions/") else "/v1/sessions/*")
        a = self.answers.get(key, [{}]).pop(0) if self.answers.get(key) else {}
        if isinstance(a, Exception):
            raise a
        return a


RESET = {"observation": {"session_id": "s1", "env": "e2", "example_id": "x", "max_turns": 4,
                         "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "audit a.yaml"}],
                         "tools": [{"type": "function", "function": {"name": "run_kubelinter", "description": "lint",
                                                                     "parameters": {"type": "object", "properties": {
                                                                         "path": {"type": "string"}}}}},
                                   {"type": "function", "function": {"name": "noargs"}}]},
         "reward": None, "done": False}


def done_answer(reward: Any, score: Any) -> dict:
    return {"observation": {"turn": 1, "messages": [], "reason": "answer", "score": score}, "reward": reward, "done": True}


class OfflineTest(unittest.TestCase):
    def test_imports_without_openenv(self):
        code = ("import sys; sys.modules['openenv'] = None; import svbench.openenv_harness as h; "
                "t, r, v = h._result_types(); assert t is h.ToolSpec and v is h.VerifyResult, (t, v); print('ok')")
        out = subprocess.run([sys.executable, "-B", "-c", code], cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.stdout.strip(), "ok", out.stderr)

    def test_reset_bodies(self):
        f = oh.SvbenchSessionFactory("e2", client=Scripted({}), rubric="reference", idle_timeout_s=30)
        g = pickle.loads(pickle.dumps(oh.SvbenchSessionFactory("e2", url="http://h:1", token="t", split="dev")))
        self.assertEqual((g.client.url, g.client.token, g.split, g._rows), ("http://h:1", "t", "dev", None))
        self.assertEqual(f._reset_body({"example_id": "k1"}, 3),
                         {"env": "e2", "example_id": "k1", "rubric": "reference", "idle_timeout_s": 30.0})
        self.assertEqual(f._reset_body('{"env": "e1", "example_id": "q"}', None)["env"], "e1")
        # TRL without a dataset prompt: the seed (its group id) picks the row.
        self.assertEqual(f._reset_body([{"role": "user", "content": ""}], 7),
                         {"env": "e2", "rubric": "reference", "seed": 7, "idle_timeout_s": 30.0})
        self.assertEqual(oh.SvbenchSessionFactory(client=Scripted({}), idle_timeout_s=0)._reset_body(None, 2), {"seed": 2})
        with self.assertRaises(svbench.SvbenchError) as cm:
            oh.SvbenchSessionFactory(client=Scripted({}))._reset_body([{"role": "user", "content": "hi"}], 0)
        self.assertEqual(cm.exception.code, "unknown_prompt")

    def test_prompt_names_its_row(self):
        page = {"examples": [{"example_id": "a", "prompt": [{"role": "user", "content": " audit a.yaml "}]},
                             {"example_id": "b", "prompt": [{"role": "user", "content": "dup"}]},
                             {"example_id": "c", "prompt": [{"role": "user", "content": "dup"}]}], "total": 3}
        c = Scripted({("GET", "/v1/environments/e2/examples"): [page]})
        f = oh.SvbenchSessionFactory("e2", client=c)
        self.assertEqual(f._reset_body([{"role": "system", "content": "s"}, {"role": "user", "content": "audit a.yaml"}],
                                       0)["example_id"], "a")
        self.assertEqual(f._reset_body("audit a.yaml", 0)["example_id"], "a")
        for ambiguous in ("dup", "nothing like it"):
            with self.assertRaises(svbench.SvbenchError):
                f._reset_body(ambiguous, 0)
        self.assertEqual(sum(1 for s in c.sent if s[0] == "GET"), 1)  # rows read once

    def test_episode_and_failure_values(self):
        score = {"reward": 0.75, "components": {"detection": 1.0, "patch": 0.5}, "solved": False}
        for reward, sc, want in [
            (0.75, score, 0.75),
            (float("nan"), dict(score, reward=float("nan")), None),    # non-finite
            ("0.75", score, None),                                      # a string is not a number
            (None, None, None),                                         # missing
            (0.75, dict(score, components={"detection": float("inf")}), None),
            (None, {"reward": 0, "error": {"code": "score_failed", "message": "boom"}}, None),
        ]:
            with self.subTest(reward=reward, score=sc):
                c = Scripted({("POST", "/reset"): [RESET],
                              ("POST", "/step"): [{"observation": {"tool_name": "run_kubelinter", "result": "[]",
                                                                   "error": None, "turn": 1, "messages": []},
                                                   "reward": None, "done": False},
                                                  done_answer(reward, sc)]})
                s = oh.SvbenchSessionFactory("e2", client=c).create({"example_id": "x"})
                self.assertEqual(s.initial_messages()[1]["content"], "audit a.yaml")
                tools = s.list_tools()
                self.assertEqual([(t.name, t.input_schema.get("type")) for t in tools],
                                 [("run_kubelinter", "object"), ("noargs", "object")])
                r = s.call_tool("run_kubelinter", {"path": "a.yaml"})
                self.assertEqual((r.data, r.done, r.error), ("[]", False, None))
                self.assertEqual(c.sent[-1][2]["action"], {"type": "call_tool", "tool_name": "run_kubelinter",
                                                          "arguments": {"path": "a.yaml"}})
                v = s.verify(s.initial_messages() + [{"role": "assistant", "content": "final"}])
                self.assertEqual(c.sent[-1][2]["action"], {"content": "final"})
                self.assertEqual(v.env_reward, want)
                self.assertEqual(v.metrics["svbench_error"], 0.0 if want is not None else 1.0)
                if want is None:
                    self.assertTrue(v.artifacts["error"])
                else:
                    self.assertEqual(v.metrics["detection"], 1.0)
                self.assertIs(s.verify([]), v)  # idempotent, nothing sent again
                s.close()
                s.close()
                self.assertFalse([x for x in c.sent if x[0] == "DELETE"])  # the end released it on the server

    def test_bad_arguments_and_close_during_a_step(self):
        import threading
        entered, release = threading.Event(), threading.Event()

        class Slow(Scripted):
            def _request(self, method, path, body=None, query=None):
                if path == "/step":
                    entered.set()
                    release.wait(10)
                return super()._request(method, path, body, query)

        c = Slow({("POST", "/reset"): [RESET], ("POST", "/step"): [svbench.SvbenchError("session_not_found", "gone")]})
        s = oh.SvbenchSessionFactory("e2", client=c).create(None)
        r = s.call_tool("run_kubelinter", ["a.yaml"])
        self.assertEqual((r.done, r.error.split(":")[0]), (False, "invalid_arguments"))
        self.assertFalse([x for x in c.sent if x[1] == "/step"])  # not sent
        t = threading.Thread(target=s.call_tool, args=("run_kubelinter", {"path": "a.yaml"}))
        t.start()
        self.assertTrue(entered.wait(10))
        s.close()  # does not wait for the step
        self.assertEqual([x[:2] for x in c.sent if x[0] == "DELETE"], [("DELETE", "/v1/sessions/s1")])
        release.set()
        t.join(10)
        s.close()
        self.assertEqual(len([x for x in c.sent if x[0] == "DELETE"]), 1)
        self.assertIsNone(s.verify([{"role": "assistant", "content": "x"}]).env_reward)

    def test_failed_request_ends_the_session(self):
        gone = svbench.SvbenchError("session_not_found", "session \"s1\" does not exist: it ended", status=404)
        c = Scripted({("POST", "/reset"): [RESET], ("POST", "/step"): [gone]})
        s = oh.SvbenchSessionFactory("e2", client=c).create(None, seed=1)
        r = s.call_tool("run_kubelinter", {"path": "a.yaml"})
        self.assertTrue(r.done)
        self.assertIn("does not exist", r.error)
        v = s.verify([{"role": "assistant", "content": "x"}])
        self.assertIsNone(v.env_reward)
        self.assertEqual(v.metrics["svbench_error"], 1.0)
        self.assertIn("session_not_found", v.artifacts["error"])
        s.close()
        self.assertEqual([x[:2] for x in c.sent if x[0] == "DELETE"], [("DELETE", "/v1/sessions/s1")])
        # a failed open raises the server's message: there is no session
        c = Scripted({("POST", "/reset"): [svbench.SvbenchError("unknown_example", "no row \"zz\"", status=404)]})
        with self.assertRaises(svbench.SvbenchError) as cm:
            oh.SvbenchSessionFactory("e2", client=c).create({"example_id": "zz"})
        self.assertIn("no row", str(cm.exception))


# -- live ---------------------------------------------------------------------


def client() -> svbench.Client:
    return svbench.Client(url=URL)


def fixture_path(messages: list) -> str:
    return re.search(r"File path: (\S+)", messages[-1]["content"]).group(1)


def findings_answer(outputs: list) -> str:
    seen = []
    for out in outputs:
        try:
            items = json.loads(out)
        except ValueError:
            continue
        for f in items if isinstance(items, list) else []:
            sev = {"medium": "med", "critical": "high"}.get(f.get("severity"), f.get("severity") or "med")
            seen.append({"id": "%s/%s" % (f["tool"], f["rule_id"]), "severity": sev})
    return json.dumps({"violations": seen, "patch": "", "confidence": 0.6})


def kubelinter_policy(messages: list, tools: list, turn: int) -> dict:
    if turn == 0:
        return {"role": "assistant", "content": "", "tool_calls": [call("run_kubelinter", {"path": fixture_path(messages)})]}
    outputs = [m["content"] for m in messages if m["role"] == "tool"]
    return {"role": "assistant", "content": "<think>report what the linter found</think>" + findings_answer(outputs)}


def live_sessions() -> float:
    req = urllib.request.Request(URL.rstrip("/") + "/metrics")
    if os.environ.get("SVBENCH_TOKEN"):
        req.add_header("Authorization", "Bearer " + os.environ["SVBENCH_TOKEN"])
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
    return float(re.search(r"^svbench_sessions_live (\S+)$", text, re.M).group(1))


@live
class HarnessTest(unittest.TestCase):
    def setUp(self):
        self.c = client()
        self.k8s = next(ex for ex in self.c.examples("e2", limit=200)["examples"] if ex["meta"].get("fixture_type") == "k8s")

    def assert_released(self, sid: str):
        with self.assertRaises(svbench.SvbenchError) as cm:
            self.c.sessions_get(sid)
        self.assertEqual(cm.exception.code, "session_not_found")

    def scored(self, env: str, example_id: str, transcript: list) -> dict:
        return self.c.score([{"env": env, "example_id": example_id, "completion": transcript}])[0]

    def test_e2_kubelinter_episode(self):
        # TRL's AsyncRolloutWorker pickles the factory into the process it spawns.
        f = pickle.loads(pickle.dumps(oh.SvbenchSessionFactory("e2", client=self.c)))
        self.assertEqual((f.client.url, f.client.token), (self.c.url, self.c.token))
        seen: dict = {}
        out = drive(f, {"example_id": self.k8s["example_id"]}, kubelinter_policy,
                    before_verify=lambda s: seen.update(self.c.sessions_get(s.session_id)))
        s, v = out["session"], out["verify"]
        self.assertEqual(s.example_id, self.k8s["example_id"])
        self.assertEqual(out["messages"][: len(self.k8s["prompt"])], self.k8s["prompt"])
        self.assertEqual({t.name for t in out["tools"]}, {"run_kubelinter", "run_trivy", "run_opa"})
        self.assertTrue(all(t.input_schema.get("type") == "object" and t.description for t in out["tools"]))
        self.assertEqual(len(out["trace"]), 1)
        tr = out["trace"][0]
        self.assertFalse(tr.done)
        self.assertIsNone(tr.error)
        self.assertIsInstance(json.loads(tr.data), list)  # kube-linter's findings, as text
        # The server's transcript before the answer, plus the answer verify sent.
        transcript = seen["transcript"] + [{"role": "assistant", "content": out["messages"][-1]["content"]}]
        self.assertEqual(transcript[0]["tool_calls"][0]["name"], "run_kubelinter")
        want = self.scored("e2", s.example_id, transcript)
        self.assertIsNone(want.get("error"))
        self.assertGreater(want["reward"], 0)
        self.assertAlmostEqual(v.env_reward, want["reward"], places=12)
        for k, val in want["components"].items():
            self.assertAlmostEqual(v.metrics[k], val, places=12)
        self.assertEqual((v.done, v.metrics["svbench_error"], v.metrics["svbench_turns"]), (True, 0.0, 2.0))
        self.assert_released(s.session_id)

    def test_close_releases_an_unfinished_session(self):
        f = oh.SvbenchSessionFactory("e2", client=self.c)
        s = f.create({"example_id": self.k8s["example_id"]}, seed=0, episode_id="x")
        before = live_sessions()
        self.assertGreaterEqual(before, 1)
        s.call_tool("run_kubelinter", {"path": fixture_path(s.initial_messages())})
        self.assertEqual(self.c.sessions_get(s.session_id)["turns"], 1)
        s.close()
        s.close()
        self.assert_released(s.session_id)
        self.assertEqual(live_sessions(), before - 1)
        v = s.verify([{"role": "assistant", "content": "late"}])  # nothing to send to: the failure value
        self.assertIsNone(v.env_reward)
        self.assertIn("closed before verify", v.artifacts["error"])

    def test_trl_prompts_and_seeds(self):
        # TRL passes the dataset row's prompt: it names the served row.
        f = oh.SvbenchSessionFactory("e2", client=self.c)
        s = f.create(self.k8s["prompt"], seed=5, episode_id="p")
        try:
            self.assertEqual(s.example_id, self.k8s["example_id"])
            self.assertEqual(s.initial_messages(), self.k8s["prompt"])
        finally:
            s.close()
        # Without a dataset prompt the seed picks (seed mod rows), the same row for one group.
        bare = oh.SvbenchSessionFactory(client=self.c)  # the server's OpenEnv default environment
        a, b = (bare.create([{"role": "user", "content": ""}], seed=11, episode_id=str(i)) for i in range(2))
        try:
            self.assertEqual((a.env, a.example_id), (b.env, b.example_id))
            self.assertIn(a.env, ("config-verification", "network-logs"))  # the server's default, e2 or e1
        finally:
            a.close()
            b.close()
        with self.assertRaises(svbench.SvbenchError) as cm:
            f.create([{"role": "user", "content": "a prompt no row has"}], seed=0)
        self.assertEqual(cm.exception.code, "unknown_prompt")

    def test_unknown_tool_and_cut_off_rollout(self):
        f = oh.SvbenchSessionFactory("e2", client=self.c)

        def policy(messages, tools, turn):
            if turn == 0:
                return {"role": "assistant", "content": "", "tool_calls": [call("rm_rf", {"path": "/"})]}
            return {"role": "assistant", "content": "still looking",
                    "tool_calls": [call("run_kubelinter", {"path": fixture_path(messages[:2])}, turn)]}

        seen: dict = {}
        out = drive(f, {"example_id": self.k8s["example_id"]}, policy, max_turns=2,
                    before_verify=lambda s: seen.update(self.c.sessions_get(s.session_id)))
        unknown = out["trace"][0]
        self.assertFalse(unknown.done)
        self.assertIn("tool_not_found", unknown.error)
        self.assertEqual(seen["turns"], 1)  # the unknown tool spent no turn
        v = out["verify"]
        # The harness stopped with the last reply still calling a tool: its
        # text is the answer, scored as /v1/score scores that transcript.
        self.assertEqual(v.metrics["svbench_unfinished"], 1.0)
        want = self.scored("e2", self.k8s["example_id"],
                           seen["transcript"] + [{"role": "assistant", "content": "still looking"}])
        self.assertAlmostEqual(v.env_reward, want["reward"], places=12)
        self.assert_released(out["session"].session_id)

    def test_episode_that_ends_on_a_tool_call(self):
        # max_turns 1: the tool call is the last turn, the server scores the
        # episode, the tool result carries the reward and verify forwards it.
        f = oh.SvbenchSessionFactory("e2", client=self.c, max_turns=1)
        out = drive(f, {"example_id": self.k8s["example_id"]}, kubelinter_policy)
        tr, v = out["trace"][0], out["verify"]
        self.assertTrue(tr.done)
        self.assertEqual(tr.metadata["reward"], v.env_reward)
        self.assertIsNotNone(v.env_reward)
        self.assert_released(out["session"].session_id)

    def test_failed_server_call(self):
        f = oh.SvbenchSessionFactory("e2", client=self.c)
        s = f.create({"example_id": self.k8s["example_id"]})
        try:
            self.c.sessions_delete(s.session_id)  # the server loses the session (expiry, restart)
            r = s.call_tool("run_kubelinter", {"path": fixture_path(s.initial_messages())})
            self.assertTrue(r.done)
            self.assertIn("session_not_found", r.error)
            self.assertIn("does not exist", r.error)  # the server's own message
            v = s.verify(s.initial_messages() + [{"role": "assistant", "content": "x"}])
            self.assertIsNone(v.env_reward)
            self.assertEqual((v.done, v.metrics["svbench_error"]), (True, 1.0))
            self.assertIn("does not exist", v.artifacts["error"])
        finally:
            s.close()
        with self.assertRaises(svbench.SvbenchError) as cm:
            f.create({"example_id": "no-such-row"})
        self.assertTrue(cm.exception.message)
        bad = oh.SvbenchSessionFactory("e2", url="http://127.0.0.1:9", timeout_s=5)
        with self.assertRaises(OSError):  # nothing listens there: a connection error, within the timeout
            bad.create(None, seed=0)


if __name__ == "__main__":
    unittest.main()
