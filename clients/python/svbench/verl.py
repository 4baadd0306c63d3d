"""verl custom reward functions (``custom_reward_function.path`` / ``name``).

verl calls the function in these shapes (checked against verl's sources,
volcengine/verl b178a3c, 2026-01):

* naive and dapo reward managers:
  ``compute_score(data_source=, solution_str=, ground_truth=, extra_info=)``;
* prime: ``compute_score(data_source, solution_str, ground_truth, extra_info)``
  positionally;
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

Each item returns ``{"score": total, <component>: value, ...,
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
finds the svbench package next to it or installed):
``custom_reward_function.path=clients/python/svbench/verl.py
custom_reward_function.name=compute_score`` (or ``compute_score_async``).
Configure with SVBENCH_URL / SVBENCH_TOKEN.
"""

import asyncio
import os
import sys

try:
    from svbench.client import _check_count, all_components, checked_result, default_client, finite, make_item
except ImportError:  # loaded by file path without the package installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from svbench.client import _check_count, all_components, checked_result, default_client, finite, make_item

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


def score_items(items, client=None):
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
            d["score"] = finite(r["reward"])
            for k, v in (r.get("components") or {}).items():
                d[k] = finite(v)
            d["svbench_error"] = 0.0
        out.append(d)
    return out


def compute_score(data_source=None, solution_str=None, ground_truth=None, extra_info=None,
                  data_sources=None, solution_strs=None, ground_truths=None, extra_infos=None,
                  **kwargs):
    """verl's compute_score: a dict per item, or a list of them for the batch
    manager's plural keywords. See the module docstring."""
    if solution_strs is not None:
        n = len(solution_strs)
        data_sources = list(data_sources) if data_sources is not None else [data_source] * n
        ground_truths = list(ground_truths) if ground_truths is not None else [None] * n
        extra_infos = list(extra_infos) if extra_infos is not None else [None] * n
        items = [_item(data_sources[i], solution_strs[i], ground_truths[i], extra_infos[i], kwargs) for i in range(n)]
        return score_items(items)
    return score_items([_item(data_source, solution_str, ground_truth, extra_info, kwargs)])[0]


async def compute_score_async(data_source=None, solution_str=None, ground_truth=None, extra_info=None, **kwargs):
    """compute_score as a coroutine function, for verl's reward loop, which
    awaits coroutine functions on its event loop instead of running them in
    an executor. The HTTP call runs in a thread."""
    return await asyncio.to_thread(compute_score, data_source, solution_str, ground_truth, extra_info, **kwargs)
