"""verl tool agent loop backed by svbench sessions: a ``BaseTool`` for every
svbench tool and a ``BaseInteraction`` for the model's answers and the
simulated user turns (E5/E6), sharing one session per trajectory.

verl's contract (volcengine/verl b178a3c: verl/tools/base_tool.py,
verl/interactions/base.py, verl/experimental/agent_loop/tool_agent_loop.py):

* tools come from ``multi_turn.tool_config_path`` (``tools: [{class_name,
  config: {type: native, ...}, tool_schema}]``), one instance per entry;
  for each parsed call the loop runs ``create(create_kwargs=row's
  tools_kwargs[name].create_kwargs)``, ``execute(instance_id, arguments,
  agent_data=...)`` (→ ``(ToolResponse, step reward, metrics)``) and
  ``release(instance_id)``; the calls of one turn run concurrently;
* the interaction comes from ``multi_turn.interaction_config_path``
  (``interaction: [{name, class_name, config}]``); the loop calls
  ``start_interaction(request_id, **row's extra_info.interaction_kwargs)``
  before generating, and after every turn without tool calls
  ``generate_response(request_id, messages)`` → ``(terminate, user text,
  turn score, metrics)``; turn scores reach the reward function as
  ``extra_info["turn_scores"]`` (the reward loop merges the agent loop's
  extra fields into extra_info).

So the interaction holds the session: ``start_interaction`` opens it for
``interaction_kwargs`` ``{"name": "svbench", "env": "e2", "example_id":
"..."}`` under verl's request id; each tool call is one step (an assistant
message with that call alone, steps of one trajectory serialised), found by
``agent_data.request_id``; an answer without tool calls is the next step,
whose observations (E5/E6's next user turn) are the interaction's reply;
at the end the interaction terminates with the session's score as the turn
score, and closes the session. ``compute_score`` here turns the last turn
score into verl's reward: it is ``/v1/score`` of the transcript. The
interaction is required even for tool-only environments: it is what hands
the final answer to svbench. Components do not reach ``reward_extra_info``
(verl carries only numbers from the agent loop to the reward function);
``score.components`` of the session is in the interaction's metrics.

verl stops a trajectory at ``response_length``, ``max_assistant_turns`` or
``max_user_turns`` without calling the interaction again, and nothing in
verl calls ``finalize_interaction``: the session would stay open (and keep
a slot of the server's ``--max-sessions``) until its idle timeout. Run the
agent loop ``svbench_tool_agent`` (``SvbenchToolAgentLoop``: verl's
``ToolAgentLoop`` that closes, when the trajectory ends, the sessions it
opened; examples/verl_svbench_agent_loop.yaml registers it), and sessions
ask the server for a short idle timeout (``idle_timeout_s``, 300 s) in any
case. A trajectory cut off this way scores 0 with ``svbench_error`` 1 and
``svbench_unfinished`` 1.

``python3 -m svbench.verl_tools e2 > svbench_e2_tools.yaml`` writes the tool
config (schemas from the server); clients/python/examples/ has the YAMLs.
Settings in each ``config``: ``url``, ``token_env`` (name of the variable
holding the token; default SVBENCH_TOKEN), ``env`` (default environment),
``rubric``, ``max_turns``, ``idle_timeout_s`` (seconds without a request
before the server closes the session; default SVBENCH_SESSION_IDLE_S or 300,
0 for the server's own), ``timeout`` (per request, default 600).
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import sys
import uuid
import warnings
from typing import Any, Optional

if not __package__:  # loaded by file path: its package sits beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from svbench._session import Episode, observation_text, reward_of, task_from
from svbench.client import Client, SvbenchError, _env_matches, finite

try:
    from verl.interactions.base import BaseInteraction
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

    HAVE_VERL = True
except ImportError:  # verl not installed: stand-ins with its signatures
    HAVE_VERL = False
    OpenAIFunctionToolSchema = Any  # type: ignore[misc,assignment]

    class ToolResponse:  # type: ignore[no-redef]
        def __init__(self, text: Optional[str] = None, image: Optional[list] = None, video: Optional[list] = None):
            self.text, self.image, self.video = text, image, video

        def is_empty(self) -> bool:
            return not self.text and not self.image and not self.video

    class BaseTool:  # type: ignore[no-redef]
        def __init__(self, config: dict, tool_schema: Any):
            self.config = config
            self.tool_schema = tool_schema or self.get_openai_tool_schema()
            assert self.tool_schema is not None, "Tool schema is not set!"
            self.name = self.tool_schema.function.name

        def get_openai_tool_schema(self) -> Any:
            return self.tool_schema

        async def create(self, instance_id: Optional[str] = None, **kwargs) -> tuple[str, ToolResponse]:
            return (instance_id or str(uuid.uuid4())), ToolResponse()

        async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs) -> tuple[ToolResponse, float, dict]:
            return ToolResponse(text="Updated the tool state."), 0.0, {}

        async def calc_reward(self, instance_id: str, **kwargs) -> float:
            return 0.0

        async def release(self, instance_id: str, **kwargs) -> None:
            pass

    class BaseInteraction:  # type: ignore[no-redef]
        def __init__(self, config: dict[str, Any]):
            self.config = config
            self.name: str = config.get("name", "interaction_agent")

        async def start_interaction(self, instance_id: Optional[str] = None, **kwargs) -> str:
            return instance_id or str(uuid.uuid4())

        async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs
                                    ) -> tuple[bool, str, float, dict[str, Any]]:
            return False, "", 0.0, {}

        async def calculate_score(self) -> float:
            return 0.0

        async def finalize_interaction(self) -> None:
            pass


__all__ = ["FinalisesSessions", "SvbenchInteraction", "SvbenchTool", "close_trajectory", "compute_score", "tool_config"]


class _Trajectory:
    """A session and the asyncio lock that serialises its steps."""

    def __init__(self, episode: Optional[Episode], error: Optional[str] = None):
        self.episode = episode
        self.error = error
        self.lock = asyncio.Lock()


# verl request id -> trajectory; tools and the interaction of one agent-loop
# worker process share it.
_trajectories: dict[str, _Trajectory] = {}

# The request ids the current agent-loop run opened sessions for, when it
# runs under SvbenchToolAgentLoop (None otherwise). A context variable: the
# loop's tool calls run in tasks that copy the context, and share the list.
_opened_here: contextvars.ContextVar[Optional[list[str]]] = contextvars.ContextVar("svbench_opened_here",
                                                                                    default=None)


def _track(instance_id: str) -> None:
    opened = _opened_here.get()
    if opened is not None:
        opened.append(instance_id)


async def close_trajectory(instance_id: str) -> bool:
    """Forget the trajectory and close its session; True when an episode was
    still open (the trainer abandoned it before the end)."""
    tr = _trajectories.pop(instance_id, None)
    if tr is None or tr.episode is None:
        return False
    unfinished = not tr.episode.done
    await asyncio.to_thread(tr.episode.close)
    return unfinished


def _client(config: dict[str, Any]) -> Client:
    token = os.environ.get(config.get("token_env") or "SVBENCH_TOKEN") or None
    return Client(url=config.get("url") or None, token=token, timeout=float(config.get("timeout") or 600))


def _task_defaults(config: dict[str, Any]) -> dict[str, Any]:
    mt = config.get("max_turns")
    return {"rubric": config.get("rubric") or None, "max_turns": int(mt) if mt else None}


async def _open(client: Client, config: dict[str, Any], kwargs: dict[str, Any]) -> _Trajectory:
    try:
        task = task_from({k: v for k, v in kwargs.items() if k != "name"}, config.get("env"), **_task_defaults(config))
        ep = Episode(client, task, idle_timeout_s=config.get("idle_timeout_s"))
        await asyncio.to_thread(ep.open)
        return _Trajectory(ep)
    except Exception as e:
        warnings.warn("svbench: session not started for %r: %s" % (kwargs, e))
        return _Trajectory(None, str(e))


class SvbenchInteraction(BaseInteraction):
    """Holds the trajectory's session: opens it, hands it the model's answers,
    answers with the simulated user's next turn, scores the end."""

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.client = _client(config)

    async def start_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> str:
        instance_id = instance_id or uuid.uuid4().hex
        old = _trajectories.pop(instance_id, None)
        if old and old.episode:
            await asyncio.to_thread(old.episode.close)
        _trajectories[instance_id] = await _open(self.client, self.config, kwargs)
        _track(instance_id)
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs: Any
                                ) -> tuple[bool, str, Optional[float], dict[str, Any]]:
        tr = _trajectories.get(instance_id)
        if tr is None or tr.episode is None:
            _trajectories.pop(instance_id, None)
            return True, "", None, {"svbench_error": (tr.error if tr else "no session for this request")}
        ep = tr.episode
        last = messages[-1] if messages else {}
        content = last.get("content") if last.get("role") == "assistant" else ""
        if isinstance(content, list):
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        async with tr.lock:
            try:
                obs = await asyncio.to_thread(ep.step, {"content": content or ""}) if not ep.done else []
            except Exception as e:
                _trajectories.pop(instance_id, None)
                return True, "", None, {"svbench_error": str(e)}
        if ep.done:
            _trajectories.pop(instance_id, None)
            metrics = {"svbench_score": ep.score, "svbench_transcript": ep.transcript, "svbench_turns": ep.turns}
            return True, "", reward_of(ep.score), metrics
        return False, observation_text(obs), None, {}

    async def calculate_score(self, instance_id: Optional[str] = None, **kwargs: Any) -> float:
        tr = _trajectories.get(instance_id or "")
        return float(reward_of(tr.episode.score) or 0.0) if tr and tr.episode else 0.0

    async def finalize_interaction(self, instance_id: Optional[str] = None, **kwargs: Any) -> None:
        await close_trajectory(instance_id or "")


class SvbenchTool(BaseTool):
    """One svbench tool (the schema's function name); every call is one step
    of the trajectory's session."""

    def __init__(self, config: dict[str, Any], tool_schema: Any):
        super().__init__(config, tool_schema)
        self.client = _client(config)
        self._create_kwargs: dict[str, dict[str, Any]] = {}

    async def create(self, instance_id: Optional[str] = None, **kwargs: Any) -> tuple[str, ToolResponse]:
        instance_id = instance_id or uuid.uuid4().hex
        self._create_kwargs[instance_id] = dict(kwargs.get("create_kwargs") or {})
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
                      ) -> tuple[ToolResponse, float, dict]:
        agent_data = kwargs.get("agent_data")
        key = getattr(agent_data, "request_id", None) or instance_id
        tr = _trajectories.get(key)
        if tr is None:
            # No interaction configured: open the session from the row's
            # create_kwargs (the final answer then never reaches svbench).
            tr = await _open(self.client, self.config, self._create_kwargs.get(instance_id) or {})
            _trajectories[key] = tr
            _track(key)
        if tr.episode is None:
            return ToolResponse(text="svbench: no session: %s" % tr.error), 0.0, {"svbench_error": 1.0}
        ep = tr.episode
        call = {"name": self.name, "arguments": json.dumps(parameters or {})}
        async with tr.lock:
            call["id"] = "call_%d" % (ep.turns + 1)
            try:
                obs = await asyncio.to_thread(ep.step, {"content": "", "tool_calls": [call]})
            except SvbenchError as e:
                return ToolResponse(text="svbench: %s" % e.message), 0.0, {"svbench_error": 1.0}
        text = observation_text([o for o in obs if o.get("role") == "tool"] or obs)
        if ep.done:
            text += "\n[episode over: %s]" % (ep.reason or "done")
        return ToolResponse(text=text), 0.0, {"svbench_turn": float(ep.turns)}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        return 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        self._create_kwargs.pop(instance_id, None)


class FinalisesSessions:
    """Mixin for a verl agent loop: whatever sessions a run opened (the
    interaction's, or the tools' without one) are closed when the run ends,
    however it ends. verl's ToolAgentLoop stops at ``response_length``,
    ``max_assistant_turns`` or ``max_user_turns`` without calling the
    interaction again, and nothing in verl calls ``finalize_interaction``:
    without this the session stays open until the server's idle timeout."""

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        opened: list[str] = []
        token = _opened_here.set(opened)
        output = None
        try:
            output = await super().run(sampling_params, **kwargs)  # type: ignore[misc]
            return output
        finally:
            _opened_here.reset(token)
            unfinished = False
            for instance_id in opened:
                unfinished = await close_trajectory(instance_id) or unfinished
            extra = getattr(output, "extra_fields", None)
            if unfinished and isinstance(extra, dict):
                extra["svbench_unfinished"] = True


_agent_loop_class: Optional[type] = None


def _build_agent_loop() -> type:
    """verl's ToolAgentLoop with FinalisesSessions, registered as
    ``svbench_tool_agent``. Built on first use: importing verl's agent loop
    pulls in its rollout stack, which the tools and the reward function do
    not need."""
    global _agent_loop_class
    if _agent_loop_class is None:
        from verl.experimental.agent_loop.agent_loop import register
        from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop

        cls = type("SvbenchToolAgentLoop", (FinalisesSessions, ToolAgentLoop), {
            "__module__": __name__,
            "__doc__": "verl's tool agent loop that closes the svbench sessions its trajectory opened when it ends "
                       "(agent_loop_config_path: clients/python/examples/verl_svbench_agent_loop.yaml).",
        })
        _agent_loop_class = register("svbench_tool_agent")(cls)
    return _agent_loop_class


def __getattr__(name: str) -> Any:
    # hydra resolves _target_: svbench.verl_tools.SvbenchToolAgentLoop with getattr.
    if name == "SvbenchToolAgentLoop":
        return _build_agent_loop()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def compute_score(data_source: Any = None, solution_str: Any = None, ground_truth: Any = None,
                  extra_info: Any = None, **kwargs: Any) -> dict[str, float]:
    """verl's reward for a trajectory played through SvbenchInteraction: the
    session's score, which the interaction gave as the last turn score.
    ``{"score", "svbench_error", "svbench_unfinished"}``; an unfinished
    episode, or a last turn score that is not a finite number, scores 0 with
    svbench_error 1; svbench_unfinished is 1 when SvbenchToolAgentLoop closed
    the episode because verl stopped the trajectory at a length or turn
    limit."""
    info = extra_info if isinstance(extra_info, dict) else {}
    turn_scores = info.get("turn_scores")
    last = finite(turn_scores[-1]) if turn_scores is not None and len(turn_scores) > 0 else None
    unfinished = 1.0 if info.get("svbench_unfinished") else 0.0
    if last is not None:
        return {"score": last, "svbench_error": 0.0, "svbench_unfinished": unfinished}
    return {"score": 0.0, "svbench_error": 1.0, "svbench_unfinished": unfinished}


async def compute_score_async(**kwargs: Any) -> dict[str, float]:
    return compute_score(**kwargs)


def tool_config(env: str, client: Optional[Client] = None, url: Optional[str] = None) -> str:
    """verl's tool config YAML for env's tools (JSON is YAML), schemas from
    the server's /v1/environments."""
    client = client or Client(url=url)
    for info in client.environments_cached():
        if _env_matches(info, env):
            tools = []
            for t in info.get("openai_tools") or []:
                fn = dict(t["function"])
                params = dict(fn.get("parameters") or {"type": "object", "properties": {}})
                params.setdefault("properties", {})
                params.setdefault("required", [])
                fn["parameters"] = params
                tools.append({"class_name": "svbench.verl_tools.SvbenchTool",
                              "config": {"type": "native", "url": client.url, "env": env},
                              "tool_schema": {"type": "function", "function": fn}})
            return json.dumps({"tools": tools}, indent=2) + "\n"
    raise SvbenchError("unknown_environment", "the server does not serve %r" % (env,))


if __name__ == "__main__":  # python3 -m svbench.verl_tools e2 > tools.yaml
    print(tool_config(sys.argv[1] if len(sys.argv) > 1 else "e2"), end="")


if __name__ != "svbench.verl_tools":
    # Loaded by path as verl's custom_reward_function (custom_module_<hash>,
    # not in sys.modules): hand out the package module's functions, which
    # pickle by reference (svbench.verl explains why).
    from svbench import verl_tools as _module

    compute_score = _module.compute_score
    compute_score_async = _module.compute_score_async
