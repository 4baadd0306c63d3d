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


_csprng = {}


def pin_csprng(seed):
    """Makes this process's OS randomness a repeatable stream: os.urandom,
    os.getrandom, random.SystemRandom and secrets (through random's
    _urandom), uuid.uuid4, /dev/urandom and /dev/random opened with open(),
    and every module-level name bound to one of these functions answer
    SHA-256 in counter mode keyed by seed; the clocks stand still. Output
    drawn afresh from the OS CSPRNG then repeats exactly when seed repeats
    and changes with it, while a generator with state of its own (a counter,
    a Mersenne Twister, splitmix, a pool filled earlier) or anything else
    mixed in (addresses, the pid) does not repeat: the property tested is
    "every output is a function of fresh OS randomness", which no pinning
    of the generators one knows about can establish. Seeding the process's
    own generators is out of reach here (random.Random() seeds itself from
    the OS in C), so a Mersenne Twister never repeats and fails."""
    import builtins
    import hashlib
    import io
    import os
    import random
    import sys
    import time

    unpin_csprng()
    stream = {"key": hashlib.sha256(b"svbench-csprng:%d" % int(seed)).digest(), "n": 0, "buf": b""}
    real_urandom = os.urandom

    def urandom(size):
        if _csprng.get("stream") is not stream:
            # A name bound while pinned outlives the pin: real bytes again.
            return real_urandom(size)
        size = size.__index__()
        if size < 0:
            raise ValueError("negative argument not allowed")
        while len(stream["buf"]) < size:
            stream["buf"] += hashlib.sha256(stream["key"] + stream["n"].to_bytes(8, "big")).digest()
            stream["n"] += 1
        out, stream["buf"] = stream["buf"][:size], stream["buf"][size:]
        return out

    def getrandom(size, flags=0):
        return urandom(size)

    class Device(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            data = urandom(len(b))
            b[:len(data)] = data
            return len(data)

    real_open = builtins.open

    def open_(file, mode="r", *args, **kwargs):
        if _csprng.get("stream") is stream and isinstance(file, (str, bytes)) and os.fsdecode(file) in ("/dev/urandom", "/dev/random") and set(mode) <= set("rb") and "b" in mode:
            unbuffered = kwargs.get("buffering", args[0] if args else -1) == 0
            return Device() if unbuffered else io.BufferedReader(Device())
        return real_open(file, mode, *args, **kwargs)

    # Matched by identity: a module attribute's own __hash__ or __eq__ is
    # never called.
    swap = {id(real_urandom): (real_urandom, urandom), id(real_open): (real_open, open_)}
    if hasattr(os, "getrandom"):
        swap[id(os.getrandom)] = (os.getrandom, getrandom)
    undo = []
    for mod in list(sys.modules.values()):
        d = getattr(mod, "__dict__", None)
        if not isinstance(d, dict) or mod is sys.modules.get(__name__):
            continue
        for name, value in list(d.items()):
            entry = swap.get(id(value))
            if entry is not None and entry[0] is value:
                undo.append((d, name, value))
                d[name] = entry[1]
    clocks = {n: getattr(time, n) for n in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns")}
    for name, fn in clocks.items():
        undo.append((time.__dict__, name, fn))
        setattr(time, name, (lambda v: lambda: v)(fn()))
    if random.__dict__.get("_urandom") is not urandom:
        undo.append((random.__dict__, "_urandom", random.__dict__.get("_urandom")))
        random._urandom = urandom
    _csprng["undo"] = undo
    _csprng["stream"] = stream


def unpin_csprng():
    """Undoes pin_csprng: the OS randomness and the clocks are real again."""
    _csprng.pop("stream", None)
    for d, name, value in reversed(_csprng.pop("undo", [])):
        d[name] = value


_execs = []
_audit = {}


def record_execs():
    """Records, from now on, every program this process starts (subprocess,
    os.system, os.exec*, os.spawn*, os.posix_spawn*, pty.spawn) through an
    audit hook: Python offers no way to remove one, so code that runs later
    cannot switch it off, only lie about it by editing this module, which
    svbench's static rules flag. Forgets what was recorded before."""
    import os
    import sys

    def text(x):
        try:
            return os.fsdecode(x)
        except TypeError:
            return str(x)

    if not _audit:
        def hook(event, args):
            if event == "subprocess.Popen":
                argv = args[1]
                argv = [text(a) for a in argv] if isinstance(argv, (list, tuple)) else [text(argv)]
                _execs.append({"event": event, "program": text(args[0]), "argv": argv})
            elif event == "os.system":
                _execs.append({"event": event, "program": "/bin/sh", "argv": ["/bin/sh", "-c", text(args[0])]})
            elif event in ("os.exec", "os.posix_spawn"):
                _execs.append({"event": event, "program": text(args[0]), "argv": [text(a) for a in args[1]]})
            elif event == "os.spawn":
                _execs.append({"event": event, "program": text(args[1]), "argv": [text(a) for a in args[2]]})

        sys.addaudithook(hook)
        _audit["hook"] = hook
    del _execs[:]


def execs():
    """The programs started since record_execs, as {"event", "program",
    "argv"} (a shell's command line is its argv), and forgets them."""
    out = list(_execs)
    del _execs[:]
    return out
