"""TRL (GRPOTrainer, AsyncGRPOTrainer) reward functions.

GRPOTrainer (trl/trainer/grpo_trainer.py, huggingface/trl f2cd577) calls
every entry of ``reward_funcs`` as
``f(prompts=..., completions=..., completion_ids=..., **columns)`` where the
dataset's other columns arrive as lists, plus ``trainer_state``,
``log_extra``, ``log_metric`` and (with ``environment_factory``)
``environments``. AsyncGRPOTrainer (trl/experimental/async_grpo/
async_rollout_worker.py) calls them with ``completions``, ``prompts``,
``completion_ids`` and the columns only, in a rollout process it spawns:
``AsyncRolloutWorker.start()`` pickles every reward function first and
refuses closures and lambdas. A function returns one float per completion,
or ``None`` where it does not apply: TRL turns None into NaN and leaves that
function out of that completion's reward (a row where every function is
None gets no advantage). ``reward_weights`` (GRPOConfig) weighs the
functions, and ``multi_objective_aggregation="normalize_then_sum"`` (GDPO)
normalises each function's column per group before the weighted sum, so it
needs one function per component. TRL names a function by its
``__name__``, which a callable instance may carry (trl.trainer.utils.
get_callable_name).

The functions here are instances of module-level classes holding only the
environment, the component and the client's settings, so they pickle, and
they are plain (synchronous) callables: TRL runs them in its thread
(GRPOTrainer) or in a worker thread (AsyncGRPOTrainer).

* ``trl_reward_funcs(env)``: one function per rubric component
  (``svbench_<env>_<component>``, unweighted values), or one for the total
  with ``components=False``; the functions of one list share one /v1/score
  request per batch in each process. Failed items are None.
* ``trl_reward_weights(env)``: the components' weights, from the server's
  /v1/environments rubric_info, in the same order (pass as
  ``GRPOConfig(reward_weights=...)``; with them, sum_then_normalize over the
  component functions gives exactly the rubric total).
* ``trl_reward(env)``: the older synchronous total (failed items 0.0 with a
  warning, or raise with strict=True).

A reward or component that is not a finite number (NaN, Infinity, a
string) or is missing makes the item a failed one (svbench.Client.score).
"""

import collections
import json
import threading
import uuid
from typing import Any, Callable, List, Optional

from svbench.client import Client, _check_count, _column, _value, checked_result, finite, make_item, rubric_info

__all__ = ["trl_reward", "trl_reward_funcs", "trl_reward_weights"]


def _fn_name(env, what):
    return "svbench_%s_%s" % (env.replace("-", "_").replace("/", "_"), what)


def _items(env, completions, kwargs, rubric):
    items = []
    for i, completion in enumerate(completions):
        items.append(make_item(
            env,
            completion,
            answer=_column(kwargs, "answer", i),
            example_id=_column(kwargs, "example_id", i),
            example=_column(kwargs, "example", i),
            rubric=rubric,
        ))
    return items


class _Entry:
    __slots__ = ("done", "result", "error", "left")

    def __init__(self, readers):
        self.done = threading.Event()
        self.result = None
        self.error = None
        self.left = readers


class _SharedBatch:
    """One /v1/score request per batch for a set of reward functions.

    TRL calls each function with the same batch, one after the other
    (GRPOTrainer) or in threads (AsyncGRPOTrainer); the first call sends the
    request and the others wait for its results. An entry is dropped once
    every function has read it (and at most 8 are kept in any case).
    """

    def __init__(self, readers):
        self.readers = readers
        self.lock = threading.Lock()
        self.entries = collections.OrderedDict()  # key -> _Entry

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        with self.lock:
            e = self.entries.get(key)
            created = e is None
            if created:
                e = _Entry(self.readers)
                self.entries[key] = e
                while len(self.entries) > 8:
                    self.entries.popitem(last=False)
            e.left -= 1
            if e.left <= 0:
                self.entries.pop(key, None)
        if created:
            try:
                e.result = compute()
            except BaseException as x:  # every reader sees the failure
                e.error = x
            finally:
                e.done.set()
        else:
            e.done.wait()
        if e.error is not None:
            raise e.error
        return e.result


# group id -> _SharedBatch, per process: the functions of one list carry the
# same group id through pickling and find each other again in the child.
_groups: "dict[Any, _SharedBatch]" = {}
_groups_lock = threading.Lock()


def shared_batch(group: Any, readers: int) -> "_SharedBatch":
    with _groups_lock:
        sb = _groups.get(group)
        if sb is None:
            sb = _groups[group] = _SharedBatch(readers)
        return sb


class RewardFunc:
    """Base of the picklable reward functions: settings only, a per-instance
    ``__name__`` (TRL's column name), and the shared batch found by group."""

    def __init__(self, name, client, group=None, readers=1):
        self.__name__ = self.__qualname__ = name
        self.client = client
        self.group = group or uuid.uuid4().hex
        self.readers = readers

    def __repr__(self):
        return "<svbench reward %s>" % self.__name__

    def __getstate__(self):
        state = dict(self.__dict__)
        state["client"] = client_settings(self.client)
        return state

    def __setstate__(self, state):
        state = dict(state)
        state["client"] = client_from_settings(state["client"])
        self.__dict__.update(state)

    def _shared(self, key, compute):
        return shared_batch(self.group, self.readers).get(key, compute)


def client_settings(client: Any) -> Any:
    """What a Client needs to be rebuilt in another process (not its caches)."""
    if not isinstance(client, Client):
        return client  # another client: pickled as it is
    return {"url": client.url, "token": client.token, "timeout": client.timeout, "batch_size": client.batch_size,
            "max_response_bytes": client.max_response_bytes}


def client_from_settings(settings: Any) -> Any:
    if not isinstance(settings, dict):
        return settings
    return Client(**settings)


class ScoreReward(RewardFunc):
    """One ``trl_reward_funcs`` function: a component's unweighted value (or
    the total) of each completion scored through /v1/score; None for a
    failed item or a component the item lacks."""

    def __init__(self, env, component, client, rubric=None, group=None, readers=1):
        super().__init__(_fn_name(env, component or "reward"), client, group, readers)
        self.env = env
        self.component = component
        self.rubric = rubric

    def __call__(self, prompts=None, completions=None, **kwargs):
        items = _items(self.env, completions or [], kwargs, self.rubric)
        results = self._shared(json.dumps(items, sort_keys=True, default=str), lambda: self.client.score(items))
        # Checked again: the client may be another than svbench.Client.
        _check_count("results", len(results), len(items))
        return [_component(r, self.component) for r in results]


def _component(result, component):
    r = checked_result(result)
    if r.get("error"):
        return None
    if component is None:
        return finite(r["reward"])
    v = (r.get("components") or {}).get(component)
    return None if v is None else finite(v)


class TotalReward(RewardFunc):
    """``trl_reward``: the total (or one component, 0.0 where absent) of each
    completion; a failed item 0.0 with a warning, or raises when strict."""

    def __init__(self, env, client, rubric=None, component=None, strict=False):
        super().__init__(_fn_name(env, component or "reward"), client)
        self.env = env
        self.rubric = rubric
        self.component = component
        self.strict = strict

    def __call__(self, prompts=None, completions=None, **kwargs):
        items = _items(self.env, completions or [], kwargs, self.rubric)
        results = self.client.score(items)
        _check_count("results", len(results), len(items))
        return [_value(r, self.component, self.strict) for r in results]


def trl_reward(env: str, client: Optional[Client] = None, rubric: Optional[str] = None,
               component: Optional[str] = None, strict: bool = False) -> "TotalReward":
    """A synchronous TRL reward function: f(prompts, completions, **kwargs) -> list[float].

    TRL passes the dataset's other columns as lists in kwargs; an
    ``example_id`` column names dataset examples, otherwise the ``answer``
    column (or ``example`` with whole rows) says what to score against.
    Completions may be strings or conversational message lists. One HTTP
    request scores the whole batch. Failed items are 0.0 with a warning
    (``trl_reward_funcs`` gives None, which TRL leaves out instead).
    Picklable (AsyncGRPOTrainer).
    """
    return TotalReward(env, client or Client(), rubric=rubric, component=component, strict=strict)


def trl_reward_weights(env: str, client: Optional[Client] = None, rubric: Optional[str] = None) -> List[float]:
    """The rubric's component weights, in ``trl_reward_funcs``' order."""
    client = client or Client()
    return [float(c["weight"]) for c in rubric_info(client, env, rubric)["components"]]


def trl_reward_funcs(env: str, client: Optional[Client] = None, components: bool = True,
                     rubric: Optional[str] = None) -> List[RewardFunc]:
    """TRL reward functions for env, for GRPOTrainer and AsyncGRPOTrainer
    (picklable callable instances).

    components=True: one per component of the rubric as the server declares
    it (rubric_info), in its order, each returning the component's unweighted
    value; pair with ``trl_reward_weights(env)``. components=False: one
    function returning the rubric total. A failed item (unknown example, a
    verifier error, a timeout, a reward or component that is not a finite
    number or is missing) is None, which TRL leaves out rather than reading
    as a zero reward; so is an optional component the item lacks. A failed
    request (server unreachable, a results list of another length than the
    batch) raises: that is not one item's fault.
    """
    client = client or Client()
    if components:
        names = [c["name"] for c in rubric_info(client, env, rubric)["components"]]
    else:
        names = [None]
    group = uuid.uuid4().hex
    return [ScoreReward(env, n, client, rubric=rubric, group=group, readers=len(names)) for n in names]
