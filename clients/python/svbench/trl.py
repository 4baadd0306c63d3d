"""TRL (GRPOTrainer) reward functions.

TRL calls every entry of ``reward_funcs`` as
``f(prompts=..., completions=..., completion_ids=..., **columns)`` where the
dataset's other columns arrive as lists, plus ``trainer_state``,
``log_extra``, ``log_metric`` and (with ``environment_factory``)
``environments``. A function returns one float per completion, or ``None``
where it does not apply: TRL turns None into NaN and leaves that function out
of that completion's reward (a row where every function is None gets no
advantage). Coroutine functions are gathered in parallel on TRL's event loop.
``reward_weights`` (GRPOConfig) weighs the functions, and
``multi_objective_aggregation="normalize_then_sum"`` (GDPO) normalises each
function's column per group before the weighted sum, so it needs one function
per component.

* ``trl_reward_funcs(env)``: async functions, one per rubric component
  (``svbench_<env>_<component>``, unweighted values), or one for the total
  with ``components=False``; the functions of one list share one /v1/score
  request per batch. Failed items are None.
* ``trl_reward_weights(env)``: the components' weights, from the server's
  /v1/environments rubric_info, in the same order (pass as
  ``GRPOConfig(reward_weights=...)``; with them, sum_then_normalize over the
  component functions gives exactly the rubric total).
* ``trl_reward(env)``: the older synchronous total (failed items 0.0 with a
  warning, or raise with strict=True).

A reward or component that is not a finite number (NaN, Infinity, a
string) or is missing makes the item a failed one (svbench.Client.score).
"""

import asyncio
import collections
import json
import threading

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


def trl_reward(env, client=None, rubric=None, component=None, strict=False):
    """A synchronous TRL reward function: f(prompts, completions, **kwargs) -> list[float].

    TRL passes the dataset's other columns as lists in kwargs; an
    ``example_id`` column names dataset examples, otherwise the ``answer``
    column (or ``example`` with whole rows) says what to score against.
    Completions may be strings or conversational message lists. One HTTP
    request scores the whole batch. Failed items are 0.0 with a warning
    (``trl_reward_funcs`` gives None, which TRL leaves out instead).
    """
    client = client or Client()

    def reward(prompts, completions, **kwargs):
        items = _items(env, completions, kwargs, rubric)
        results = client.score(items)
        _check_count("results", len(results), len(items))
        return [_value(r, component, strict) for r in results]

    reward.__name__ = _fn_name(env, component or "reward")
    return reward


class _SharedBatch:
    """One /v1/score request per batch for a set of reward functions.

    TRL calls each function with the same batch; the first call sends the
    request and the others wait for its results. An entry is dropped once
    every function has read it (and at most 8 are kept in any case).
    """

    def __init__(self, client, readers):
        self.client = client
        self.readers = readers
        self.lock = threading.Lock()
        self.entries = collections.OrderedDict()  # key -> [future, reads left]

    def _entry(self, key):
        with self.lock:
            e = self.entries.get(key)
            created = e is None
            if created:
                e = [asyncio.get_running_loop().create_future(), self.readers]
                self.entries[key] = e
                while len(self.entries) > 8:
                    self.entries.popitem(last=False)
            e[1] -= 1
            if e[1] <= 0:
                self.entries.pop(key, None)
            return e[0], created

    async def score(self, items):
        key = (id(asyncio.get_running_loop()), json.dumps(items, sort_keys=True, default=str))
        fut, created = self._entry(key)
        if created:
            try:
                fut.set_result(await asyncio.to_thread(self.client.score, items))
            except BaseException as e:  # every reader sees the failure
                fut.set_exception(e)
                raise
        return await asyncio.shield(fut)


def trl_reward_weights(env, client=None, rubric=None):
    """The rubric's component weights, in ``trl_reward_funcs``' order."""
    client = client or Client()
    return [float(c["weight"]) for c in rubric_info(client, env, rubric)["components"]]


def trl_reward_funcs(env, client=None, components=True, rubric=None):
    """Async TRL reward functions for env.

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
    shared = _SharedBatch(client, len(names))

    def make(component):
        async def reward(prompts=None, completions=None, **kwargs):
            items = _items(env, completions or [], kwargs, rubric)
            results = await shared.score(items)
            # Checked again: the client may be another than svbench.Client.
            _check_count("results", len(results), len(items))
            out = []
            for r in map(checked_result, results):
                if r.get("error"):
                    out.append(None)
                elif component is None:
                    out.append(finite(r["reward"]))
                else:
                    v = (r.get("components") or {}).get(component)
                    out.append(None if v is None else finite(v))
            return out

        reward.__name__ = reward.__qualname__ = _fn_name(env, component or "reward")
        return reward

    return [make(n) for n in names]
