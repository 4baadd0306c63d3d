"""Checks of E3's data-only bridge (pyrunner/svbrpc.py), run by bridge_test.go.

The trusted end (T) must turn whatever the candidate end (C) sends into data,
an exception copy, an opaque reference to one of C's objects, or a
ProtocolError: never a crash of the runner, never an exception that would
stop or skip a test, never a reach into T. T must send nothing but data.

The gadget families of the round-3 review are replayed here as what a
candidate that owns C's socket would send (the candidate shares C's process,
so it can write any frame):
  - a bound-method value naming an attribute of an object T handed over
    ("$bound" with a dunder name), which made T run getattr for C;
  - setting an attribute of a T object to a value and reading it back (a
    request from C: "setattr"/"getattr" on a T handle);
  - classes as callable handles ("$c" naming builtins.type, then a "call");
  - a function's __builtins__ dict arriving shared (a "getattr" request for
    "__builtins__", "$sh" shared-container frames).
"""
import collections
import datetime
import decimal
import json
import pathlib
import random
import socket
import sys
import threading
import unittest
import uuid

sys.path.insert(0, sys.argv[1])
import svbrpc  # noqa: E402

ALLOWED = (svbrpc.ProtocolError, TimeoutError, socket.timeout)


class Mod:
    """Stands in for a candidate module on the C side."""


def pair():
    a, b = socket.socketpair()
    fa, fb = svbrpc.Frame(a), svbrpc.Frame(b)
    fa.timeout = 5
    t = svbrpc.Trusted(fa)
    c = svbrpc.Candidate(fb)
    threading.Thread(target=lambda: _serve(c), daemon=True).start()
    return t


def _serve(c):
    try:
        c.serve_forever()
    except Exception:
        pass


def call(t, fn, *args, **kwargs):
    return t.request("call", o="p:__main__:" + fn, a=args, k=kwargs)


def echo(*a):
    return a[0] if len(a) == 1 else a


Point = collections.namedtuple("Point", "x y")


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def always_equal():
    return AlwaysEqual()


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return self.v


def raise_named(name):
    raise {"ValueError": ValueError, "KeyError": KeyError}[name]("boom")


class Weird(ValueError):
    pass


def raise_weird():
    raise Weird("w", 1)


class Spy:
    """A T-side object with a secret: it must never be sent."""

    secret = "runner-secret"


class BridgeTest(unittest.TestCase):
    def test_round_trip(self):
        t = pair()
        values = [None, True, 0, -7, 2**80, 1.5, float("inf"), "", "é\u2603", b"\x00\xff", bytearray(b"ab"),
                  (1, (2, 3)), [1, [2]], {"a": {"b": [1]}}, {1: "x", (1, 2): "y"}, {1, 2}, frozenset({3}),
                  datetime.datetime(2026, 1, 2, 3, 4, 5), datetime.date(2026, 1, 2),
                  datetime.timedelta(days=1, seconds=3), decimal.Decimal("1.10"), pathlib.Path("/a/b"),
                  uuid.UUID(int=5)]
        for v in values:
            got = call(t, "echo", v)
            self.assertEqual(got, v, repr(v))
            self.assertIs(type(got), type(v), repr(v))

    def test_named_tuples_are_records_made_without_code(self):
        t = pair()
        got = call(t, "echo", Point(1, 2))
        self.assertEqual(tuple(got), (1, 2))
        self.assertEqual((got.x, got.y), (1, 2))
        self.assertIsInstance(got, svbrpc.Record)

    def test_candidate_objects_stay_there(self):
        t = pair()
        box = call(t, "Box", [1, 2])
        self.assertIsInstance(box, svbrpc.Remote)
        self.assertEqual(box.get(), [1, 2])
        self.assertEqual(box.v, [1, 2])
        box.v = {"k": 3}
        self.assertEqual(box.get(), {"k": 3})
        self.assertIs(call(t, "echo", box), box, "a reference comes back as the same stand-in")

    def test_remote_objects_compare_by_identity(self):
        t = pair()
        x = call(t, "always_equal")
        self.assertNotEqual(x, 1)
        self.assertNotEqual(x, "anything")
        self.assertFalse(x == object())

    def test_exceptions_are_copies(self):
        t = pair()
        with self.assertRaises(ValueError):
            call(t, "raise_named", "ValueError")
        with self.assertRaises(KeyError):
            call(t, "raise_named", "KeyError")
        with self.assertRaises(ValueError) as cm:
            call(t, "raise_weird")
        self.assertEqual(type(cm.exception).__name__, "Weird")
        self.assertEqual(cm.exception.args, ("w", 1))

    def test_only_data_is_sent(self):
        t = pair()
        spy = Spy()
        for v in (spy, lambda: 1, print, sys, Spy, open, iter([1]), {"k": spy}, [spy]):
            with self.subTest(value=type(v).__name__):
                with self.assertRaises(svbrpc.NotData):
                    call(t, "echo", v)

    def test_gadget_families(self):
        """What a candidate owning C's socket sends instead of an answer."""
        frames = {
            "bound-method value naming a dunder": {"r": 1, "v": {"$bound": ["T0.1", "__globals__"]}},
            "bound-method value of a builtin": {"r": 1, "v": {"$bound": ["m:builtins", "exec"]}},
            "setattr on a runner object": {"q": 7, "op": "setattr", "o": "T0.1", "n": "row_factory", "v": {"$c": {"std": ["builtins", "type"]}}},
            "getattr read-back": {"q": 8, "op": "getattr", "o": "T0.1", "n": "row_factory"},
            "class as a callable handle": {"r": 1, "v": {"$c": {"std": ["builtins", "type"]}}},
            "call of a class handle": {"q": 9, "op": "call", "o": "p:builtins:type", "a": {"$t": ["X", {"$t": []}, {"$d": []}]}},
            "__builtins__ of a function": {"q": 10, "op": "getattr", "o": "T0.2", "n": "__builtins__"},
            "shared container": {"r": 1, "v": {"$sh": ["S0.1", {"$d": [["exec", 1]]}]}},
            "module value": {"r": 1, "v": {"$m": "os"}},
            "own handle": {"r": 1, "v": {"$own": "T0.1"}},
            "handle with a class": {"r": 1, "v": {"$h": "C0.1", "c": {"std": ["builtins", "str"]}}},
            "socket": {"r": 1, "v": {"$sock": [0, 1, 1, 0, None]}},
            "request to import": {"q": 11, "op": "call", "o": "m:os", "n": "system", "a": ["true"]},
            "extra field beside the answer": {"r": 1, "v": 1, "sync": [["S0.1", {"$d": []}]]},
            "reply to another request": {"r": 99, "v": 1},
            "reference to a method of a runner module": {"r": 1, "v": {"$r": {"id": "x", "kind": "module"}}},
        }
        for name, frame in frames.items():
            with self.subTest(gadget=name):
                with self.assertRaises(svbrpc.ProtocolError):
                    _one_reply(frame)

    def test_exception_classes_are_names(self):
        cases = [
            (["builtins", "SystemExit", ["SystemExit", "BaseException"]], Exception),
            (["builtins", "KeyboardInterrupt", ["KeyboardInterrupt"]], Exception),
            (["unittest.case", "SkipTest", ["Exception"]], Exception),
            (["builtins", "GeneratorExit", []], Exception),
            (["builtins", "ValueError", ["ValueError"]], ValueError),
            (["os", "_wrap_close", ["Exception"]], Exception),
            (["subprocess", "Popen", ["Exception"]], Exception),
        ]
        for c, base in cases:
            with self.subTest(cls=c):
                frame = {"r": 1, "e": {"$e": {"c": c, "a": ["x"], "s": "x"}}}
                with self.assertRaises(Exception) as cm:
                    _one_reply(frame)
                e = cm.exception
                self.assertIsInstance(e, base)
                self.assertNotIsInstance(e, (SystemExit, KeyboardInterrupt, GeneratorExit, unittest.SkipTest))
                self.assertEqual(e.args, ("x",))

    def test_references_claim_no_runner_class(self):
        import ssl  # noqa: F401 - a standard module the runner has imported
        for std in (["ssl", "SSLContext"], ["unittest", "TestCase"], ["builtins", "str"], ["os", "_Environ"]):
            with self.subTest(std=std):
                got = _one_reply({"r": 1, "v": {"$r": {"id": "c.1", "kind": "object", "std": std}}})
                self.assertIsInstance(got, svbrpc.Remote)
                self.assertNotIsInstance(got, (str, unittest.TestCase))

    def test_random_replies(self):
        rng = random.Random(3)
        for _ in range(1500):
            frame = {"r": 1, rng.choice(["v", "e"]): _random_value(rng, 0)} if rng.random() < 0.8 else _random_value(rng, 0)
            try:
                got = _one_reply(frame)
            except BaseException as e:  # noqa: B902 - the point is what escapes
                self.assertIsInstance(e, ALLOWED + (Exception,), "%s escaped: %r" % (type(e).__name__, e))
                self.assertNotIsInstance(e, (SystemExit, KeyboardInterrupt, unittest.SkipTest, GeneratorExit))
                if "e" not in (frame if isinstance(frame, dict) else {}):
                    self.assertIsInstance(e, ALLOWED, "%s escaped from a value reply: %r" % (type(e).__name__, e))
            else:
                check_data(got)


DATA = (type(None), bool, int, float, str, bytes, bytearray, datetime.datetime, datetime.date, datetime.time,
        datetime.timedelta, decimal.Decimal, uuid.UUID, pathlib.PurePath, svbrpc.Remote, svbrpc.RemoteMethod)


def check_data(v, depth=0):
    """What T decoded is data, a stand-in of C, or an exception class T made."""
    if isinstance(v, (list, tuple, set, frozenset)):
        for x in v:
            check_data(x, depth + 1)
        return
    if isinstance(v, dict):
        for k, x in v.items():
            check_data(k, depth + 1)
            check_data(x, depth + 1)
        return
    if isinstance(v, type):
        if isinstance(v, svbrpc.RemoteType) or issubclass(v, Exception):
            return
        raise AssertionError("decoded a class of the runner: %r" % v)
    if isinstance(v, BaseException):
        if not isinstance(v, Exception):
            raise AssertionError("decoded a %r" % type(v))
        return
    if not isinstance(v, DATA):
        raise AssertionError("decoded a non-data value: %r" % type(v))


TAGS = ["$t", "$d", "$s", "$fs", "$b", "$ba", "$nt", "$dt", "$date", "$time", "$td", "$dec", "$uuid",
        "$path", "$e", "$r", "$rm", "$c", "$m", "$own", "$bound", "$h", "$sh", "$sock", "id", "kind", "std", "cls"]


def _random_value(rng, depth):
    k = rng.random()
    if depth > 4 or k < 0.3:
        return rng.choice([None, True, 0, -1, 1.5, "x", "", "\ud800", 2**70, "object", "class", "excclass", "method"])
    if k < 0.5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    d = {}
    for _ in range(rng.randint(1, 3)):
        d[rng.choice(TAGS + ["c", "a", "s", "v", "module", "qual", "owner", "name"])] = _random_value(rng, depth + 1)
    return d


def _one_reply(frame):
    """T asks a fake C (one the candidate controls) a question; the fake
    answers with frame; return what T made of it."""
    a, b = socket.socketpair()
    fa = svbrpc.Frame(a)
    fa.timeout = 3
    t = svbrpc.Trusted(fa)
    data = json.dumps(frame).encode()

    def answer():
        try:
            svbrpc.Frame(b).recv()
            b.sendall(svbrpc.HEADER.pack(len(data)) + data)
        except Exception:
            pass

    th = threading.Thread(target=answer, daemon=True)
    th.start()
    try:
        return t.request("get", o="c.1", n="value")
    finally:
        th.join(3)
        a.close()
        b.close()


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
