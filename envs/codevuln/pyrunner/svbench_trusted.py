"""Helpers the trusted tests of E3's Python tasks may import.

The tests run in the trusted runner; the code under test runs in another
process and only data crosses between the two (see svbrpc.py). These helpers
give a test what it would otherwise have taken from sharing a process with
that code. Without svbench's runner (the task contract's plain `python3 -m
unittest`), they do the same in one process.
"""

import contextlib
import importlib
import importlib.util
import os

_conn = None


def _bind(conn):
    global _conn
    _conn = conn


def bridged():
    """True when the code under test runs in its own process behind the
    bridge (svbench's runner); False in a plain one-process unittest run."""
    return _conn is not None


@contextlib.contextmanager
def deadline(seconds):
    """Calls into the code under test inside this block must each answer
    within seconds; one that does not is killed and raises TimeoutError.
    In one process nothing can interrupt a call: the block runs unbounded."""
    if _conn is None:
        yield
        return
    frame = _conn.frame
    old = frame.timeout
    frame.timeout = seconds
    try:
        yield
    finally:
        frame.timeout = old


def source(module):
    """The candidate's source of module, as text (read, never executed)."""
    if _conn is None:
        path = importlib.util.find_spec(module).origin
    else:
        path = os.path.join(_conn.cand, module + ".py")
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def build(factory, *args, **kwargs):
    """An object built on the candidate's side by factory ("sqlite3.connect",
    "io.StringIO", "svbench_fixtures.Capture", ...) from data arguments. The
    test gets a reference it may pass to the code under test and ask
    questions of; every answer is data the candidate's process produced."""
    if _conn is None:
        module, _, name = factory.rpartition(".")
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return _conn.end().request("build", f=factory, a=args, k=kwargs)


def call(function, *args, **kwargs):
    """Calls function ("random.seed", "random.getstate", ...) in the
    candidate's process and answers its result, data as data."""
    if _conn is None:
        module, _, name = function.rpartition(".")
        return getattr(importlib.import_module(module), name)(*args, **kwargs)
    return _conn.end().request("callpath", f=function, a=args, k=kwargs)


def value(obj):
    """The content of a candidate-side object as data (a dict, a list, ...)."""
    if _conn is None:
        import copy
        return copy.deepcopy(obj)
    from svbrpc import Remote
    if not isinstance(obj, Remote):
        return obj
    return _conn.end().request("value", o=object.__getattribute__(obj, "_svb_ref"))


class Recorder:
    """A loopback server on the tests' side. The candidate's side reaches
    it through svbench_fixtures.Net's fetch, so which requests were made is
    seen here, where the code under test cannot erase it. It answers every
    request with content_type and body."""

    def __init__(self, content_type, body):
        import socket
        import threading

        self.requests = []
        self.content_type, self.body = content_type, body
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import base64
        import json

        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(10)
                    data = b""
                    while not data.endswith(b"\n") and len(data) < 65536:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    req = json.loads(data)
                    with self._lock:
                        self.requests.append((str(req["url"]), str(req["ip"])))
                    conn.sendall(json.dumps({"type": self.content_type, "body": base64.b64encode(self.body).decode()}).encode() + b"\n")
                except (OSError, ValueError, KeyError, TypeError):
                    pass

    def taken(self):
        """The (url, ip) requests made so far, and forget them."""
        with self._lock:
            out, self.requests = self.requests, []
        return out

    def close(self):
        self._sock.close()
