"""OpenRLHF multi-turn agent backed by svbench sessions
(``--train.agent_func_path clients/python/svbench/openrlhf_agent.py``).

OpenRLHF's contract (openrlhf/utils/agent.py, OpenRLHF/OpenRLHF 3c3be62):
the file must define ``AgentExecutor``, a subclass of ``AgentExecutorBase``;
``MultiTurnAgentExecutor(AgentInstance)`` creates one ``AgentInstance()``
(no arguments) per prompt, awaits ``reset({"observation": prompt, "label":
label})`` (which returns ``{"observation": text}``), then loops: generate
from the token ids so far, ``step({"observation_text", "action_text",
"label", "sampling_params"})``, which returns ``{"rewards", "scores",
"environment_feedback", "done", "sampling_params", "extra_logs"}``;
``rewards.item()`` is summed over steps, the last ``scores`` and
``extra_logs`` are kept (extra_logs stacked across items by key), and the
feedback text is tokenized and appended (masked from the loss) before the
next generation. It stops at ``done`` or when the context is full.

Here ``reset`` opens an svbench session for the example the label names
(``{"env": "e2", "example_id": "..."}`` as JSON, or a bare example id of
``SVBENCH_ENV``) and keeps the prompt text (render the dataset's prompt from
the examples endpoint with your chat template and ``tools``). Each ``step``
sends the generated text as the assistant message: reasoning blocks are
split off (the server's rule), Hermes/Qwen ``<tool_call>{...}</tool_call>``
blocks become tool calls, svbench executes them (E2's scanners, E3's
``run_tests``) or plays the next user turn (E5/E6), and the observations
come back as the environment feedback in ChatML (Qwen's template:
tool results as ``<tool_response>`` blocks in a user turn, then the
assistant generation prompt). Intermediate steps reward 0; the last one
rewards the session's score, which is ``/v1/score`` of the transcript, with
every component of the served environments, ``svbench_error``,
``svbench_solved`` and ``svbench_turns`` in ``extra_logs`` (the same keys
on every step and item). The session is closed on ``done``, on any error
(reward 0, ``svbench_error`` 1, ``done``) and, when OpenRLHF stops because
the context is full, once the instance is dropped.

Settings: SVBENCH_URL, SVBENCH_TOKEN, SVBENCH_ENV (environment of bare
labels), SVBENCH_RUBRIC, SVBENCH_MAX_TURNS. Another chat template: subclass
``SvbenchAgentInstance``, override ``format_feedback`` and point
``AgentExecutor`` at it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from typing import Any, Optional

if not __package__:  # loaded by file path, as OpenRLHF does: its package sits beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from svbench._session import (Episode, parse_hermes_tool_calls, reward_of, score_logs, split_reasoning,
                              strip_end_markers, task_from)
from svbench.client import Client, all_components, default_client

try:
    from openrlhf.utils.agent import AgentExecutorBase, AgentInstanceBase, MultiTurnAgentExecutor

    HAVE_OPENRLHF = True
except ImportError:  # OpenRLHF not installed: stand-ins with its signatures
    HAVE_OPENRLHF = False

    class AgentExecutorBase(ABC):  # type: ignore[no-redef]
        @abstractmethod
        async def execute(self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None):
            raise NotImplementedError

    class AgentInstanceBase(ABC):  # type: ignore[no-redef]
        @abstractmethod
        def __init__(self, *args, **kwargs):
            pass

        async def reset(self, states: dict, **kwargs):
            return states

        @abstractmethod
        async def step(self, state_dict: dict, **kwargs):
            raise NotImplementedError

    class MultiTurnAgentExecutor(AgentExecutorBase):  # type: ignore[no-redef]
        def __init__(self, agent_instance_cls):
            assert issubclass(agent_instance_cls, AgentInstanceBase), "AgentInstance must inherit from AgentInstanceBase"
            self.agent_instance_cls = agent_instance_cls

        async def execute(self, prompt, label, sampling_params, max_length: int, hf_tokenizer, llm_engine, images=None):
            raise RuntimeError("MultiTurnAgentExecutor.execute needs OpenRLHF installed")


__all__ = ["AgentExecutor", "AgentInstance", "SvbenchAgentInstance", "Scalar", "chatml_feedback"]

log = logging.getLogger("svbench.openrlhf_agent")

IM_START, IM_END = "<|im_start|>", "<|im_end|>"


class Scalar(float):
    """A float with ``.item()``: OpenRLHF calls ``step_result["rewards"].item()``
    and wraps scores and logs in ``torch.tensor([...])``, which takes it as
    a float (no torch needed here)."""

    def item(self) -> float:
        return float(self)


def chatml_feedback(observations: list[dict[str, Any]], action_text: str, done: bool) -> str:
    """The text OpenRLHF appends after the model's turn, in ChatML as
    Qwen2.5/Qwen3's templates render it: close the assistant turn (unless the
    generation already ended with <|im_end|>), then tool results grouped into
    one user turn of <tool_response> blocks, user turns as they are, then the
    assistant generation prompt. After the last step only the close."""
    out = ["\n" if action_text.rstrip().endswith(IM_END) else IM_END + "\n"]
    if done:
        return out[0]
    i = 0
    while i < len(observations):
        o = observations[i]
        if o.get("role") == "tool":
            out.append(IM_START + "user")
            while i < len(observations) and observations[i].get("role") == "tool":
                out.append("\n<tool_response>\n%s\n</tool_response>" % (observations[i].get("content") or ""))
                i += 1
            out.append(IM_END + "\n")
            continue
        role = o.get("role") or "user"
        out.append("%s%s\n%s%s\n" % (IM_START, role, o.get("content") or "", IM_END))
        i += 1
    out.append(IM_START + "assistant\n")
    return "".join(out)


def _close_in_background(episode: Episode) -> None:
    if not episode.done:
        threading.Thread(target=episode.close, daemon=True).start()


class SvbenchAgentInstance(AgentInstanceBase):
    """One prompt's episode; see the module docstring."""

    def __init__(self, *args: Any, client: Optional[Client] = None, env: Optional[str] = None, **kwargs: Any):
        self.client = client or default_client()
        self.default_env = env or os.environ.get("SVBENCH_ENV") or None
        self.rubric = os.environ.get("SVBENCH_RUBRIC") or None
        mt = os.environ.get("SVBENCH_MAX_TURNS")
        self.max_turns: Optional[int] = int(mt) if mt else None
        self.episode: Optional[Episode] = None
        self.error: Optional[str] = None
        self._log_keys: Optional[list[str]] = None

    # -- OpenRLHF's interface ------------------------------------------------

    async def reset(self, states: dict, **kwargs: Any) -> dict:
        self.error = None
        self.episode = None
        try:
            task = task_from(states.get("label"), self.default_env, rubric=self.rubric, max_turns=self.max_turns)
            ep = Episode(self.client, task)
            await asyncio.to_thread(ep.open)
            self.episode = ep
            # OpenRLHF ends an episode without a last step when the context
            # is full: close the session once this instance is dropped.
            weakref.finalize(self, _close_in_background, ep)
        except Exception as e:
            self.error = "session: %s" % e
            log.warning("svbench: episode for label %r not started: %s", states.get("label"), e)
        return {"observation": states["observation"]}

    async def step(self, states: dict, **kwargs: Any) -> dict:
        action = states.get("action_text") or ""
        ep = self.episode
        if ep is None or self.error:
            return self._result(states, "", True, None, failed=True)
        message = self.parse_action(action, ep.turns + 1)
        try:
            observations = await asyncio.to_thread(ep.step, message)
        except Exception as e:
            self.error = "step: %s" % e
            log.warning("svbench: step of session %s failed: %s", ep.session_id, e)
            await asyncio.to_thread(ep.close)
            return self._result(states, self.format_feedback([], action, True), True, None, failed=True)
        if ep.done:
            return self._result(states, self.format_feedback([], action, True), True, ep.score,
                                failed=reward_of(ep.score) is None)
        return self._result(states, self.format_feedback(observations, action, False), False, None)

    # -- hooks ---------------------------------------------------------------

    def parse_action(self, action_text: str, turn: int) -> dict[str, Any]:
        """The assistant message a generation commits to: reasoning split
        off, end-of-turn tokens dropped, Hermes tool calls parsed."""
        answer, reasoning = split_reasoning(strip_end_markers(action_text))
        content, calls = parse_hermes_tool_calls(answer, prefix="call_%d" % turn)
        msg: dict[str, Any] = {"content": content}
        if reasoning:
            msg["reasoning_content"] = reasoning
        if calls:
            msg["tool_calls"] = calls
        return msg

    def format_feedback(self, observations: list[dict[str, Any]], action_text: str, done: bool) -> str:
        """The environment feedback text; ChatML by default."""
        return chatml_feedback(observations, action_text, done)

    # -- helpers ---------------------------------------------------------------

    def log_keys(self) -> list[str]:
        if self._log_keys is None:
            try:
                self._log_keys = all_components(self.client)
            except Exception:
                self._log_keys = []
        return self._log_keys

    def _result(self, states: dict, feedback: str, done: bool, score: Optional[dict[str, Any]],
                failed: bool = False) -> dict:
        reward = reward_of(score) if done and not failed else None
        value = Scalar(reward if reward is not None else 0.0)
        turns = self.episode.turns if self.episode else 0
        return {
            "rewards": value,
            "scores": value,
            "environment_feedback": feedback,
            "done": done,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": score_logs(self.log_keys(), score if done else None, turns, failed),
        }


class AgentInstance(SvbenchAgentInstance):
    """What ``AgentExecutor`` instantiates (OpenRLHF passes no arguments)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)


class AgentExecutor(MultiTurnAgentExecutor):
    """The class OpenRLHF loads from ``--train.agent_func_path``."""

    def __init__(self) -> None:
        super().__init__(AgentInstance)
