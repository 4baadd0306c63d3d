"""svbench episodes as OpenEnv harness sessions (``openenv.core.harness``).

TRL's ``AsyncGRPOTrainer`` (trl.experimental.async_grpo.openenv_harness,
``HarnessRolloutWorker``) and OpenEnv's ``build_harness_rollout_func`` drive
a ``ResourceSessionFactory``: per rollout ``factory.create(prompt, seed=,
episode_id=)``, then on the session ``initial_messages()``, ``list_tools()``,
``call_tool(name, arguments)`` per model tool call (through a harness adapter
such as ``MCPHarnessAdapter``), ``verify(transcript)`` for the reward, and
``close()`` in a ``finally``. ``SvbenchSessionFactory`` is that factory for an
``svbench serve``::

    from openenv.core.harness import MCPHarnessAdapter
    from svbench.openenv_harness import SvbenchSessionFactory
    worker = HarnessRolloutWorker(..., harness_session_factory=SvbenchSessionFactory("e2"),
                                  harness_adapter=MCPHarnessAdapter())

The harness API lives on OpenEnv's feature/harness-interface branch (PR #471)
and may change; nothing here imports openenv at module import. The result
objects are OpenEnv's own classes when ``openenv.core.harness`` imports, and
look-alike dataclasses with the same fields otherwise (the harness and TRL
only read their attributes).

Each session is one server-held episode over svbench's OpenEnv HTTP routes
(``POST /reset``, ``POST /step`` with the session id), through ``Client``'s
transport: the token, the response size cap and the server's error messages
are handled as everywhere else in this package. Standard library only.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from svbench.client import Client, SvbenchError, checked_result, finite
from svbench._session import TASK_KEYS, session_idle_s, task_from
from svbench.trl import client_from_settings, client_settings

__all__ = ["SvbenchResourceSession", "SvbenchSessionFactory"]


# -- result types ----------------------------------------------------------------
# Stand-ins with the fields of OpenEnv's dataclasses and its pydantic Tool,
# used only when openenv is not importable: harness adapters and TRL read
# attributes (result.data, .done, .metadata, .error; verify.env_reward;
# tool.name, .description, .input_schema), never check types.


@dataclass
class ToolSpec:
    name: str
    description: str = ""
    input_schema: dict = field(default_factory=dict)


@dataclass
class ToolResult:
    data: Any = None
    done: bool = False
    metadata: dict = field(default_factory=dict)
    error: Optional[str] = None


@dataclass
class VerifyResult:
    env_reward: Optional[float] = None
    done: bool = False
    metrics: dict = field(default_factory=dict)
    artifacts: dict = field(default_factory=dict)


_types_lock = threading.Lock()
_types: Optional[tuple] = None


def _result_types() -> tuple:
    """(Tool, ToolResult, VerifyResult): OpenEnv's when its harness imports,
    else the stand-ins above. Looked up once, on first use, so that importing
    this module never imports openenv (or what openenv imports)."""
    global _types
    with _types_lock:
        if _types is None:
            try:
                from openenv.core.env_server.mcp_types import Tool as OETool
                from openenv.core.harness import ToolResult as OEToolResult
                from openenv.core.harness import VerifyResult as OEVerifyResult
                _types = (OETool, OEToolResult, OEVerifyResult)
            except Exception:  # not installed, or a version whose imports fail here
                _types = (ToolSpec, ToolResult, VerifyResult)
        return _types


def _tool(name: str, description: str, schema: dict) -> Any:
    cls = _result_types()[0]
    try:
        return cls(name=name, description=description, input_schema=schema)
    except Exception:  # a Tool model that validates differently: the attributes are what matter
        return ToolSpec(name=name, description=description, input_schema=schema)


# -- prompts ---------------------------------------------------------------------


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a multimodal list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def _last_user_text(prompt: Any) -> str:
    """The last user message of a prompt (a message list or a plain string),
    stripped: what identifies a served row, as `svbench trainer` joins rows
    that name no example."""
    if isinstance(prompt, str):
        return prompt.strip()
    for m in reversed(list(prompt or [])):
        if isinstance(m, dict) and m.get("role") == "user":
            return _text(m.get("content")).strip()
    return ""


def _is_label(task: Any) -> bool:
    if isinstance(task, dict):
        return any(k in task for k in TASK_KEYS)
    if isinstance(task, (str, bytes)):
        s = task.decode("utf-8", "replace") if isinstance(task, bytes) else task
        return s.lstrip().startswith("{")
    return False


# -- the factory -----------------------------------------------------------------


class SvbenchSessionFactory:
    """OpenEnv's ``ResourceSessionFactory`` for one svbench server.

    ``create(task, seed=None, episode_id=None)`` opens one episode. Which row:

    * ``task`` a label (a dict or JSON text with ``env`` and ``example_id``,
      ``example`` or ``answer``, as the other adapters take): that task.
    * ``task`` a prompt (a message list, what TRL passes: the dataset row's
      ``prompt``; or a string): the served row of ``env`` (and ``split``)
      whose last user message is the prompt's. The rows are read once per
      factory. A prompt that matches no row raises ``unknown_prompt`` rather
      than training the model on some other row.
    * ``task`` empty (None, "", or a prompt whose user text is blank, as TRL
      passes without a dataset prompt): the row ``seed`` picks (seed mod
      rows; TRL's seed is the group id, so a group shares its row), from
      ``env`` or, without one, the server's OpenEnv default environment.

    A failed open raises ``SvbenchError`` with the server's message: there is
    no session to hand back (TRL drops such a rollout as unscorable).

    ``timeout_s`` bounds each request; steps ask the server to give up a
    little sooner, so a slow tool comes back as the server's error rather
    than a client timeout. ``idle_timeout_s`` (default 300 s,
    ``SVBENCH_SESSION_IDLE_S``) has the server close a session its trainer
    abandoned without ``close``.
    """

    def __init__(self, env: Optional[str] = None, *, client: Optional[Client] = None, url: Optional[str] = None,
                 token: Optional[str] = None, split: Optional[str] = None, rubric: Optional[str] = None,
                 max_turns: Optional[int] = None, idle_timeout_s: Any = None, timeout_s: float = 120.0):
        timeout_s = float(timeout_s)
        if not timeout_s > 0 or timeout_s != timeout_s:
            raise ValueError("timeout_s must be a positive number of seconds, not %r" % (timeout_s,))
        self.client = client or Client(url=url, token=token, timeout=timeout_s)
        self.env = env
        self.split = split
        self.rubric = rubric
        self.max_turns = max_turns
        self.idle_timeout_s = session_idle_s(idle_timeout_s)
        self.timeout_s = timeout_s
        self._rows: Optional[dict[str, str]] = None
        self._rows_lock = threading.Lock()

    def create(self, task: Any = None, seed: Optional[int] = None, episode_id: Optional[str] = None) -> "SvbenchResourceSession":
        body = self._reset_body(task, seed)
        if episode_id is not None:
            body["episode_id"] = str(episode_id)
        return SvbenchResourceSession(self.client, body, self.timeout_s)

    # TRL's AsyncRolloutWorker pickles its arguments (this factory among
    # them) into the process it spawns: the settings travel, not the lock or
    # the rows read so far.
    def __getstate__(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_rows", "_rows_lock")}
        state["client"] = client_settings(self.client)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["client"] = client_from_settings(state["client"])
        self.__dict__.update(state)
        self._rows = None
        self._rows_lock = threading.Lock()

    def _reset_body(self, task: Any, seed: Optional[int]) -> dict[str, Any]:
        defaults = {"rubric": self.rubric, "max_turns": self.max_turns}
        if _is_label(task):
            body = task_from(task, self.env, **defaults)
        else:
            text = _last_user_text(task) if task is not None else ""
            body = {k: v for k, v in dict(defaults, env=self.env).items() if v not in (None, "")}
            if text:
                body["example_id"] = self._row_of(text)
            else:
                if seed is not None:
                    body["seed"] = int(seed)
                if self.split:
                    body["split"] = self.split
        if self.idle_timeout_s:
            body["idle_timeout_s"] = self.idle_timeout_s
        return body

    def _row_of(self, text: str) -> str:
        if not self.env:
            raise SvbenchError("unknown_prompt", "a prompt names its row only within an environment: "
                                                 "SvbenchSessionFactory(env=...)")
        with self._rows_lock:
            if self._rows is None:
                self._rows = self._read_rows()
            rows = self._rows
        eid = rows.get(text)
        if eid is None:
            raise SvbenchError("unknown_prompt", "no %s row%s has this prompt's last user message (%.80r): "
                               "pass a label {\"env\", \"example_id\"} or a prompt the server serves"
                               % (self.env, " of split %s" % self.split if self.split else "", text))
        return eid

    def _read_rows(self) -> dict[str, str]:
        """last user text -> example id, over every served row. Two rows with
        one text map to neither: which one the dataset meant is unknown."""
        rows: dict[str, str] = {}
        clash: set[str] = set()
        offset = 0
        while True:
            page = self.client.examples(str(self.env), split=self.split, offset=offset, limit=100)  # the server's default page: always allowed
            exs = page.get("examples") or []
            for ex in exs:
                key = _last_user_text(ex.get("prompt"))
                if key in rows and rows[key] != str(ex["example_id"]):
                    clash.add(key)
                rows[key] = str(ex["example_id"])
            offset += len(exs)
            if not exs or offset >= int(page.get("total") or 0):
                break
        for k in clash:
            del rows[k]
        return rows


# -- the session -----------------------------------------------------------------


class SvbenchResourceSession:
    """OpenEnv's ``ResourceSession`` over one svbench episode.

    Thread-safe: calls are serialised (the server answers a concurrent step
    with 409). Failures never raise out of ``call_tool``/``verify``: the
    session records the error, closes the server session, and answers the
    failure value: ``call_tool`` a result with ``done=True`` and ``error``
    (so the harness stops), ``verify`` ``env_reward=None`` with metrics
    ``svbench_error`` 1.0 and the message in ``artifacts["error"]``.
    """

    def __init__(self, client: Client, reset_body: dict[str, Any], timeout_s: float):
        self.client = client
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._closed = False
        self.done = False
        self.error: Optional[str] = None
        self.reward: Optional[float] = None
        self.score: Optional[dict[str, Any]] = None
        self.reason = ""
        self.turns = 0
        self._verified: Any = None
        res = self.client._request("POST", "/reset", reset_body)
        obs = res.get("observation") if isinstance(res, dict) else None
        if not isinstance(obs, dict) or not obs.get("session_id"):
            raise SvbenchError("invalid_response", "/reset answered no observation.session_id")
        self.session_id: str = str(obs["session_id"])
        try:
            self.env: str = str(obs.get("env") or "")
            self.example_id: str = str(obs.get("example_id") or "")
            self.max_turns = int(obs.get("max_turns") or 0)
            self._prompt = [dict(m) for m in obs.get("messages") or [] if isinstance(m, dict)]
            self._tools = [t for t in obs.get("tools") or [] if isinstance(t, dict)]
        except Exception as e:  # an answer we cannot use: no one else will release its session
            self._fail_locked(e)
            raise SvbenchError("invalid_response", "/reset answered an observation that is not svbench's: %s" % e) from None

    # -- the harness interface ---------------------------------------------------

    def initial_messages(self) -> list[dict[str, Any]]:
        """The episode's prompt (system and user messages), copied: the
        harness appends to what it gets."""
        return [dict(m) for m in self._prompt]

    def list_tools(self) -> list[Any]:
        """The episode's tools as MCP tool specs (name, description,
        input_schema), from the tools /reset answered: the same list the
        server's list_tools action gives, without another request."""
        out = []
        for t in self._tools:
            fn: dict[str, Any] = t["function"] if isinstance(t.get("function"), dict) else t
            schema = fn.get("parameters") or fn.get("input_schema") or {}
            if not schema:
                schema = {"type": "object", "properties": {}}
            out.append(_tool(str(fn.get("name") or ""), str(fn.get("description") or ""), dict(schema)))
        return out

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run one tool as the server's ``call_tool`` action: one assistant
        turn calling that tool. ``data`` is the tool's text (what the harness
        shows the model). An unknown tool or a tool that failed answers
        ``error`` and the episode goes on; a failed request ends it."""
        ToolResultT = _result_types()[1]
        with self._lock:
            if self._closed or self.done:
                why = self.error or "the episode is over (%s)" % (self.reason or "closed")
                return ToolResultT(data="svbench: " + why, done=True, metadata={"reward": self.reward}, error=why)
            if arguments is not None and not isinstance(arguments, dict):
                # The model's mistake, not the episode's end: the server would
                # refuse it (422) without spending a turn, so answer it here.
                why = "invalid_arguments: %s's arguments must be a JSON object, not %s" % (name, type(arguments).__name__)
                return ToolResultT(data="error: " + why, done=False, metadata={"turn": self.turns}, error=why)
            action = {"type": "call_tool", "tool_name": str(name), "arguments": dict(arguments or {})}
            try:
                res = self._step(action)
            except Exception as e:
                why = self._fail_locked(e)
                return ToolResultT(data="svbench: " + why, done=True,
                                   metadata={"reward": None, "svbench_error": 1.0}, error=why)
            obs = res["observation"]
            self.turns = int(obs.get("turn") or self.turns)
            err = obs.get("error")
            err_text = None
            if isinstance(err, dict):
                err_text = "%s: %s" % (err.get("error_type") or "error", err.get("message") or "")
            result = obs.get("result")
            data = result if isinstance(result, str) else ("error: " + err_text if err_text else
                                                           json.dumps(result) if result is not None else "")
            meta: dict[str, Any] = {"turn": self.turns}
            if res.get("done"):
                self._finish_locked(res)
                meta["reward"] = self.reward  # the harness checks verify's reward against it
                meta["reason"] = self.reason
            return ToolResultT(data=data, done=bool(res.get("done")), metadata=meta, error=err_text)

    def verify(self, transcript: list[dict[str, Any]], final_state: Any = None) -> Any:
        """The episode's reward. The harness stops at a reply without tool
        calls and does not send it; verify sends the transcript's last
        assistant message as the answer (``{"content": …}``) unless the
        episode already ended, and forwards the reward the server gave: the
        one ``/v1/score`` gives the transcript played. Idempotent."""
        with self._lock:
            if self._verified is not None:
                return self._verified
            unfinished = False
            if self._closed and not self.done and not self.error:
                self.error = "session_closed: the session was closed before verify"
            if not (self._closed or self.done):
                last = next((m for m in reversed(list(transcript or []))
                             if isinstance(m, dict) and m.get("role") == "assistant"), None)
                if last is None:
                    self.error = "the transcript has no assistant message to send as the answer"
                    self._close_locked()
                else:
                    # A last reply that still calls tools means the harness
                    # cut the rollout off (its max_turns or tool limits): its
                    # text is sent as the answer anyway, so the rollout gets
                    # the score of what it said, as svbench ends an episode at
                    # max_turns.
                    unfinished = bool(last.get("tool_calls"))
                    action: dict[str, Any] = {"content": _text(last.get("content"))}
                    if isinstance(last.get("reasoning_content"), str) and last["reasoning_content"]:
                        action["reasoning_content"] = last["reasoning_content"]
                    try:
                        res = self._step(action)
                    except Exception as e:
                        self._fail_locked(e)
                    else:
                        if res.get("done"):
                            self._finish_locked(res)
                        else:
                            # E5/E6 answer the reply with the next user turn;
                            # the harness cannot continue such an episode.
                            self.error = ("episode_not_done: the answer did not end the %s episode (it answered "
                                          "another turn); multi-turn environments do not fit the harness" % self.env)
                            self._close_locked()
            self._verified = self._verify_result(unfinished)
            return self._verified

    def close(self) -> None:
        """Release the server session (idempotent; an episode that ended is
        already released; errors are ignored: an expired session is gone)."""
        if self._lock.acquire(blocking=False):
            try:
                self._close_locked()
            finally:
                self._lock.release()
            return
        # A step is in flight: TRL closes live sessions from its stop path,
        # on another thread. Delete now rather than wait up to timeout_s for
        # the step; that step then fails or ends, and finds the session closed.
        if not self._closed:
            self._closed = True
            try:
                self.client.sessions_delete(self.session_id)
            except Exception:
                pass

    def __enter__(self) -> "SvbenchResourceSession":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------

    def _step(self, action: dict[str, Any]) -> dict[str, Any]:
        # The server gives up on a step at 90% of the client's timeout, so a
        # slow tool comes back as its error message rather than a socket timeout.
        res = self.client._request("POST", "/step", {"action": action, "session_id": self.session_id,
                                                     "timeout_s": round(self.timeout_s * 0.9, 3)})
        if not isinstance(res, dict) or not isinstance(res.get("observation"), dict):
            raise SvbenchError("invalid_response", "/step answered no observation")
        return res

    def _finish_locked(self, res: dict[str, Any]) -> None:
        """The episode ended: the server closed the session. Keep the reward
        only when it and every component are finite numbers."""
        obs = res["observation"]
        self.done = True
        self._closed = True
        self.reason = str(obs.get("reason") or "")
        self.turns = int(obs.get("turn") or self.turns)
        raw = obs.get("score")
        score = checked_result(raw) if raw is not None else None
        self.score = score
        if score is None:
            self.error = "score_missing: the episode ended without a score"
        elif score.get("error"):
            err = score["error"]
            self.error = "%s: %s" % (err.get("code"), err.get("message"))
        elif finite(res.get("reward")) is None:
            self.error = "invalid_result: svbench client: reward %r is not a finite number" % (res.get("reward"),)
        else:
            self.reward = finite(res["reward"])

    def _fail_locked(self, e: Exception) -> str:
        """End the episode on a failed request; the error it records."""
        why = str(e) or type(e).__name__
        self.error = why
        self.reward = None
        self._close_locked()
        return why

    def _close_locked(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.client.sessions_delete(self.session_id)
        except Exception:
            pass

    def _verify_result(self, unfinished: bool) -> Any:
        VerifyResultT = _result_types()[2]
        failed = self.reward is None
        metrics: dict[str, float] = {}
        if not failed and self.score:
            for k, v in (self.score.get("components") or {}).items():
                metrics[k] = finite(v) or 0.0  # checked_result refused a component that is not finite
        metrics["svbench_error"] = 1.0 if failed else 0.0
        metrics["svbench_solved"] = 1.0 if (not failed and self.score and self.score.get("solved")) else 0.0
        metrics["svbench_turns"] = float(self.turns)
        metrics["svbench_unfinished"] = 1.0 if unfinished else 0.0
        artifacts: dict[str, Any] = {"session_id": self.session_id, "env": self.env, "example_id": self.example_id,
                                     "reason": self.reason, "score": self.score}
        if failed:
            artifacts["error"] = self.error or "no reward"
        return VerifyResultT(env_reward=self.reward, done=True, metrics=metrics, artifacts=artifacts)
