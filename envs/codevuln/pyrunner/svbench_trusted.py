"""Helpers the trusted tests of E3's Python tasks may import.

The tests run in the trusted runner; the code under test runs in another
process. These helpers give a test what it would otherwise have taken from
sharing a process with that code.
"""

import contextlib
import os

_conn = None


def _bind(conn):
    global _conn
    _conn = conn


@contextlib.contextmanager
def deadline(seconds):
    """Calls into the code under test inside this block must each answer
    within seconds; one that does not is killed and raises TimeoutError."""
    peer = _conn.peer()
    old = peer.timeout
    peer.timeout = seconds
    try:
        yield
    finally:
        peer.timeout = old


def source(module):
    """The candidate's source of module, as text (read, never executed)."""
    with open(os.path.join(_conn.cand, module + ".py"), encoding="utf-8", errors="replace") as f:
        return f.read()
