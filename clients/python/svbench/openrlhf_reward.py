"""OpenRLHF custom reward function file: ``--reward.remote_url /path/to/openrlhf_reward.py``.

OpenRLHF (openrlhf/utils/agent.py, OpenRLHF/OpenRLHF 3c3be62, 2026-08)
imports a ``.py`` remote_url with ``importlib.util.spec_from_file_location``,
takes its ``reward_func`` and calls ``reward_func(queries, prompts, labels)``
in a thread, one sample per call, without a timeout: queries are the decoded
prompt+response, prompts the prompt text, labels the ``--data.label_key``
column. It reads ``rewards``, ``scores`` and ``extra_logs`` (each value a
one-element list or tensor) from the answer. When the function raises,
OpenRLHF logs it and leaves the sample without a reward, which the
experience maker cannot use (it takes the batch for one needing a reward
model) and whose missing extra_logs break the stacking of the others.

This file forwards the call to the server's ``/get_reward`` (the same
protocol as pointing ``--reward.remote_url`` at the server), so the prompt
is cut from the query, labels are read and every item carries the same
extra_logs keys (failed items: reward 0, svbench_error 1) exactly as there.
A reward, score or log value that is not a finite number (NaN, Infinity, a
string, null) makes the sample such a failed one (svbench.Client.get_reward);
an answer with more or fewer values than samples raises.

What it adds over the URL:

* the token travels as an Authorization header from ``SVBENCH_TOKEN``;
  OpenRLHF prints the URL, ``?token=`` included, on every failed try;
* a request that fails for reasons of its own, not the set-up (the
  server's deadline: 504; 5xx, 429, a body over ``--max-body``: 413; the
  connection refused or reset; no answer within ``SVBENCH_TIMEOUT``) gives
  each of its samples a reward of 0 with ``svbench_error`` 1 and every
  extra_logs key, instead of an exception; OpenRLHF's URL client retries
  such an answer 5 times (scoring the item again each time) and then leaves
  the sample without a reward. The server's 400/401/403/404 (a wrong label
  mode, token or URL) still raise: nothing would score;
* its HTTP timeout (``SVBENCH_TIMEOUT``, default 900 s) is above the
  server's own deadline (``svbench serve --timeout``, 30 s by default; raise
  it for E3), so the server's answer, which says which item ran out of time,
  arrives before the client gives up.

Configure with environment variables on the trainer side:

* ``SVBENCH_URL`` (default http://127.0.0.1:8080), ``SVBENCH_TOKEN``;
* ``SVBENCH_ENV``: the environment of the labels (default: the server's);
* ``SVBENCH_LABELS``: ``id`` (default: example ids or label objects),
  ``answer`` (plain gold answers) or ``answer_json``;
* ``SVBENCH_TIMEOUT``: seconds to wait for an answer (default 900).
"""

import http.client
import logging
import os
import socket
import sys
import threading
import urllib.error
from typing import Any, Dict, Sequence

if not __package__:  # loaded by file path, as OpenRLHF does: its package sits beside it
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from svbench.client import Client, SvbenchError, all_components

__all__ = ["reward_func"]

log = logging.getLogger("svbench.openrlhf_reward")

DEFAULT_TIMEOUT_S = 900.0

# The keys /get_reward adds to the components on every item (server/README.md).
SERVER_LOG_KEYS = ("svbench_error", "svbench_prompt_mismatch", "svbench_prompt_truncated")

# Statuses that are one request's bad luck, not a wrong set-up.
_TRANSIENT = {413, 429, 500, 502, 503, 504}

_client = None
_keys = None
_lock = threading.Lock()


def _get_client():
    global _client
    with _lock:
        if _client is None:
            _client = Client(timeout=float(os.environ.get("SVBENCH_TIMEOUT") or DEFAULT_TIMEOUT_S))
        return _client


def _list(x):
    if hasattr(x, "tolist"):  # a tensor or an array
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not hasattr(x, "__iter__"):
        return [x]
    return list(x)


def _transient(e):
    if isinstance(e, SvbenchError):
        return e.status in _TRANSIENT
    # No answer: refused, reset, cut off, or past SVBENCH_TIMEOUT.
    return isinstance(e, (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError,
                          http.client.HTTPException))


def _log_keys(client):
    """The extra_logs keys of every /get_reward item: each component any
    served environment declares, and the server's own keys."""
    global _keys
    if _keys is None:
        _keys = sorted(set(all_components(client)) | set(SERVER_LOG_KEYS))
    return _keys


def _failed(client, n, why):
    """n failed samples, with the keys the server's items carry."""
    logs = {k: [1.0 if k == "svbench_error" else 0.0] * n for k in _log_keys(client)}
    return {"rewards": [0.0] * n, "scores": [0.0] * n, "extra_logs": logs, "errors": [why] * n}


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any], **kwargs: Any) -> Dict[str, Any]:
    """Rewards for OpenRLHF: {"rewards": [...], "scores": [...], "extra_logs": {key: [...]}}.

    Values are plain lists of floats, as from OpenRLHF's HTTP reward server
    (its samples generator wraps each in a tensor itself). A request that
    fails on its own (see the module docstring) gives its samples reward 0
    and svbench_error 1; a wrong set-up (label mode, token, URL) or an answer
    that does not match the samples raises.
    """
    client = _get_client()
    queries, prompts, labels = _list(queries), _list(prompts), _list(labels)
    try:
        out = client.get_reward(queries, prompts, labels,
                                env=os.environ.get("SVBENCH_ENV") or None,
                                labels_as=os.environ.get("SVBENCH_LABELS") or None)
    except Exception as e:
        if not _transient(e):
            raise
        why = "%s: %s" % (getattr(e, "code", None) or type(e).__name__, getattr(e, "message", None) or e)
        log.warning("svbench: /get_reward failed for %d sample(s), reward 0 with svbench_error 1: %s", len(queries), why)
        return _failed(client, len(queries), why)
    return {
        "rewards": [float(r) for r in out["rewards"]],
        "scores": [float(s) for s in out.get("scores", out["rewards"])],
        "extra_logs": {k: [float(v) for v in vs] for k, vs in (out.get("extra_logs") or {}).items()},
    }
