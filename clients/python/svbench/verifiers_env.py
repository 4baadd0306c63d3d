"""svbench as a verifiers v1 taskset (``verifiers.v1``), backed by sessions.

Read from PrimeIntellect-ai/verifiers at a60a606 (docs/v1/tasksets.md,
docs/v1/env.md, verifiers/v1/{task,taskset,env,agent,trace}.py,
utils/decorators.py, utils/loaders.py, envs/user_sim/env.py and the
openenv / nemo_gym tasksets). There, v0 (``vf.Environment``,
``MultiTurnEnv.env_response``, ``vf.Rubric``) lives in ``verifiers.legacy``
and is deprecated; v1 splits an environment into:

* a ``Taskset[TaskT, ConfigT]`` whose ``load()`` yields ``Task(TaskData,
  TaskConfig)`` objects, found by id: an importable module exporting exactly
  one ``Taskset`` subclass (and optionally one ``Env``) through ``__all__``;
* ``Task`` hooks: ``setup(trace, runtime)``, ``finalize(trace, runtime)``,
  ``@vf.reward(weight=...)`` methods taking ``trace`` (``Task.score`` runs
  them and records ``Reward(score, weight)`` on ``trace.rewards``;
  ``trace.reward`` is the weighted sum);
* an ``Env[EnvConfig]`` whose ``async run(task, agents)`` is the control flow:
  ``async with agents.<seat>.interaction(task) as it`` then
  ``await it.turn(...)`` per user turn (a prompted task opens with a bare
  ``turn()``), each returning a ``Segment`` (``messages``, ``terminated``);
  leaving the context finishes the rollout and runs the task's scoring.

What this module provides:

* ``SvbenchTaskset`` (config ``SvbenchConfig``: ``env``, ``split``, ``limit``,
  ``seed``; ``task``: ``SvbenchTaskConfig`` with ``base_url``, ``token_env``,
  ``rubric``, ``max_turns``): one ``SvbenchTask`` per row of
  ``GET /v1/environments/{env}/examples?split=`` (train by default; the eval
  set is ``split="test"``). Its key is ``<env>:<example_id>``.
* ``SvbenchTask``: one reward hook, ``svbench``, that records every rubric
  component of the score as its own reward with the server's weight
  (``/v1/environments`` ``rubric_info``), so ``trace.rewards`` holds one
  weighted entry per component and ``trace.reward`` is the svbench total.
  The score is the session's (when ``SvbenchEnv`` played the episode) or
  ``/v1/score`` of the trace's assistant turns (a plain single-turn eval
  under ``SingleAgentEnv``).
* ``SvbenchEnv``: the episode through a svbench session. It opens the session
  (keyed by the example id) on the rollout's first turn, sends each assistant
  reply as a step (Hermes/Qwen ``<tool_call>`` blocks in the committed text
  are the tool calls; the tools are described in the system prompt), hands
  the observations back as the next user turn (tool results as
  ``<tool_response>`` blocks, E5/E6 turns as user messages), stops when the
  session is ``done`` and closes the session at the end and on errors.
  Its one seat is ``agent`` (``--env.agent.*``) on the tool-less ``null``
  harness: svbench executes the tools, not the harness.
* ``load_taskset(env_id, split, base_url, ...)`` and
  ``load_environment(env_id, split, base_url, ...)`` for Python callers.

From the CLI (the taskset id is the top-level module ``svbench_verifiers``,
which re-exports the two classes)::

    uv run eval svbench-verifiers --env.taskset.env e2 --env.taskset.split test \\
        --env.taskset.task.base-url http://svbench:8080

``verifiers`` is not a dependency: when ``verifiers.v1`` cannot be imported
the module defines stand-ins with the same names and signatures (enough to
import and test it). The v0 reward function stays in ``svbench.verifiers``.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import os
import threading
from collections.abc import Mapping
from typing import Any, Generic, Iterator, Optional, TypeVar

from svbench._session import Episode, parse_hermes_tool_calls, split_reasoning, strip_end_markers
from svbench.client import Client, SvbenchError, checked_result, rubric_info

__all__ = [
    "HAVE_VERIFIERS",
    "TASKSET_ID",
    "SvbenchConfig",
    "SvbenchData",
    "SvbenchEnv",
    "SvbenchEnvConfig",
    "SvbenchTask",
    "SvbenchTaskConfig",
    "SvbenchTaskset",
    "load_environment",
    "load_taskset",
]

TASKSET_ID = "svbench-verifiers"  # imports the top-level module svbench_verifiers

try:  # the current API
    import verifiers.v1 as vf

    HAVE_VERIFIERS = True
except ImportError:  # verifiers not installed: stand-ins with verifiers.v1's names and signatures
    HAVE_VERIFIERS = False

    class _Stand:
        """Keyword-constructed value with class-level defaults (deep-copied),
        like the pydantic models it stands in for."""

        def __init__(self, **kwargs: Any) -> None:
            for klass in reversed(type(self).__mro__):
                fields = klass.__dict__.get("__annotations__") or {}
                for k, v in list(vars(klass).items()):
                    if not k.startswith("_") and k in fields:
                        setattr(self, k, copy.deepcopy(v))
            for k, v in kwargs.items():
                setattr(self, k, v)

        def model_copy(self, update: Optional[dict] = None) -> Any:
            clone = copy.copy(self)
            for k, v in (update or {}).items():
                setattr(clone, k, v)
            return clone

    _T = TypeVar("_T")
    _C = TypeVar("_C")
    _S = TypeVar("_S")

    class _vf:  # namespace standing in for `import verifiers.v1 as vf`
        class TaskConfig(_Stand):
            judges: list = []
            stops: dict = {}
            metrics: dict = {}
            rewards: dict = {}

        class TasksetConfig(_Stand):
            id: str = ""
            task: Any = None
            system_prompt: Any = None

        class TaskData(_Stand):
            idx: Optional[int] = None
            name: Optional[str] = None
            description: Optional[str] = None
            prompt: Any = None
            system_prompt: Optional[str] = None

        class AgentConfig(_Stand):
            harness: Any = None
            max_turns: Optional[int] = None

        class EnvConfig(_Stand):
            id: str = ""
            taskset: Any = None

        class State(_Stand):
            pass

        @staticmethod
        def reward(func: Any = None, weight: float = 1.0, priority: int = 0) -> Any:
            def mark(f: Any) -> Any:
                f.reward = True
                f.reward_priority = priority
                f._vf_weight = weight
                return f

            return mark if func is None else mark(func)

        class Task(Generic[_T, _S, _C]):
            def __init__(self, data: Any, config: Any = None) -> None:
                self.data = data
                self.config = config

            async def setup(self, trace: Any, runtime: Any) -> None:
                return None

            async def finalize(self, trace: Any, runtime: Any) -> None:
                return None

            async def score(self, trace: Any, runtime: Any = None) -> None:
                """verifiers.v1 Task.score's recording: decorated rewards run
                with what they name (task, trace, runtime); a float is recorded
                under the hook's name with its weight, a mapping key by key."""
                hooks = [getattr(self, n) for n in dir(type(self)) if getattr(getattr(type(self), n, None), "reward", False) is True]
                hooks.sort(key=lambda fn: (-getattr(fn, "reward_priority", 0), fn.__name__))
                avail = {"task": self.data, "trace": trace, "runtime": runtime}
                for fn in hooks:
                    trace.rewards[fn.__name__] = None
                for fn in hooks:
                    params = inspect.signature(fn).parameters
                    result = await fn(**{k: avail[k] for k in params if k in avail})
                    if isinstance(result, Mapping):
                        if trace.rewards.get(fn.__name__) is None:
                            trace.rewards.pop(fn.__name__, None)
                        items = list(result.items())
                    else:
                        items = [(fn.__name__, result)]
                    for k, v in items:
                        trace.record_reward(k, v, getattr(fn, "_vf_weight", 1.0))

        class Taskset(Generic[_T, _C]):
            def __init__(self, config: Any) -> None:
                self.config = config

            def load(self) -> Any:
                raise NotImplementedError

            def __iter__(self) -> Iterator[Any]:
                return iter(self.load())

        class Env(Generic[_C]):
            def __init__(self, config: Any) -> None:
                self.config = config

            async def setup(self, agents: Any) -> None:
                return None

            async def run(self, task: Any, agents: Any) -> None:
                raise NotImplementedError

            async def finalize(self, task: Any, episode: Any) -> None:
                return None

    vf = _vf  # type: ignore[assignment]


# -- config and data -------------------------------------------------------------------


class SvbenchTaskConfig(vf.TaskConfig):
    """Run-time knobs (``--env.taskset.task.*``)."""

    base_url: Optional[str] = None
    """svbench serve's URL; unset reads SVBENCH_URL (default http://127.0.0.1:8080)."""
    token_env: str = "SVBENCH_TOKEN"
    """Environment variable holding the server's bearer token (never stored in configs)."""
    rubric: Optional[str] = None
    """Rubric to score with; unset is the environment's default."""
    max_turns: Optional[int] = None
    """Session turn cap; unset is the environment's own."""
    request_timeout: float = 120.0


class SvbenchConfig(vf.TasksetConfig):
    """Which rows load (``--env.taskset.*``)."""

    env: str = "e1"
    """svbench environment id or alias (e1 ... e6)."""
    split: Optional[str] = "train"
    """Served split: train (default) for training, test for evaluation, dev, all."""
    limit: Optional[int] = None
    """At most this many rows (all when unset)."""
    seed: Optional[int] = None
    """The server's deterministic shuffle before paging."""
    task: SvbenchTaskConfig = SvbenchTaskConfig()


class SvbenchData(vf.TaskData):
    """One svbench example: its prompt, tools and the id the server scores it by."""

    env: str = ""
    example_id: str = ""
    tools: Optional[list] = None
    """The OpenAI ``tools[]`` of the environment (also described in system_prompt)."""
    answer: Any = None
    """The gold answer as the examples endpoint lists it (not sent to the model)."""


# -- shared helpers --------------------------------------------------------------------

_clients: dict[tuple, Client] = {}
_clients_lock = threading.Lock()


def _client(cfg: Any) -> Client:
    url = getattr(cfg, "base_url", None) or None
    token = os.environ.get(getattr(cfg, "token_env", None) or "SVBENCH_TOKEN") or None
    timeout = float(getattr(cfg, "request_timeout", 120.0) or 120.0)
    key = (url, token, timeout)
    with _clients_lock:
        if key not in _clients:
            _clients[key] = Client(url=url, token=token, timeout=timeout)
        return _clients[key]


def _get(m: Any, name: str, default: Any = None) -> Any:
    """A message field, from a wire dict or a typed message."""
    if isinstance(m, Mapping):
        return m.get(name, default)
    return getattr(m, name, default)


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for p in content:
        t = _get(p, "text")
        if t:
            parts.append(t)
    return "".join(parts)


def tools_system_text(tools: list) -> str:
    """The tools, described for a model that writes Hermes/Qwen tool calls
    (the null harness advertises no tools: svbench executes them)."""
    if not tools:
        return ""
    lines = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    return (
        "# Tools\n\nYou can call these functions (JSON signatures inside <tools></tools>):\n"
        "<tools>\n%s\n</tools>\n\n"
        "To call one, write a JSON object with its name and arguments inside <tool_call></tool_call> tags:\n"
        '<tool_call>\n{"name": "<function-name>", "arguments": {<arguments>}}\n</tool_call>\n'
        "The results come back in <tool_response></tool_response> blocks. Give your final answer without a tool call."
        % lines
    )


def assistant_message(message: Any, call_prefix: str = "call") -> dict[str, Any]:
    """A model reply as a svbench session message: the committed text (the
    reasoning rule: thinking is not the answer), its Hermes ``<tool_call>``
    blocks as calls, and any native ``tool_calls``."""
    raw = _text(_get(message, "content"))
    answer, thought = split_reasoning(strip_end_markers(raw))
    content, calls = parse_hermes_tool_calls(answer, call_prefix)
    for i, c in enumerate(_get(message, "tool_calls") or []):
        fn = _get(c, "function")
        name = _get(fn, "name") if fn is not None else _get(c, "name")
        args = _get(fn, "arguments") if fn is not None else _get(c, "arguments")
        calls.append({"id": _get(c, "id") or "%s_n%d" % (call_prefix, i), "name": name,
                      "arguments": args if isinstance(args, str) else json.dumps(args or {})})
    reasoning = "\n".join(x for x in (_get(message, "reasoning_content") or _get(message, "reasoning") or "", thought) if x)
    msg: dict[str, Any] = {"content": content}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = calls
    return msg


def observation_messages(observations: list) -> list[dict[str, Any]]:
    """Session observations as the next user turn: consecutive tool results
    in one user message of ``<tool_response>`` blocks, each user turn as it is."""
    out: list[dict[str, Any]] = []
    pending: list[str] = []
    for o in observations:
        if o.get("role") == "tool":
            pending.append("<tool_response>\n%s\n</tool_response>" % (o.get("content") or ""))
            continue
        if pending:
            out.append({"role": "user", "content": "\n".join(pending)})
            pending = []
        out.append({"role": "user", "content": str(o.get("content") or "")})
    if pending:
        out.append({"role": "user", "content": "\n".join(pending)})
    return out


def _trace_transcript(trace: Any) -> list[dict[str, Any]]:
    """The assistant turns of a trace not played through a session, as svbench messages."""
    msgs = list(getattr(trace, "assistant_messages", None) or [])
    out: list[dict[str, Any]] = []
    for i, m in enumerate(msgs):
        msg = assistant_message(m, "call_%d" % i)
        msg["role"] = "assistant"
        out.append(msg)
    return out


# -- the task --------------------------------------------------------------------------


class SvbenchTask(vf.Task[SvbenchData, vf.State, SvbenchTaskConfig]):
    """One svbench example; its rewards are svbench's components, with the server's weights."""

    @property
    def key(self) -> str:
        return "%s:%s" % (self.data.env, self.data.example_id)

    def session_body(self) -> dict[str, Any]:
        cfg = self.config
        body: dict[str, Any] = {"env": self.data.env, "example_id": self.data.example_id}
        if getattr(cfg, "rubric", None):
            body["rubric"] = cfg.rubric
        if getattr(cfg, "max_turns", None):
            body["max_turns"] = cfg.max_turns
        return body

    def weights(self) -> dict[str, float]:
        info = rubric_info(_client(self.config), self.data.env, getattr(self.config, "rubric", None))
        return {c["name"]: float(c["weight"]) for c in info.get("components") or []}

    @vf.reward(weight=1.0)
    async def svbench(self, trace: Any) -> dict:
        """Record each component as its own reward (``trace.record_reward(name,
        value, server weight)``); returns no keyed scores of its own, so
        ``trace.rewards`` holds exactly the components. A component the rubric
        does not weigh is a metric; ``svbench_residual`` (weight 1) is recorded
        only if the server's total ever differs from the weighted sum."""
        info = trace.info.get("svbench") or {}
        score = info.get("score")
        if score is None:
            if info.get("session_id"):
                raise SvbenchError("session_unfinished",
                                   "the svbench session ended without a score (%s)" % (info.get("error") or info.get("reason") or "not done"))
            transcript = _trace_transcript(trace)
            item = {"env": self.data.env, "example_id": self.data.example_id, "completion": transcript}
            if getattr(self.config, "rubric", None):
                item["rubric"] = self.config.rubric
            score = (await asyncio.to_thread(_client(self.config).score, [item]))[0]
            trace.info["svbench"] = dict(info, transcript=transcript, score=score)
        # A reward or component that is not a finite number fails the
        # rollout like a verifier error, rather than entering trace.reward.
        score = checked_result(score)
        if score.get("error"):
            err = score["error"]
            raise SvbenchError(err.get("code") or "score_failed", err.get("message") or str(err))
        weights = await asyncio.to_thread(self.weights)
        total = 0.0
        for name, value in sorted((score.get("components") or {}).items()):
            if name in weights:
                trace.record_reward(name, float(value), weights[name])
                total += float(value) * weights[name]
            else:
                trace.record_metric(name, float(value))
        residual = float(score.get("reward") or 0.0) - total
        if abs(residual) > 1e-9:
            trace.record_reward("svbench_residual", residual, 1.0)
        trace.record_metric("svbench_solved", 1.0 if score.get("solved") else 0.0)
        return {}


# -- the taskset -----------------------------------------------------------------------


class SvbenchTaskset(vf.Taskset[SvbenchTask, SvbenchConfig]):
    """The rows of one svbench environment's split, from the examples endpoint."""

    PAGE = 1000

    def load(self) -> Iterator[SvbenchTask]:
        cfg = self.config
        task_cfg = cfg.task if cfg.task is not None else SvbenchTaskConfig()
        client = _client(task_cfg)
        offset, idx = 0, 0
        while True:
            want = self.PAGE if cfg.limit is None else min(self.PAGE, cfg.limit - idx)
            if want <= 0:
                return
            page = client.examples(cfg.env, split=cfg.split, offset=offset, limit=want, seed=cfg.seed)
            rows = page.get("examples") or []
            for ex in rows:
                yield SvbenchTask(self.row_data(idx, ex), task_cfg)
                idx += 1
            offset += len(rows)
            if not rows or offset >= int(page.get("total") or 0):
                return

    def row_data(self, idx: int, ex: dict) -> SvbenchData:
        prompt = [dict(m) for m in ex.get("prompt") or []]
        system = []
        while prompt and prompt[0].get("role") == "system":
            system.append(_text(prompt.pop(0).get("content")))
        tools = ex.get("tools") or []
        if tools:
            system.append(tools_system_text(tools))
        env = ex.get("env") or self.config.env
        return SvbenchData(
            idx=idx,
            name="%s:%s" % (env, ex["example_id"]),
            prompt=prompt,
            system_prompt="\n\n".join(s for s in system if s) or None,
            env=env,
            example_id=ex["example_id"],
            tools=tools,
            answer=ex.get("answer"),
        )


# -- the env ---------------------------------------------------------------------------


class SvbenchEnvConfig(vf.EnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(harness={"id": "null"})
    """The policy's seat (``--env.agent.*``), on the tool-less null harness."""


class SvbenchEnv(vf.Env[SvbenchEnvConfig]):
    """One svbench session per rollout, played turn by turn through the agent's interaction."""

    async def run(self, task: Any, agents: Any) -> None:
        async with agents.agent.interaction(task) as interaction:
            await play(task, interaction)


async def play(task: Any, interaction: Any) -> None:
    """The episode: open the session, then alternate model segments and
    session steps until the session is done, the agent's run ends, or a
    step fails. What was played is left on ``interaction.trace.info["svbench"]``
    for the reward hook (which runs when the interaction closes)."""
    trace = interaction.trace
    episode = Episode(_client(task.config), task.session_body())
    record: dict[str, Any] = {}
    trace.info["svbench"] = record
    try:
        segment = await interaction.turn()  # the prompted task speaks first
        await asyncio.to_thread(episode.open)
        record["session_id"] = episode.session_id
        while not segment.terminated:
            replies = [m for m in segment.messages if _get(m, "role") == "assistant"]
            if not replies:
                trace.stop("empty_reply")
                break
            msg = assistant_message(replies[-1], "call_%d" % episode.turns)
            observations = await asyncio.to_thread(episode.step, msg)
            if episode.done:
                trace.stop("svbench_" + (episode.reason or "done"))
                break
            if not observations:
                trace.stop("svbench_no_observation")
                break
            segment = await interaction.turn(observation_messages(observations))
    except Exception as e:
        record["error"] = str(e)
        raise
    finally:
        await asyncio.to_thread(episode.close)
        record.update(transcript=episode.transcript, turns=episode.turns, reason=episode.reason)
        if episode.score is not None:
            record["score"] = episode.score
        if episode.error and "error" not in record:
            record["error"] = episode.error


# -- loaders ---------------------------------------------------------------------------


def _configs(env_id: str, split: Optional[str], base_url: Optional[str], limit: Optional[int],
             seed: Optional[int], rubric: Optional[str], max_turns: Optional[int], token_env: str) -> SvbenchConfig:
    task = SvbenchTaskConfig(base_url=base_url, token_env=token_env, rubric=rubric, max_turns=max_turns)
    return SvbenchConfig(id=TASKSET_ID, env=env_id, split=split, limit=limit, seed=seed, task=task)


def load_taskset(env_id: str = "e1", split: Optional[str] = "train", base_url: Optional[str] = None,
                 limit: Optional[int] = None, seed: Optional[int] = None, rubric: Optional[str] = None,
                 max_turns: Optional[int] = None, token_env: str = "SVBENCH_TOKEN") -> SvbenchTaskset:
    """The taskset of env_id's split (train by default; split="test" for evaluation)."""
    return SvbenchTaskset(_configs(env_id, split, base_url, limit, seed, rubric, max_turns, token_env))


def load_environment(env_id: str = "e1", split: Optional[str] = "train", base_url: Optional[str] = None,
                     limit: Optional[int] = None, seed: Optional[int] = None, rubric: Optional[str] = None,
                     max_turns: Optional[int] = None, token_env: str = "SVBENCH_TOKEN", **agent: Any) -> Any:
    """The ``SvbenchEnv`` over ``load_taskset(...)``, built through verifiers'
    own loader (``vf.load_environment(EnvConfig)``); ``agent`` fields
    (``model``, ``max_turns``, ...) go to the seat's ``AgentConfig``. Needs
    verifiers installed (the import of ``svbench_verifiers`` by id)."""
    if not HAVE_VERIFIERS:
        raise ImportError("load_environment needs verifiers (pip install verifiers); load_taskset works without it")
    seat = vf.AgentConfig(harness={"id": "null"}, **agent)
    config = SvbenchEnvConfig(taskset=_configs(env_id, split, base_url, limit, seed, rubric, max_turns, token_env), agent=seat)
    return vf.load_environment(config)
