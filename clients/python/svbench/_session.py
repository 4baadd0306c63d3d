"""What the session-backed trainer adapters share (openrlhf_agent, trl_env,
verl_tools): naming a task, one server-held episode, the reasoning rule for
raw generated text, Hermes-style tool calls, and fixed-key reward logs.

Standard library only. The protocol is server/README.md, "Sessions".
"""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any, Optional

from svbench.client import Client, SvbenchError, checked_result, finite

__all__ = [
    "Episode",
    "parse_hermes_tool_calls",
    "score_logs",
    "split_reasoning",
    "task_from",
]

TASK_KEYS = ("env", "example_id", "example", "answer", "rubric", "max_turns")

# Trainers abandon episodes without saying so (verl's agent loop at its
# length or turn limits, TRL's pooled environments, OpenRLHF at a full
# context): sessions opened for a trainer ask the server to close them after
# this long without a request, rather than its 10 minutes. Long enough for
# one slow generation between two steps. SVBENCH_SESSION_IDLE_S overrides it
# (0: the server's own).
DEFAULT_SESSION_IDLE_S = 300.0


def session_idle_s(configured: Any = None) -> Optional[float]:
    """The idle timeout to ask for: configured, else SVBENCH_SESSION_IDLE_S,
    else DEFAULT_SESSION_IDLE_S; None (the server's) for 0."""
    v = configured if configured not in (None, "") else os.environ.get("SVBENCH_SESSION_IDLE_S")
    if v in (None, ""):
        return DEFAULT_SESSION_IDLE_S
    f = float(v)
    if f < 0 or f != f:
        raise ValueError("an idle timeout is a number of seconds >= 0, not %r" % (v,))
    return f or None

# The reasoning-block marker families of the server's rule (env/reasoning.go);
# enough to tell which tool calls a raw generation committed to.
REASONING_TAGS = (
    ("<think>", "</think>"),
    ("<seed:think>", "</seed:think>"),
    ("\u25c1think\u25b7", "\u25c1/think\u25b7"),
    ("[THINK]", "[/THINK]"),
    ("<thinking>", "</thinking>"),
    ("<reasoning>", "</reasoning>"),
)

# End-of-turn markers a decoder that keeps special tokens leaves in the text.
END_MARKERS = ("<|im_end|>", "<|endoftext|>", "<|eot_id|>", "</s>", "<|end|>", "<|return|>")

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


def task_from(label: Any, default_env: Optional[str] = None, **defaults: Any) -> dict[str, Any]:
    """The /v1/sessions body a label names.

    A label is a dict or JSON object text with ``env`` and one of
    ``example_id``, ``example`` or ``answer`` (optionally ``rubric``,
    ``max_turns``); any other string is an example id of ``default_env``.
    ``defaults`` (rubric, max_turns) fill what the label leaves out.
    """
    value = label
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str):
        s = value.strip()
        if s.startswith("{"):
            try:
                value = json.loads(s)
            except ValueError as e:
                raise SvbenchError("bad_label", "label is not valid JSON: %s" % e) from None
        else:
            value = {"example_id": s}
    if not isinstance(value, dict):
        raise SvbenchError("bad_label", "a label must be an object or an example id, not %s" % type(value).__name__)
    task = {k: value[k] for k in TASK_KEYS if value.get(k) not in (None, "")}
    for k, v in defaults.items():
        if v not in (None, "") and k not in task:
            task[k] = v
    if "env" not in task:
        if not default_env:
            raise SvbenchError("bad_label", "the label names no env and no default environment is set (SVBENCH_ENV)")
        task["env"] = default_env
    if not any(k in task for k in ("example_id", "example", "answer")):
        raise SvbenchError("bad_label", "the label names no example_id, example or answer")
    return task


def split_reasoning(text: str) -> tuple[str, str]:
    """(committed answer, reasoning) of a raw generation, as the server's
    rule reads it: everything up to the last closing marker is reasoning
    (the opening one may be missing), and a block left open commits to
    nothing."""
    thought: list[str] = []
    answer = text
    last, end = -1, 0
    for _, close in REASONING_TAGS:
        i = answer.rfind(close)
        if i > last:
            last, end = i, i + len(close)
    if last >= 0:
        thought.append(answer[:end])
        answer = answer[end:]
    opens = [i for i in (answer.find(o) for o, _ in REASONING_TAGS) if i >= 0]
    if opens:
        first = min(opens)
        thought.append(answer[first:])
        answer = answer[:first]
    if not thought:
        return text, ""
    return answer.strip(), "\n".join(thought)


def strip_end_markers(text: str) -> str:
    """text without the end-of-turn special tokens a decoder left in it."""
    for m in END_MARKERS:
        text = text.replace(m, "")
    return text.strip()


def parse_hermes_tool_calls(text: str, prefix: str = "call") -> tuple[str, list[dict[str, Any]]]:
    """Split committed text into content and tool calls written as Hermes /
    Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks.

    Calls come back in svbench's flat form ``{"id", "name", "arguments"}``
    (arguments as JSON text). A block that is not a JSON object with a name
    stays in the content: the model wrote text, not a call.
    """
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    pos = 0
    for m in _TOOL_CALL.finditer(text):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            obj = None
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str) or not obj["name"]:
            continue
        kept.append(text[pos : m.start()])
        pos = m.end()
        args = obj.get("arguments", obj.get("parameters", {}))
        calls.append({
            "id": "%s_%d" % (prefix, len(calls)),
            "name": obj["name"],
            "arguments": args if isinstance(args, str) else json.dumps(args if args is not None else {}),
        })
    kept.append(text[pos:])
    return "".join(kept).strip(), calls


def score_logs(keys: list[str], score: Optional[dict[str, Any]], turns: int, failed: bool) -> dict[str, float]:
    """Fixed-key logs for trainers that stack logs by the first item's keys:
    every component in keys (0.0 where absent or before the end),
    svbench_error (failed, or a score with an error), svbench_solved and
    svbench_turns."""
    logs = {k: 0.0 for k in keys}
    if score:
        score = checked_result(score)
    err = failed or bool(score and score.get("error"))
    if score and not err:
        for k, v in (score.get("components") or {}).items():
            logs[k] = finite(v) or 0.0  # checked_result refused a component that is not finite
    logs["svbench_error"] = 1.0 if err else 0.0
    logs["svbench_solved"] = 1.0 if (score and not err and score.get("solved")) else 0.0
    logs["svbench_turns"] = float(turns)
    return logs


def reward_of(score: Optional[dict[str, Any]]) -> Optional[float]:
    """The score's total; None when there is none, scoring failed, or the
    reward or a component is not a finite number (the adapters' failed
    episode)."""
    if not score:
        return None
    score = checked_result(score)
    if score.get("error"):
        return None
    return finite(score["reward"])


class Episode:
    """One server-held episode (a session), driven one assistant message at
    a time. Thread-safe: steps are serialised (the server answers a second
    concurrent step with 409 session_busy). ``transcript`` records what was
    played in svbench's message form, so ``/v1/score`` of it is the check.
    """

    def __init__(self, client: Client, task: dict[str, Any], idle_timeout_s: Any = None):
        self.client = client
        self.task = dict(task)
        self.idle_timeout_s = session_idle_s(idle_timeout_s)
        self.session_id: Optional[str] = None
        self.prompt: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.max_turns = 0
        self.turns = 0
        self.done = False
        self.reason = ""
        self.score: Optional[dict[str, Any]] = None
        self.error: Optional[str] = None
        self.transcript: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._closed = False

    def open(self) -> "Episode":
        extra: dict[str, Any] = {"idle_timeout_s": self.idle_timeout_s} if self.idle_timeout_s else {}
        info = self.client.sessions_create(**self.task, **extra)
        self.session_id = info["session_id"]
        self.prompt = info.get("prompt") or []
        self.tools = info.get("tools") or []
        self.max_turns = int(info.get("max_turns") or 0)
        return self

    def step(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """Send one assistant message ({content, reasoning_content?,
        tool_calls?: [{id, name, arguments}]}); return the observations (tool
        results, the next user turn). On the last step ``done`` and ``score``
        are set and the session is closed. A failed request closes the
        session and raises."""
        with self._lock:
            if self.done or self._closed or self.session_id is None:
                raise SvbenchError("session_done", "the episode is over (%s)" % (self.reason or self.error or "closed"))
            msg = {"role": "assistant", "content": message.get("content") or ""}
            if message.get("reasoning_content"):
                msg["reasoning_content"] = message["reasoning_content"]
            if message.get("tool_calls"):
                msg["tool_calls"] = [dict(c) for c in message["tool_calls"]]
            try:
                res = self.client.sessions_step(self.session_id, msg)
            except Exception as e:
                self.error = str(e)
                self._close_locked()
                raise
            self.turns = int(res.get("turn") or self.turns + 1)
            obs = list(res.get("observations") or [])
            self.transcript.append(msg)
            self.transcript.extend(obs)
            if res.get("done"):
                self.done = True
                self.reason = res.get("reason") or ""
                self.score = res.get("score")
                if self.score and self.score.get("error"):
                    err = self.score["error"]
                    self.error = "%s: %s" % (err.get("code"), err.get("message"))
                self._close_locked()
            return obs

    def close(self) -> None:
        """Delete the session (idempotent; errors are ignored: an expired
        session is already gone)."""
        with self._lock:
            self._close_locked()

    def _close_locked(self) -> None:
        if self._closed or self.session_id is None:
            self._closed = True
            return
        self._closed = True
        try:
            self.client.sessions_delete(self.session_id)
        except Exception:
            pass


def observation_text(observations: list[dict[str, Any]]) -> str:
    """Observations as one text (tool outputs and user turns, in order)."""
    return "\n".join(str(o.get("content") or "") for o in observations)
