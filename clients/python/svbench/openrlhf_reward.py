"""OpenRLHF custom reward function file: ``--reward.remote_url /path/to/openrlhf_reward.py``.

OpenRLHF (openrlhf/utils/agent.py, OpenRLHF/OpenRLHF 3c3be62, 2026-08)
imports a ``.py`` remote_url with ``importlib.util.spec_from_file_location``,
takes its ``reward_func`` and calls ``reward_func(queries, prompts, labels)``
in a thread, one sample per call: queries are the decoded prompt+response,
prompts the prompt text, labels the ``--data.label_key`` column. It reads
``rewards``, ``scores`` and ``extra_logs`` (each value a one-element list or
tensor) from the answer, and logs an exception and leaves the sample without
a reward.

This file forwards the call to the server's ``/get_reward`` (the same
protocol as pointing ``--reward.remote_url`` at the server), so the prompt
is cut from the query, labels are read and every item carries the same
extra_logs keys (failed items: reward 0, svbench_error 1) exactly as there.
A reward, score or log value that is not a finite number (NaN, Infinity, a
string, null) makes the sample such a failed one (svbench.Client.get_reward);
an answer with more or fewer values than samples raises.
What it adds: the token travels as an Authorization header from
``SVBENCH_TOKEN`` instead of in a URL that OpenRLHF prints and logs.

Configure with environment variables on the trainer side:

* ``SVBENCH_URL`` (default http://127.0.0.1:8080), ``SVBENCH_TOKEN``;
* ``SVBENCH_ENV``: the environment of the labels (default: the server's);
* ``SVBENCH_LABELS``: ``id`` (default: example ids or label objects),
  ``answer`` (plain gold answers) or ``answer_json``.
"""

import os
import sys

try:
    from svbench.client import default_client
except ImportError:  # loaded by file path, as OpenRLHF does, without the package installed
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from svbench.client import default_client

__all__ = ["reward_func"]


def _list(x):
    if hasattr(x, "tolist"):  # a tensor or an array
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        return [x]
    return list(x)


def reward_func(queries, prompts, labels, **kwargs):
    """Rewards for OpenRLHF: {"rewards": [...], "scores": [...], "extra_logs": {key: [...]}}.

    Values are plain lists of floats, as from OpenRLHF's HTTP reward server
    (its samples generator wraps each in a tensor itself). A request that
    fails as a whole (server unreachable, bad label mode) raises.
    """
    out = default_client().get_reward(
        _list(queries), _list(prompts), _list(labels),
        env=os.environ.get("SVBENCH_ENV") or None,
        labels_as=os.environ.get("SVBENCH_LABELS") or None,
    )
    return {
        "rewards": [float(r) for r in out["rewards"]],
        "scores": [float(s) for s in out.get("scores", out["rewards"])],
        "extra_logs": {k: [float(v) for v in vs] for k, vs in (out.get("extra_logs") or {}).items()},
    }
