"""svbench's data-only bridge between the trusted test runner and the code under test.

The two ends run in different sandboxes. The trusted end (T) holds the tests
and decides the verdict; the candidate end (C) imports the model's modules and
executes the operations T asks for. Only data crosses from C to T: None,
bools, numbers, strings, bytes, tuples, lists, dicts, sets, a few standard
value types (dates, decimals, UUIDs, paths) and copies of exceptions (a class
name and data arguments). An object of C that is not data stays in C; T holds
an opaque reference to it and can only ask it questions whose answers are
again data. T sends only data (and C's own references back). T never hands C
a reference to any of its objects, never serves a request from C, never
imports, calls or looks up anything by a name C chose (except exception
classes of the standard library, matched by name among modules T has already
imported), so whatever runs in C can reach nothing of T's.

C is the model's process: everything C says is hostile input. T's decoder
accepts the tags below and nothing else, bounds sizes and depth, and turns
anything malformed into ProtocolError (the test errors; it never passes).

Both ends import this file; only T's copy is trusted.
"""

import base64
import builtins
import datetime
import decimal
import importlib
import json
import pathlib
import socket
import struct
import sys
import uuid

MAX_FRAME = 64 << 20
MAX_ITEMS = 1_000_000
MAX_DEPTH = 100
MAX_NAME = 200
HEADER = struct.Struct(">I")


class ProtocolError(Exception):
    """The peer broke the protocol or went away."""


class NotData(TypeError):
    """A test tried to send the code under test something that is not data."""


class StaleReference(Exception):
    """A reference from an earlier connection was used."""


class Record(tuple):
    """A named tuple of the code under test, decoded without running any
    code of its making: fields are names, read by attribute."""

    __slots__ = ()
    _fields = ()

    def __getattr__(self, name):
        fields = type(self)._fields
        if name in fields:
            return self[fields.index(name)]
        raise AttributeError(name)

    def _asdict(self):
        return dict(zip(type(self)._fields, self))


class Frame:
    """Length-prefixed JSON frames over a stream socket."""

    def __init__(self, sock):
        self.sock = sock
        self.timeout = None

    def send(self, msg):
        data = json.dumps(msg, allow_nan=True, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(data) > MAX_FRAME:
            raise ProtocolError("message of %d bytes exceeds the frame limit" % len(data))
        self.sock.sendall(HEADER.pack(len(data)) + data)

    def _exact(self, n):
        buf = bytearray()
        while len(buf) < n:
            chunk = self.sock.recv(min(n - len(buf), 1 << 20))
            if not chunk:
                raise ProtocolError("peer closed the connection")
            buf += chunk
        return bytes(buf)

    def recv(self):
        self.sock.settimeout(self.timeout)
        (n,) = HEADER.unpack(self._exact(HEADER.size))
        if n > MAX_FRAME:
            raise ProtocolError("frame of %d bytes exceeds the limit" % n)
        return parse_message(self._exact(n))


def parse_message(data):
    """One frame's JSON object; anything else is a ProtocolError."""
    try:
        obj = json.loads(data.decode("utf-8", "surrogatepass"))
    except (ValueError, RecursionError) as e:
        raise ProtocolError("undecodable message: %s" % e) from None
    if not isinstance(obj, dict):
        raise ProtocolError("message is not an object")
    return obj


# ---- values ----------------------------------------------------------------

def _b64(x):
    if not isinstance(x, str):
        raise ProtocolError("bad bytes")
    try:
        return base64.b64decode(x, validate=True)
    except ValueError:
        raise ProtocolError("bad bytes") from None


def _list(x, n=None):
    if not isinstance(x, list) or (n is not None and len(x) != n):
        raise ProtocolError("bad value")
    if len(x) > MAX_ITEMS:
        raise ProtocolError("too many items")
    return x


def _str(x):
    if not isinstance(x, str):
        raise ProtocolError("bad value")
    return x


def _int(x):
    if type(x) is not int:
        raise ProtocolError("bad value")
    return x


def _name(x):
    x = _str(x)
    if len(x) > MAX_NAME:
        raise ProtocolError("name too long")
    return x


class Codec:
    """Encoding and decoding of data values, shared by both ends. What is not
    data is left to the end's own hooks: C turns its objects into references,
    T refuses to send anything but data."""

    def encode(self, v, depth=0):
        if depth > MAX_DEPTH:
            raise ValueError("value nested more than %d levels deep" % MAX_DEPTH)
        d = depth + 1
        if v is None or v is True or v is False:
            return v
        t = type(v)
        if t is int or t is str or t is float:
            return v
        if isinstance(v, BaseException):
            return {"$e": self.encode_exception(v, d)}
        if isinstance(v, bool):
            return bool(v)
        if isinstance(v, int):
            return int.__index__(v)
        if isinstance(v, float):
            return float.__float__(v)
        if isinstance(v, str):
            return str.__str__(v)
        if isinstance(v, bytearray):
            return {"$ba": base64.b64encode(bytes(v)).decode()}
        if isinstance(v, (bytes, memoryview)):
            return {"$b": base64.b64encode(bytes(v)).decode()}
        if isinstance(v, tuple) and isinstance(getattr(t, "_fields", None), tuple):
            return {"$nt": [t.__name__, [str(f) for f in t._fields], [self.encode(x, d) for x in v]]}
        if isinstance(v, tuple):
            return {"$t": [self.encode(x, d) for x in v]}
        if isinstance(v, list):
            return [self.encode(x, d) for x in v]
        if isinstance(v, dict):
            return {"$d": [[self.encode(k, d), self.encode(x, d)] for k, x in v.items()]}
        if isinstance(v, frozenset):
            return {"$fs": [self.encode(x, d) for x in v]}
        if isinstance(v, set):
            return {"$s": [self.encode(x, d) for x in v]}
        if isinstance(v, datetime.datetime):
            return {"$dt": v.isoformat()}
        if isinstance(v, datetime.date):
            return {"$date": v.isoformat()}
        if isinstance(v, datetime.time):
            return {"$time": v.isoformat()}
        if isinstance(v, datetime.timedelta):
            return {"$td": [v.days, v.seconds, v.microseconds]}
        if isinstance(v, decimal.Decimal):
            return {"$dec": str(v)}
        if isinstance(v, uuid.UUID):
            return {"$uuid": str(v)}
        if isinstance(v, pathlib.PurePath):
            return {"$path": str(v)}
        return self.encode_other(v, d)

    def encode_exception(self, e, depth):
        cls = type(e)
        bases = [b.__name__ for b in cls.__mro__ if b.__module__ == "builtins" and issubclass(b, BaseException)]
        try:
            args = [self.encode(a, depth) for a in e.args]
        except Exception:
            args = [str(a)[:2000] for a in e.args]
        try:
            text = str(e)[:10000]
        except Exception:
            text = ""
        return {"c": [str(getattr(cls, "__module__", ""))[:MAX_NAME], str(getattr(cls, "__qualname__", "Error"))[:MAX_NAME], bases[:8]],
                "a": args, "s": text}

    def encode_other(self, v, depth):
        raise NotData("%s is not data" % type(v).__name__)

    def decode(self, v, depth=0):
        if depth > MAX_DEPTH:
            raise ProtocolError("value nested too deeply")
        d = depth + 1
        if v is None or type(v) in (bool, int, float, str):
            return v
        if isinstance(v, list):
            return [self.decode(x, d) for x in _list(v)]
        if not isinstance(v, dict) or len(v) != 1:
            raise ProtocolError("bad value")
        tag, x = next(iter(v.items()))
        if tag == "$t":
            return tuple(self.decode(i, d) for i in _list(x))
        if tag == "$d":
            out = {}
            for pair in _list(x):
                k, val = _list(pair, 2)
                key = self.decode(k, d)
                try:
                    out[key] = self.decode(val, d)
                except TypeError:
                    raise ProtocolError("unhashable key") from None
            return out
        if tag in ("$s", "$fs"):
            try:
                items = set(self.decode(i, d) for i in _list(x))
            except TypeError:
                raise ProtocolError("unhashable set item") from None
            return items if tag == "$s" else frozenset(items)
        if tag == "$b":
            return _b64(x)
        if tag == "$ba":
            return bytearray(_b64(x))
        if tag == "$nt":
            name, fields, vals = _list(x, 3)
            return self.record(_name(name), [_name(f) for f in _list(fields)], [self.decode(i, d) for i in _list(vals)])
        try:
            if tag == "$dt":
                return datetime.datetime.fromisoformat(_name(x))
            if tag == "$date":
                return datetime.date.fromisoformat(_name(x))
            if tag == "$time":
                return datetime.time.fromisoformat(_name(x))
            if tag == "$td":
                days, secs, us = _list(x, 3)
                return datetime.timedelta(days=_int(days), seconds=_int(secs), microseconds=_int(us))
            if tag == "$dec":
                return decimal.Decimal(_name(x))
            if tag == "$uuid":
                return uuid.UUID(_name(x))
            if tag == "$path":
                return pathlib.PurePosixPath(_str(x)) if self.pure_paths else pathlib.Path(_str(x))
        except (ValueError, OverflowError, decimal.InvalidOperation):
            raise ProtocolError("bad %s value" % tag) from None
        if tag == "$e":
            return self.decode_exception(x, d)
        return self.decode_other(tag, x, d)

    pure_paths = False

    def record(self, name, fields, values):
        if len(fields) != len(values):
            raise ProtocolError("bad record")
        cls = type(name if name.isidentifier() else "record", (Record,), {"__slots__": (), "_fields": tuple(fields)})
        return cls(values)

    def decode_exception(self, x, depth):
        if not isinstance(x, dict):
            raise ProtocolError("bad exception")
        c = _list(x.get("c"), 3)
        module, qual = _name(c[0]), _name(c[1])
        bases = [_name(b) for b in _list(c[2])]
        args = tuple(self.decode(a, depth) for a in _list(x.get("a", [])))
        cls = self.exception_class(module, qual, bases)
        try:
            e = cls(*args)
        except Exception:
            e = cls.__new__(cls)
            e.args = args
        return e

    def exception_class(self, module, qual, bases):
        return RuntimeError

    def decode_other(self, tag, x, depth):
        raise ProtocolError("unknown tag %r" % tag)


def _builtin_exception(name):
    cls = getattr(builtins, name, None) if not name.startswith("_") else None
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls
    return None


def _stdlib(module):
    top = (module or "").split(".")[0]
    return top == "builtins" or top in sys.stdlib_module_names


# ---- the trusted end -----------------------------------------------------------

class Remote:
    """T's reference to an object that lives in C. Every use is a question
    sent to C; every answer is data or another reference. Equality and
    hashing are by identity: C cannot decide what its objects compare equal
    to in T."""

    __slots__ = ("_svb_end", "_svb_ref", "__weakref__")

    def __getattr__(self, name):
        if name.startswith("_svb_"):
            raise AttributeError(name)
        end = object.__getattribute__(self, "_svb_end")
        ref = object.__getattribute__(self, "_svb_ref")
        cached = end.methods.get((ref, name))
        if cached is not None:
            return cached
        return end.request("get", o=ref, n=name)

    def __setattr__(self, name, value):
        if name.startswith("_svb_"):
            object.__setattr__(self, name, value)
            return
        self._svb_op("set", n=name, v=value)

    def __delattr__(self, name):
        self._svb_op("del", n=name)

    def _svb_op(self, op, **kw):
        end = object.__getattribute__(self, "_svb_end")
        return end.request(op, o=object.__getattribute__(self, "_svb_ref"), **kw)

    def __call__(self, *args, **kwargs):
        return self._svb_op("call", a=args, k=kwargs)

    def __len__(self):
        n = self._svb_op("len")
        if type(n) is not int or n < 0:
            raise TypeError("len() of a remote object is not a non-negative int")
        return n

    def __iter__(self):
        items = self._svb_op("iter")
        if not isinstance(items, list):
            raise TypeError("remote iteration did not give a list")
        return iter(items)

    def __getitem__(self, k):
        return self._svb_op("getitem", key=k)

    def __setitem__(self, k, v):
        self._svb_op("setitem", key=k, v=v)

    def __delitem__(self, k):
        self._svb_op("delitem", key=k)

    def __contains__(self, v):
        return self._svb_op("contains", v=v) is True

    def __bool__(self):
        return self._svb_op("bool") is True

    def __str__(self):
        s = self._svb_op("str")
        if not isinstance(s, str):
            raise TypeError("str() of a remote object is not a str")
        return s

    def __repr__(self):
        try:
            r = self._svb_op("repr")
        except Exception as e:
            return "<remote object: %s>" % type(e).__name__
        return r if isinstance(r, str) else "<remote object>"

    def __bytes__(self):
        b = self._svb_op("bytes")
        if not isinstance(b, bytes):
            raise TypeError("bytes() of a remote object is not bytes")
        return b

    def __int__(self):
        v = self._svb_op("int")
        if type(v) is not int:
            raise TypeError("int() of a remote object is not an int")
        return v

    __index__ = __int__

    def __float__(self):
        v = self._svb_op("float")
        if type(v) is not float:
            raise TypeError("float() of a remote object is not a float")
        return v

    def __fspath__(self):
        v = self._svb_op("fspath")
        if not isinstance(v, (str, bytes)):
            raise TypeError("fspath() of a remote object is not a path")
        return v

    def __enter__(self):
        return self._svb_op("call", n="__enter__", a=(), k={})

    def __exit__(self, et, ev, tb):
        # The exception, if any, crosses as a copy; C re-raises nothing.
        return self._svb_op("exit", a=(ev,)) is True

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __hash__(self):
        return object.__hash__(self)


class RemoteMethod:
    """A method of an object in C, called in one round trip."""

    __slots__ = ("end", "ref", "name")

    def __init__(self, end, ref, name):
        self.end, self.ref, self.name = end, ref, name

    def __call__(self, *args, **kwargs):
        return self.end.request("call", o=self.ref, n=self.name, a=args, k=kwargs)

    def __repr__(self):
        return "<remote method %s>" % self.name


class RemoteType(type):
    """The stand-in of a class of C: isinstance() works on references to its
    objects, calling it constructs an object in C, attributes are read in C."""

    def __call__(cls, *args, **kwargs):
        return cls.__dict__["_svb_cend"].request("call", o=cls.__dict__["_svb_cref"], a=args, k=kwargs)

    def __getattr__(cls, name):
        if name.startswith("_svb_") or name.startswith("__"):
            raise AttributeError(name)
        return cls.__dict__["_svb_cend"].request("get", o=cls.__dict__["_svb_cref"], n=name)


class Trusted(Codec):
    """T's end of one connection: it asks, C answers. C never asks."""

    def __init__(self, frame):
        self.frame = frame
        self.seq = 0
        self.refs = {}      # C's reference id -> stand-in (one per object)
        self.exc_classes = {}  # (module, qualname) -> local exception class
        self.methods = {}   # (ref, name) -> RemoteMethod
        self.std_wrappers = {}

    # Encoding: data, C's own references, copies of exceptions. Nothing of T's.
    def encode_other(self, v, depth):
        if isinstance(v, Remote) and object.__getattribute__(v, "_svb_end") is self:
            return {"$r": object.__getattribute__(v, "_svb_ref")}
        if isinstance(v, RemoteMethod) and v.end is self:
            return {"$rm": [v.ref, v.name]}
        if isinstance(v, RemoteType) and v.__dict__.get("_svb_cend") is self:
            return {"$r": v.__dict__["_svb_cref"]}
        raise NotData(
            "only data crosses to the code under test: a %s is not data. Send its content "
            "(str, bytes, numbers, lists, dicts...), or build the object on the candidate's side "
            "with svbench_trusted.build(...)" % type(v).__name__)

    def exception_class(self, module, qual, bases):
        if module == "builtins":
            cls = _builtin_exception(qual)
            if cls is not None:
                return cls
        elif _stdlib(module) and module in sys.modules and all(p and not p.startswith("_") for p in qual.split(".")):
            obj = sys.modules[module]
            for part in qual.split("."):
                obj = obj.__dict__.get(part) if isinstance(getattr(obj, "__dict__", None), dict) else None
            if isinstance(obj, type) and issubclass(obj, Exception) and not obj.__module__.startswith("unittest"):
                return obj
        key = (module, qual)
        cls = self.exc_classes.get(key)
        if cls is None:
            base = next((b for b in map(_builtin_exception, bases) if b is not None), Exception)
            name = qual.rsplit(".", 1)[-1]
            cls = type(name if name.isidentifier() else "RemoteError", (base,), {"__module__": module, "__qualname__": qual})
            self.exc_classes[key] = cls
        return cls

    def decode_other(self, tag, x, depth):
        if tag == "$r":
            return self.reference(x)
        raise ProtocolError("unknown tag %r" % tag)

    def reference(self, x):
        """{"$r": {"id", "kind", "cls"?, "module"?, "qual"?, "owner"?, "name"?}}"""
        if not isinstance(x, dict):
            raise ProtocolError("bad reference")
        rid = _name(x.get("id"))
        got = self.refs.get(rid)
        if got is not None:
            return got
        kind = x.get("kind")
        if kind == "method":
            owner, name = _name(x.get("owner")), _name(x.get("name"))
            m = RemoteMethod(self, owner, name)
            self.methods[(owner, name)] = m
            self.refs[rid] = m
            return m
        if kind == "excclass":
            # An exception class of C is a name: T makes its own class of
            # that name, the one decoded exception copies of it get.
            cls = self.exception_class(_name(x.get("module")), _name(x.get("qual")), [_name(b) for b in _list(x.get("bases", []))])
            self.refs[rid] = cls
            return cls
        if kind == "class":
            module, qual = _name(x.get("module")), _name(x.get("qual"))
            name = qual.rsplit(".", 1)[-1]
            cls = RemoteType(name if name.isidentifier() else "Remote", (Remote,),
                             {"__slots__": (), "_svb_cend": self, "_svb_cref": rid, "__module__": module, "__qualname__": qual})
            self.refs[rid] = cls
            return cls
        if kind != "object":
            raise ProtocolError("bad reference kind")
        cls = Remote
        c = x.get("cls")
        if c is not None:
            holder = self.reference(c)
            if isinstance(holder, RemoteType):
                cls = holder
        std = x.get("std")
        if std is not None and cls is Remote:
            cls = self.std_wrapper(_list(std, 2))
        p = object.__new__(cls)
        object.__setattr__(p, "_svb_end", self)
        object.__setattr__(p, "_svb_ref", rid)
        self.refs[rid] = p
        return p

    def std_wrapper(self, std):
        """An object of a standard class (an ssl.SSLContext, say) stays in
        C; isinstance() in the tests sees the class through __class__, when
        T has imported that class's module itself. Builtin types are never
        claimed: data crosses as data."""
        module, qual = _name(std[0]), _name(std[1])
        if module == "builtins" or not _stdlib(module) or module not in sys.modules or module.split(".")[0] == "unittest":
            return Remote
        obj = sys.modules[module]
        for part in qual.split("."):
            if part.startswith("_"):
                return Remote
            obj = obj.__dict__.get(part) if isinstance(getattr(obj, "__dict__", None), dict) else None
        if not isinstance(obj, type):
            return Remote
        w = self.std_wrappers.get(obj)
        if w is None:
            w = type("Remote" + obj.__name__, (Remote,), {"__slots__": (), "__class__": property(lambda self, c=obj: c)})
            self.std_wrappers[obj] = w
        return w

    def request(self, op, o=None, n=None, a=None, k=None, key=None, v=None, **extra):
        """One question to C; the answer is data, a reference, or an
        exception copy raised here. Every argument is encoded as data."""
        self.seq += 1
        msg = {"q": self.seq, "op": op}
        if o is not None:
            msg["o"] = o
        if n is not None:
            msg["n"] = n
        if a is not None:
            msg["a"] = [self.encode(x) for x in a]
        if k is not None:
            msg["kw"] = [[str(name), self.encode(x)] for name, x in k.items()]
        if op in ("getitem", "setitem", "delitem"):
            msg["key"] = self.encode(key)
        if op in ("set", "setitem", "contains"):
            msg["v"] = self.encode(v)
        msg.update(extra)
        self.frame.send(msg)
        return self.settle(self.frame.recv())

    def settle(self, reply):
        """What an answer from C means here: a value, or an exception
        raised. Anything but an answer to the last request is a
        ProtocolError."""
        if "q" in reply or set(reply) - {"r", "v", "e"}:
            raise ProtocolError("the code under test sent a request or an unknown field; only answers are accepted")
        if reply.get("r") != self.seq:
            raise ProtocolError("reply to an unknown request")
        try:
            if "e" in reply:
                exc = self.decode(reply["e"])
            else:
                return self.decode(reply.get("v"))
        except ProtocolError:
            raise
        except Exception as e:
            raise ProtocolError("undecodable reply: %s: %s" % (type(e).__name__, e)) from None
        if not isinstance(exc, BaseException):
            raise ProtocolError("error reply is not an exception")
        raise exc


class RemoteModule(type(sys)):
    """A module of the code under test as the tests see it."""

    def __init__(self, name, conn, file=None):
        super().__init__(name)
        object.__setattr__(self, "_svb_conn", conn)
        if file:
            # The candidate's source, readable as data by trusted tests.
            object.__setattr__(self, "__file__", file)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        # Read on every use: the module's functions and classes come back
        # as the same stand-ins (their references are their paths).
        return object.__getattribute__(self, "_svb_conn").end().request("get", o="m:" + self.__name__, n=name)

    def __setattr__(self, name, value):
        if name.startswith("__"):
            object.__setattr__(self, name, value)
            return
        self.__dict__.pop(name, None)
        object.__getattribute__(self, "_svb_conn").end().request("set", o="m:" + self.__name__, n=name, v=value)


# ---- the candidate end -----------------------------------------------------------

class Candidate(Codec):
    """C's end: imports the candidate's modules and answers T's requests.
    Nothing here is trusted; it only has to be useful to honest code."""

    pure_paths = False

    def __init__(self, frame):
        self.frame = frame
        self.objects = {}
        self.ref_of = {}
        self.next_id = 1
        self.token = base64.b32encode(__import__("os").urandom(5)).decode().lower()

    def _ref(self, obj):
        path = self._path_of(obj)
        if path:
            # Functions and classes of the candidate's modules are named by
            # their path, so a reference outlives a restart of this process.
            return path
        rid = self.ref_of.get(id(obj))
        if rid is None or self.objects.get(rid) is not obj:
            rid = "%s.%d" % (self.token, self.next_id)
            self.next_id += 1
            self.objects[rid] = obj
            self.ref_of[id(obj)] = rid
        return rid

    def _path_of(self, v):
        module = getattr(v, "__module__", None)
        qual = getattr(v, "__qualname__", None)
        if not isinstance(module, str) or not isinstance(qual, str) or "<" in qual or _stdlib(module):
            return None
        mod = sys.modules.get(module)
        try:
            obj = mod
            for part in qual.split("."):
                obj = getattr(obj, part)
            if mod is not None and obj is v:
                return "p:%s:%s" % (module, qual)
        except Exception:
            return None
        return None

    def encode_other(self, v, depth):
        if isinstance(v, type):
            if issubclass(v, BaseException):
                return {"$r": {"id": self._ref(v), "kind": "excclass", "module": str(v.__module__), "qual": str(v.__qualname__),
                               "bases": [b.__name__ for b in v.__mro__ if b.__module__ == "builtins"][:8]}}
            return {"$r": {"id": self._ref(v), "kind": "class", "module": str(v.__module__), "qual": str(v.__qualname__)}}
        owner = getattr(v, "__self__", None)
        name = getattr(v, "__name__", None)
        if owner is not None and isinstance(name, str) and type(v).__name__ in ("method", "builtin_function_or_method") \
                and type(owner).__name__ != "module" and not isinstance(owner, type):
            return {"$r": {"id": self._ref(v), "kind": "method", "owner": self._ref(owner), "name": name}}
        ref = {"id": self._ref(v), "kind": "object"}
        t = type(v)
        if _stdlib(getattr(t, "__module__", "")):
            ref["std"] = [t.__module__, t.__qualname__]
        elif type(t) is type:
            ref["cls"] = self.encode_other(t, depth)["$r"]
        return {"$r": ref}

    def decode_other(self, tag, x, depth):
        if tag == "$r":
            return self.target(x)
        if tag == "$rm":
            owner, name = _list(x, 2)
            return getattr(self.target(owner), _str(name))
        raise ProtocolError("unknown tag %r" % tag)

    def exception_class(self, module, qual, bases):
        if module == "builtins":
            return _builtin_exception(qual) or RuntimeError
        base = next((b for b in map(_builtin_exception, bases) if b is not None), Exception)
        return type(qual.rsplit(".", 1)[-1] if qual.rsplit(".", 1)[-1].isidentifier() else "RemoteError", (base,), {})

    def target(self, ref):
        if not isinstance(ref, str):
            raise ProtocolError("bad reference")
        if ref.startswith("m:"):
            return importlib.import_module(ref[2:])
        if ref.startswith("p:"):
            module, _, qual = ref[2:].partition(":")
            obj = importlib.import_module(module)
            for part in qual.split("."):
                obj = getattr(obj, part)
            return obj
        if ref in self.objects:
            return self.objects[ref]
        raise StaleReference("reference %s is not held (the code under test was restarted)" % ref)

    def execute(self, msg):
        op = msg.get("op")
        if op == "build":
            # An object the tests need, built on this side from data.
            module, _, name = _str(msg.get("f")).rpartition(".")
            fn = getattr(importlib.import_module(module), name)
            return ("keep", fn(*self._args(msg), **self._kwargs(msg)))
        if op == "callpath":
            module, _, name = _str(msg.get("f")).rpartition(".")
            return getattr(importlib.import_module(module), name)(*self._args(msg), **self._kwargs(msg))
        if op == "value":
            return ("data", self.target(msg.get("o")))
        obj = self.target(msg.get("o"))
        if op == "get":
            return getattr(obj, _str(msg.get("n")))
        if op == "set":
            setattr(obj, _str(msg.get("n")), self.decode(msg.get("v")))
            return None
        if op == "del":
            delattr(obj, _str(msg.get("n")))
            return None
        if op == "call":
            if msg.get("n") is not None:
                obj = getattr(obj, _str(msg.get("n")))
            return obj(*self._args(msg), **self._kwargs(msg))
        if op == "len":
            return len(obj)
        if op == "iter":
            out = []
            for item in obj:
                out.append(item)
                if len(out) > MAX_ITEMS:
                    raise ValueError("iteration produced more than %d items" % MAX_ITEMS)
            return out
        if op == "exit":
            args = self._args(msg)
            ev = args[0] if args and isinstance(args[0], BaseException) else None
            return obj.__exit__(type(ev) if ev is not None else None, ev, None)
        if op == "getitem":
            return obj[self.decode(msg.get("key"))]
        if op == "setitem":
            obj[self.decode(msg.get("key"))] = self.decode(msg.get("v"))
            return None
        if op == "delitem":
            del obj[self.decode(msg.get("key"))]
            return None
        if op == "contains":
            return self.decode(msg.get("v")) in obj
        if op == "bool":
            return bool(obj)
        if op == "str":
            return str(obj)
        if op == "repr":
            return repr(obj)
        if op == "bytes":
            return bytes(obj)
        if op == "int":
            return int(obj)
        if op == "float":
            return float(obj)
        if op == "fspath":
            import os
            return os.fspath(obj)
        raise ProtocolError("unknown operation %r" % op)

    def _args(self, msg):
        return [self.decode(a) for a in _list(msg.get("a", []))]

    def _kwargs(self, msg):
        out = {}
        for pair in _list(msg.get("kw", [])):
            k, v = _list(pair, 2)
            out[_str(k)] = self.decode(v)
        return out

    def serve_forever(self):
        while True:
            msg = self.frame.recv()
            q = msg.get("q")
            try:
                value = self.execute(msg)
                if isinstance(value, tuple) and len(value) == 2 and value[0] == "keep" and msg.get("op") == "build":
                    enc = self.encode_other(value[1], 0)
                elif isinstance(value, tuple) and len(value) == 2 and value[0] == "data" and msg.get("op") == "value":
                    enc = _DataOnly().encode(value[1])
                else:
                    enc = self.encode(value)
                self.frame.send({"r": q, "v": enc})
            except ProtocolError:
                raise
            except BaseException as e:  # the operation's own failure travels back
                try:
                    enc = {"$e": self.encode_exception(e, 0)}
                except Exception:
                    enc = {"$e": {"c": ["builtins", "RuntimeError", []], "a": [repr(e)[:2000]], "s": ""}}
                self.frame.send({"r": q, "e": enc})


class _DataOnly(Codec):
    def encode_other(self, v, depth):
        raise NotData("%s is not data" % type(v).__name__)


def serve_candidate(fd, paths):
    """The candidate end: import nothing of the tests, answer requests."""
    for p in reversed(paths):
        sys.path.insert(0, p)
    Candidate(Frame(socket.socket(fileno=fd))).serve_forever()
