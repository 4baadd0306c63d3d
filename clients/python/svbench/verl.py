"""verl custom reward functions (``custom_reward_function.path`` / ``name``).

verl calls the function in these shapes (checked against verl's sources,
volcengine/verl b178a3c, 2026-01):

* naive and dapo reward managers:
  ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)``;
* prime (verl/workers/reward_manager/prime.py): ``compute_score(data_source,
  solution_str, ground_truth, extra_info)`` positionally, in a
  ``ProcessPoolExecutor`` (the function and its arguments are pickled), and
  reads ``float(result)`` of a number or ``float(result[0])`` of anything
  else; an exception or a pickling failure makes that item 0.0, silently;
* batch: ``compute_score(data_sources=, solution_strs=, ground_truths=,
  extra_infos=, **reward_kwargs)`` and expects a list back;
* the reward loop (verl/experimental/reward_loop) awaits the function when it
  is a coroutine function (``compute_score_async``) and may add
  ``reward_router_address=`` / ``reward_model_tokenizer=``;
* ``custom_reward_function.reward_kwargs`` are merged into every call's
  keywords (``verl.trainer.ppo.reward._call_with_kwargs``).

All of them are accepted; unknown keywords are ignored, except ``env`` (the
environment to use instead of data_source) and ``rubric``, which may come
from reward_kwargs or extra_info.

A call with the item's arguments given positionally (prime's shape) returns
the total as a float: prime reads nothing else (a dict would fail at
``result[0]`` with KeyError(0) and score 0). A failed item is 0.0 there,
which is also what prime gives any item that raises.

Each item called by keyword returns ``{"score": total, <component>: value, ...,
"svbench_error": 0.0}``: verl takes "score" as the reward and appends every
key to ``reward_extra_info``, one list per key across the batch, so every
item carries the same keys: every component any served environment declares
(0.0 where an item lacks it) and svbench_error. A failed item returns score
0.0, components 0.0 and svbench_error 1.0 instead of raising, because verl
does not catch exceptions from compute_score: one bad item would kill the
whole batch (and the run). An item whose reward or a component is not a
finite number (NaN, Infinity, a string) or is missing is such a failed item.
A failed request (server unreachable, a results list of another length than
the items) still raises.

Load it by path without installing (verl imports the file on its own, so it
finds the svbench package next to it or installed). verl loads the file as
a module named ``custom_module_<hash>`` that is not in ``sys.modules``, so
functions defined there cannot be pickled; loaded that way, this file hands
out the functions of the ``svbench.verl`` module itself (same code), which
pickle by reference, so prime's process pool can send them:
``custom_reward_function.path=clients/python/svbench/verl.py
custom_reward_function.name=compute_score`` (or ``compute_score_async``).
Configure with SVBENCH_URL / SVBENCH_TOKEN.
"""

import asyncio
import os
import sys
from typing import Any, Dict, List, Optional, Sequence, Union

if not __package__:  # loaded by file path: its package sits beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from svbench.client import Client, _check_count, all_components, checked_result, default_client, finite, make_item

__all__ = ["compute_score", "compute_score_async", "score_items"]


def _opt(name, kwargs, extra_info):
    v = kwargs.get(name)
    if v is None and isinstance(extra_info, dict):
        v = extra_info.get(name)
    return v or None


def _item(data_source, solution_str, ground_truth, extra_info, kwargs):
    env = _opt("env", kwargs, extra_info) or data_source
    example_id = extra_info.get("example_id") if isinstance(extra_info, dict) else None
    return make_item(env, solution_str, answer=ground_truth, example_id=example_id,
                     rubric=_opt("rubric", kwargs, extra_info))


def score_items(items: List[Dict[str, Any]], client: Optional[Client] = None) -> List[Dict[str, float]]:
    """Score /v1/score items and shape each result as verl expects."""
    client = client or default_client()
    keys = all_components(client)
    results = client.score(items)
    _check_count("results", len(results), len(items))
    out = []
    for r in map(checked_result, results):
        d = {"score": 0.0}
        d.update((k, 0.0) for k in keys)
        if r.get("error"):
            d["svbench_error"] = 1.0
        else:
            # checked_result failed any result whose reward or component is
            # not finite: "or 0.0" only tells the type checker so.
            d["score"] = finite(r["reward"]) or 0.0
            for k, v in (r.get("components") or {}).items():
                d[k] = finite(v) or 0.0
            d["svbench_error"] = 0.0
        out.append(d)
    return out


_ITEM_ARGS = ("data_source", "solution_str", "ground_truth", "extra_info")


def compute_score(*args: Any, data_source: Optional[str] = None, solution_str: Optional[str] = None,
                  ground_truth: Any = None, extra_info: Any = None,
                  data_sources: Optional[Sequence[str]] = None, solution_strs: Optional[Sequence[str]] = None,
                  ground_truths: Optional[Sequence[Any]] = None, extra_infos: Optional[Sequence[Any]] = None,
                  **kwargs: Any) -> Union[float, Dict[str, float], List[Dict[str, float]]]:
    """verl's compute_score: a dict per item, a list of them for the batch
    manager's plural keywords, or the total as a float when the item comes
    positionally (prime). See the module docstring."""
    if args:
        if len(args) > len(_ITEM_ARGS):
            raise TypeError("compute_score takes at most 4 positional arguments (%d given)" % len(args))
        given = dict(data_source=data_source, solution_str=solution_str, ground_truth=ground_truth,
                     extra_info=extra_info)
        for name, value in zip(_ITEM_ARGS, args):
            if given[name] is not None:
                raise TypeError("compute_score got multiple values for argument %r" % name)
            given[name] = value
        item = _item(given["data_source"], given["solution_str"], given["ground_truth"], given["extra_info"], kwargs)
        client = default_client()
        results = client.score([item])
        _check_count("results", len(results), 1)
        r = checked_result(results[0])
        return 0.0 if r.get("error") else finite(r["reward"]) or 0.0
    if solution_strs is not None:
        n = len(solution_strs)
        sources: List[Optional[str]] = list(data_sources) if data_sources is not None else [data_source] * n
        ground_truths = list(ground_truths) if ground_truths is not None else [None] * n
        extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
        items = [_item(sources[i], solution_strs[i], ground_truths[i], extra_infos[i], kwargs) for i in range(n)]
        return score_items(items)
    return score_items([_item(data_source, solution_str, ground_truth, extra_info, kwargs)])[0]


async def compute_score_async(data_source: Optional[str] = None, solution_str: Optional[str] = None,
                              ground_truth: Any = None, extra_info: Any = None,
                              **kwargs: Any) -> Union[float, Dict[str, float], List[Dict[str, float]]]:
    """compute_score as a coroutine function, for verl's reward loop, which
    awaits coroutine functions on its event loop instead of running them in
    an executor. The HTTP call runs in a thread."""
    return await asyncio.to_thread(compute_score, data_source=data_source, solution_str=solution_str,
                                   ground_truth=ground_truth, extra_info=extra_info, **kwargs)


if __name__ != "svbench.verl":
    # Loaded by path (verl's load_extern_object, custom_module_<hash>): what
    # verl takes from here must pickle by reference for prime's process pool,
    # so it must be the package module's own functions.
    from svbench import verl as _module

    compute_score = _module.compute_score
    compute_score_async = _module.compute_score_async
    score_items = _module.score_items
