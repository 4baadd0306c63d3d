"""TRL ``environment_factory`` backed by svbench sessions.

TRL's contract (trl/trainer/grpo_trainer.py and docs/source/grpo_trainer.md,
huggingface/trl f2cd577): ``GRPOTrainer(environment_factory=factory)``
calls ``factory()`` with no arguments for each concurrent rollout and reuses
the instances across batches; an instance's public methods (other than
``reset`` and ``get_reward``) are the tools, described to the model from
their type hints and Google-style docstrings; ``reset(**row)`` receives the
dataset row's other columns as keywords before each rollout (a returned
string is appended to the last user message; None leaves the prompt alone);
a tool call runs ``method(**arguments)`` and ``str(result)`` becomes the
tool message (an exception becomes ``{"error": ...}``); the loop generates
again while the model calls tools and ends at an answer without calls.
GRPOTrainer's reward functions receive ``completions`` (the assistant and
tool messages after the prompt) and ``environments`` (one instance per
completion). AsyncGRPOTrainer (trl/experimental/async_grpo/
async_rollout_worker.py) runs the rollouts in a spawned process: it pickles
the factory and every reward function (closures are refused at
``start()``), calls reward functions without ``environments``, and calls an
environment's ``get_reward()`` (no argument) right after its rollout. Both
trainers end the tool loop at an answer without calls, without showing it
to the environment.

* ``trl_environment("e2")``: the factory (picklable: the server's address
  and the task defaults; the class is built in each process). Its
  instances have one method per tool of the environment
  (``run_kubelinter``, ``run_trivy``, ``run_opa``; E3's ``run_tests``),
  each one step of the session: an assistant message holding that call
  alone (TRL hands the tool its arguments, not the message), with the
  tool's output as the result. ``reset`` opens a session for the row's
  ``example_id`` (and optional ``env``, ``rubric``; or an ``svbench``
  column holding the task object), closing the one before.
* ``trl_env_reward_funcs("e2")``: the rewards, picklable callable instances
  (``SessionReward``). The instances define no ``get_reward``: it takes no
  argument and the environment never sees the final answer, so it has
  nothing to score. With ``environments`` (GRPOTrainer) the functions send
  the completion's last assistant message as the session's last step and
  return the session's score; without them (AsyncGRPOTrainer) they score
  the completion (its tool calls, the tool results the session returned,
  the answer) through ``/v1/score`` for the row's example, which is what a
  session's score is. The total, or with ``components=True`` one function
  per rubric component (pair with ``trl_reward_weights``). None where an
  episode failed or did not finish, or its score's reward or a component
  is not a finite number.
* ``trl_env_dataset("e2")``: rows ``{"prompt", "example_id", "env"}`` from
  the examples endpoint, for ``train_dataset``.

E5/E6 (simulated user turns) do not fit this loop: TRL generates again only
after tool calls and has no user turn, so an episode that answers with the
next user turn ends unfinished (reward None, with a warning). Train them
with the OpenRLHF agent or verl's interaction.

Under AsyncGRPOTrainer a session stays open after its rollout until the
pooled instance is reset for the next one (at most one per instance, and
the pool holds as many instances as rollouts in flight). The rollout
process ends with ``os._exit`` (multiprocessing), which collects nothing:
its last sessions close at the server's idle timeout, which the sessions
ask to be short (``idle_timeout_s``).
"""

from __future__ import annotations

import inspect
import json
import keyword
import threading
import typing
import uuid
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

from svbench._session import TASK_KEYS, Episode, observation_text, reward_of, task_from
from svbench.client import Client, SvbenchError, _check_count, _column, _env_matches, make_item, rubric_info
from svbench.trl import RewardFunc, _component, client_from_settings, client_settings

__all__ = ["SessionReward", "SvbenchToolEnv", "trl_env_dataset", "trl_env_reward_funcs", "trl_environment"]

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "array": list, "object": dict}


class SvbenchToolEnv:
    """Base of the environment classes ``trl_environment`` builds: one
    session per rollout. Tool methods are added per environment."""

    svbench_env: str = ""
    svbench_rubric: Optional[str] = None
    svbench_max_turns: Optional[int] = None

    def __init__(self, client: Optional[Client] = None):
        self._client = client or Client()
        self._episode: Optional[Episode] = None
        self._lock = threading.Lock()
        self._finished = False
        # TRL pools instances and never says a rollout is over: the last
        # session of an instance closes when the instance goes away.
        self._open: list[Optional[Episode]] = [None]
        weakref.finalize(self, _close_last, self._open)

    def reset(self, **kwargs: Any) -> None:
        """Start the row's episode (closing the previous one)."""
        with self._lock:
            if self._episode is not None:
                self._episode.close()
            self._episode = None
            self._finished = False
            label = kwargs.get("svbench")
            if label is None:
                label = {k: kwargs[k] for k in ("env", "example_id", "example", "answer", "rubric", "max_turns")
                         if kwargs.get(k) not in (None, "")}
            task = task_from(label, self.svbench_env, rubric=self.svbench_rubric, max_turns=self.svbench_max_turns)
            self._episode = self._open[0] = Episode(self._client, task).open()
        return None

    @property
    def episode(self) -> Optional[Episode]:
        return self._episode

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        ep = self._episode
        if ep is None:
            raise SvbenchError("session_not_started", "reset() was not called")
        call = {"id": "call_%d" % (ep.turns + 1), "name": name, "arguments": json.dumps(arguments)}
        obs = ep.step({"content": "", "tool_calls": [call]})
        text = observation_text([o for o in obs if o.get("role") == "tool"] or obs)
        if ep.done:
            text += "\n[episode over: %s]" % (ep.reason or "done")
        return text

    def _finish(self, completion: Any) -> Optional[dict[str, Any]]:
        """Send the completion's final answer as the last step (once) and
        return the episode's score; None when it failed or did not end."""
        with self._lock:
            ep = self._episode
            if ep is None:
                return None
            if not self._finished and not ep.done:
                self._finished = True
                try:
                    ep.step(_final_message(completion))
                except Exception as e:
                    warnings.warn("svbench: last step of session %s failed: %s" % (ep.session_id, e))
                    return None
                if not ep.done:
                    warnings.warn("svbench: episode of %s did not end at the model's answer (reason: the environment "
                                  "has more turns, which TRL's tool loop cannot play); reward None"
                                  % ep.task.get("example_id"))
                    ep.close()
                    return None
            return ep.score if reward_of(ep.score) is not None else None


def _close_last(holder: list[Optional[Episode]]) -> None:
    ep = holder[0]
    if ep is not None and not ep.done:
        # Bounded: a finalizer must not hang the thread that collects.
        t = threading.Thread(target=ep.close, daemon=True)
        t.start()
        t.join(5)


def _final_message(completion: Any) -> dict[str, Any]:
    """The answer the model committed to at the end of a TRL completion: the
    last assistant message when it calls no tool; nothing otherwise (TRL's
    loop stopped at a call it did not run: no answer was given)."""
    if isinstance(completion, str):
        return {"content": completion}
    last = completion[-1] if completion else None
    if isinstance(last, dict) and last.get("role") == "assistant" and not last.get("tool_calls"):
        content = last.get("content") or ""
        if isinstance(content, list):  # content blocks
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        msg = {"content": content}
        reasoning = last.get("reasoning_content") or last.get("reasoning") or last.get("thinking")
        if isinstance(reasoning, str) and reasoning:
            msg["reasoning_content"] = reasoning
        return msg
    return {"content": ""}


def _tool_method(tool: dict[str, Any]) -> Optional[Callable[..., str]]:
    """A method whose name, signature, type hints and Google-style docstring
    describe the tool as TRL (transformers' get_json_schema) reads them;
    None when a parameter name is not a Python identifier."""
    name = tool["name"]
    params = tool.get("parameters") or {}
    props: dict[str, Any] = params.get("properties") or {}
    required = set(params.get("required") or [])
    if not name.isidentifier() or keyword.iskeyword(name):
        return None
    sig_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    hints: dict[str, Any] = {}
    doc_args = []
    for pname, schema in props.items():
        if not pname.isidentifier() or keyword.iskeyword(pname):
            return None
        typ: Any = _JSON_TYPES.get(str((schema or {}).get("type")), str)
        if typ is list and isinstance(schema.get("items"), dict):
            typ = list[_JSON_TYPES.get(schema["items"].get("type"), str)]  # type: ignore[index,misc]
        if pname in required:
            sig_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, annotation=typ))
            hints[pname] = typ
        else:
            opt = typing.Optional[typ]
            sig_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=opt))
            hints[pname] = opt
        desc = " ".join(str((schema or {}).get("description") or pname).split())
        doc_args.append("    %s: %s" % (pname, desc))
    hints["return"] = str

    def method(self: SvbenchToolEnv, **arguments: Any) -> str:
        return self._call_tool(name, {k: v for k, v in arguments.items() if v is not None})

    description = " ".join(str(tool.get("description") or name).split())
    doc = description + "\n\n"
    if doc_args:
        doc += "Args:\n" + "\n".join(doc_args) + "\n\n"
    doc += "Returns:\n    The tool's output, as svbench executed it."
    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    method.__annotations__ = hints
    method.__signature__ = inspect.Signature(sig_params, return_annotation=str)  # type: ignore[attr-defined]
    return method


def _env_info(client: Client, env: str) -> dict[str, Any]:
    for info in client.environments_cached():
        if _env_matches(info, env):
            return info
    raise SvbenchError("unknown_environment", "the server does not serve %r" % (env,))


_classes: dict[tuple[str, str, Optional[str], Optional[int]], type] = {}
_classes_lock = threading.Lock()


class trl_environment:  # noqa: N801 (used like a function: environment_factory=trl_environment("e2"))
    """The ``environment_factory`` for env: ``factory()`` is a new
    environment instance with the environment's tools as methods. Picklable
    (AsyncGRPOTrainer): it holds only the server's address and the task
    defaults, and builds its class in each process."""

    def __init__(self, env: str, client: Optional[Client] = None, rubric: Optional[str] = None,
                 max_turns: Optional[int] = None):
        self.env = env
        self.client = client or Client()
        self.rubric = rubric
        self.max_turns = max_turns

    def environment_class(self) -> type:
        key = (self.client.url, self.env, self.rubric, self.max_turns)
        with _classes_lock:
            cls = _classes.get(key)
            if cls is None:
                info = _env_info(self.client, self.env)
                attrs: dict[str, Any] = {"svbench_env": self.env, "svbench_rubric": self.rubric,
                                         "svbench_max_turns": self.max_turns, "__module__": __name__}
                for tool in info.get("tools") or []:
                    m = _tool_method(tool)
                    if m is None:
                        warnings.warn("svbench: tool %r of %s has names Python cannot use; not exposed"
                                      % (tool.get("name"), self.env))
                        continue
                    if m.__name__ in ("reset", "get_reward") or m.__name__.startswith("_") \
                            or hasattr(SvbenchToolEnv, m.__name__):
                        warnings.warn("svbench: tool %r clashes with a reserved name; not exposed" % m.__name__)
                        continue
                    attrs[m.__name__] = m
                name = "Svbench_" + "".join(c if c.isalnum() else "_" for c in str(info.get("id") or self.env))
                cls = type(name, (SvbenchToolEnv,), attrs)
                _classes[key] = cls
            return cls

    def __call__(self) -> SvbenchToolEnv:
        return self.environment_class()(self.client)

    def __getstate__(self) -> dict[str, Any]:
        return {"env": self.env, "client": client_settings(self.client), "rubric": self.rubric,
                "max_turns": self.max_turns}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.env, self.rubric, self.max_turns = state["env"], state["rubric"], state["max_turns"]
        self.client = client_from_settings(state["client"])


class SessionReward(RewardFunc):
    """One ``trl_env_reward_funcs`` function (picklable, synchronous): the
    episode's total, or one component's unweighted value.

    With ``environments`` (GRPOTrainer) the first function to run finishes
    each rollout's session with the completion's answer and every function
    reads that score. Without (AsyncGRPOTrainer, whose reward functions get
    the row's columns but not the environments) each completion, the tool
    calls and the tool results the environment's sessions produced, is
    scored through /v1/score for the row's example, which is how a session
    scores its transcript."""

    def __init__(self, env: str, component: Optional[str], client: Client, rubric: Optional[str] = None,
                 group: Optional[str] = None, readers: int = 1):
        safe = env.replace("-", "_").replace("/", "_")
        super().__init__("svbench_%s_%s" % (safe, component or "session_reward"), client, group, readers)
        self.env = env
        self.component = component
        self.rubric = rubric

    def __call__(self, prompts: Any = None, completions: Any = None, environments: Any = None,
                 **kwargs: Any) -> list[Optional[float]]:
        if environments is not None:
            envs = list(environments)
            comps = list(completions) if completions is not None else [None] * len(envs)
            scores = _finish_all(envs, comps)
        else:
            scores = self._score(list(completions or []), kwargs)
        return [None if s is None else _component(s, self.component) for s in scores]

    def _score(self, completions: list[Any], columns: dict[str, Any]) -> list[Optional[dict[str, Any]]]:
        items: list[Optional[dict[str, Any]]] = []
        for i, completion in enumerate(completions):
            label = _column(columns, "svbench", i)
            if label is None:
                label = {k: _column(columns, k, i) for k in TASK_KEYS}
            try:
                task = task_from(label, self.env, rubric=self.rubric)
            except SvbenchError as e:
                warnings.warn("svbench: row %d names no task (%s); reward None" % (i, e.message))
                items.append(None)
                continue
            if _turn_based(self.client, task["env"]):
                items.append(None)
                continue
            items.append(make_item(task["env"], completion, answer=task.get("answer"), example_id=task.get("example_id"),
                                   example=task.get("example"), rubric=task.get("rubric")))
        sent = [it for it in items if it is not None]
        results = self._shared(json.dumps(sent, sort_keys=True, default=str), lambda: self.client.score(sent)) \
            if sent else []
        _check_count("results", len(results), len(sent))
        it = iter(results)
        return [None if item is None else next(it) for item in items]


def _finish_all(envs: list[Any], comps: list[Any]) -> list[Optional[dict[str, Any]]]:
    """Each environment's episode finished with its completion, in parallel
    (each is one HTTP step); None for an environment that is not ours."""
    def one(pair: tuple[Any, Any]) -> Optional[dict[str, Any]]:
        finish = getattr(pair[0], "_finish", None)
        return finish(pair[1]) if finish is not None else None

    pairs = list(zip(envs, comps))
    if len(pairs) <= 1:
        return [one(p) for p in pairs]
    with ThreadPoolExecutor(max_workers=min(32, len(pairs))) as pool:
        return list(pool.map(one, pairs))


_warned_turn_based: set[str] = set()


def _turn_based(client: Client, env: str) -> bool:
    """Whether env's episodes go on with user turns (E5/E6: several turns, no
    tools), which TRL's tool loop cannot play; warns once per environment."""
    try:
        info = _env_info(client, env)
    except SvbenchError:
        return False  # the server says why when the item is scored
    if info.get("tools") or int(info.get("max_turns") or 1) <= 1:
        return False
    if env not in _warned_turn_based:
        _warned_turn_based.add(env)
        warnings.warn("svbench: %s plays simulated user turns, which TRL's tool loop cannot; reward None "
                      "(use the OpenRLHF agent or verl's interaction)" % env)
    return True


def trl_env_reward_funcs(env: str, client: Optional[Client] = None, components: bool = False,
                         rubric: Optional[str] = None) -> list[Callable[..., Any]]:
    """TRL reward functions for ``trl_environment(env)`` rollouts, for
    GRPOTrainer and AsyncGRPOTrainer (picklable callable instances): the
    total (default), or one per rubric component (``components=True``, in
    ``trl_reward_weights(env)``'s order). With ``environments`` the first to
    run on a batch finishes the rollouts' episodes and the others read the
    same scores; without, the completions are scored for the rows' examples
    (one /v1/score request per batch). None where an episode failed or did
    not finish."""
    client = client or Client()
    names: list[Optional[str]] = [None]
    if components:
        names = [c["name"] for c in rubric_info(client, env, rubric)["components"]]
    group = uuid.uuid4().hex
    return [SessionReward(env, n, client, rubric=rubric, group=group, readers=len(names)) for n in names]


def trl_env_dataset(env: str, client: Optional[Client] = None, split: Optional[str] = None,
                    limit: int = 1000, seed: Optional[int] = None) -> list[dict[str, Any]]:
    """Rows for ``train_dataset`` (``datasets.Dataset.from_list``):
    ``{"prompt": <messages>, "example_id", "env"}``. TRL renders the prompt
    with the environment's tools; ``reset`` reads the other columns."""
    client = client or Client()
    rows: list[dict[str, Any]] = []
    offset = 0
    while len(rows) < limit:
        page = client.examples(env, split=split, offset=offset, limit=min(1000, limit - len(rows)), seed=seed)
        exs = page.get("examples") or []
        rows.extend({"prompt": ex["prompt"], "example_id": str(ex["example_id"]), "env": env} for ex in exs)
        offset += len(exs)
        if not exs or offset >= int(page.get("total") or 0):
            break
    return rows
