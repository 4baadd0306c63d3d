"""Objects E3's Python tests build on the candidate's side (svbench_trusted.build).

These run in the candidate's process, next to the code under test, so what
they report is no more trusted than that code's own return values: a test
uses them to give the code under test the objects its API takes (a log
stream, a WSGI request, a clock) and reads back data, never to decide that a
side effect did not happen.
"""

import io


class Clock:
    """A settable clock: calling it returns now."""

    def __init__(self, now=1000.0):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds
        return self.now


def wsgi(app, environ, body=b""):
    """Calls a WSGI app with environ (data) and body as wsgi.input; answers
    {"status", "headers", "body"} with the body joined as bytes."""
    seen = {}

    def start_response(status, headers, exc_info=None):
        seen["status"] = status
        seen["headers"] = [tuple(h) for h in headers]
        return lambda data: None

    env = dict(environ)
    env["wsgi.input"] = io.BytesIO(body)
    env.setdefault("wsgi.errors", io.StringIO())
    chunks = app(env, start_response)
    try:
        out = b"".join(bytes(c) for c in chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return {"status": seen.get("status"), "headers": seen.get("headers", []), "body": out}


class Lookup:
    """A data source the code under test calls with a key: answers
    table[key]; for a key in raises, raises an exception of that class name
    with that message; otherwise raises missing, an exception class of the
    candidate's module named as ["module", "Class"] (KeyError when None)."""

    def __init__(self, table, missing=None, raises=None):
        self.table = dict(table)
        self.missing = missing
        self.raises = dict(raises or {})

    def __call__(self, key):
        if key in self.raises:
            name, message = self.raises[key]
            import builtins
            cls = getattr(builtins, name, None)
            if not (isinstance(cls, type) and issubclass(cls, Exception)):
                cls = type(name, (Exception,), {})
            raise cls(message)
        if key in self.table:
            return self.table[key]
        if self.missing is None:
            raise KeyError(key)
        import importlib
        module, name = self.missing
        raise getattr(importlib.import_module(module), name)()


_captures = {}


def capture_logger(name):
    """A logger whose formatted records records(name) answers."""
    import logging

    class Capture(logging.Handler):
        def __init__(self):
            super().__init__()
            self.records = []

        def emit(self, record):
            self.records.append(self.format(record))

    log = logging.getLogger(name)
    log.propagate = False
    handler = Capture()
    log.addHandler(handler)
    _captures[name] = handler
    return log


def records(name):
    return list(_captures[name].records) if name in _captures else []


def tls_connect(ctx, host, port, server_hostname, timeout=5.0):
    """Connects to host:port through ctx and sends one byte once the
    handshake is done; answers the negotiated TLS version."""
    import socket

    with socket.create_connection((host, port), timeout=timeout) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_hostname) as s:
            s.sendall(b"x")
            return s.version()


class Endless(io.RawIOBase):
    """A request body that never ends; counts the bytes handed out and
    refuses to give more than 8 MiB."""

    def __init__(self, chunk=b'{"name": "' + b"a" * 1000):
        self.chunk = chunk
        self.given = 0

    def readable(self):
        return True

    def read(self, n=-1):
        if n is None or n < 0:
            n = 256 * 1024 * 1024  # read() without a size on an endless stream
        if self.given > 8 * 1024 * 1024:
            raise AssertionError("read more than 8 MiB from the client")
        out = (self.chunk * (n // len(self.chunk) + 1))[:n]
        self.given += len(out)
        return out

    def readinto(self, b):
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)


def with_input(fn, environ, body=b"", endless=False):
    """Calls fn(environ) with body (or an endless stream) as wsgi.input;
    answers {"result", "read"}: fn's result and the bytes it read."""
    env = dict(environ)
    stream = Endless() if endless else io.BytesIO(body)
    env["wsgi.input"] = stream
    result = fn(env)
    return {"result": result, "read": stream.given if endless else stream.tell()}


class Credentials:
    """A password check: called with (user, password), true for the pairs given."""

    def __init__(self, pairs):
        self.pairs = dict(pairs)

    def __call__(self, user, password):
        return user in self.pairs and self.pairs[user] == password


class Net:
    """Name resolution and fetching for code that takes them as callables:
    resolve(host) answers the addresses given; fetch(url, ip) asks the
    tests' recorder on 127.0.0.1:port (svbench_trusted.Recorder), which
    notes the request and answers (content_type, body)."""

    def __init__(self, port, addresses):
        self.port = port
        self.addresses = list(addresses)

    def resolve(self, host):
        return list(self.addresses)

    def fetch(self, url, ip):
        import base64
        import json
        import socket

        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(json.dumps({"url": str(url), "ip": str(ip)}).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        reply = json.loads(data)
        return reply["type"], base64.b64decode(reply["body"])


_pin = {}


def pin_prngs(seed):
    """Makes every non-cryptographic generator of this process repeatable:
    every Mersenne Twister alive (random's own, private random.Random()
    instances wherever they are held) is reseeded with seed, any created
    later is seeded with seed whatever it is given, and the clocks seeds are
    usually taken from stand still. Output of the OS CSPRNG (secrets,
    os.urandom, random.SystemRandom) is untouched, so code drawing from it
    still gives fresh values. Answers how many generators were reseeded."""
    import _random
    import gc
    import random
    import time

    if not _pin:
        _pin["seed"] = random.Random.seed
        _pin["clocks"] = {n: getattr(time, n) for n in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns")}
    orig = _pin["seed"]

    def pinned(self, a=None, version=2):
        return orig(self, seed, version)

    random.Random.seed = pinned
    for name, fn in _pin["clocks"].items():
        setattr(time, name, (lambda v: lambda: v)(fn()))
    n = 0
    for o in gc.get_objects():
        if isinstance(o, _random.Random) and not isinstance(o, random.SystemRandom):
            _random.Random.seed(o, seed)
            if isinstance(o, random.Random):
                o.gauss_next = None
            n += 1
    return n


def unpin_prngs():
    """Undoes pin_prngs: clocks run again, and every Mersenne Twister is
    reseeded from the OS so the rest of the tests see fresh values."""
    import _random
    import gc
    import random
    import time

    if not _pin:
        return
    random.Random.seed = _pin["seed"]
    for name, fn in _pin["clocks"].items():
        setattr(time, name, fn)
    _pin.clear()
    for o in gc.get_objects():
        if isinstance(o, _random.Random) and not isinstance(o, random.SystemRandom):
            _random.Random.seed(o, None)
