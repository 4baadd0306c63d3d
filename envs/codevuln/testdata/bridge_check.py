"""Checks of E3's object bridge (pyrunner/svbrpc.py), run by bridge_test.go.

The trusted end (T) must turn whatever the candidate end (C) sends into plain
data, stand-ins or a ProtocolError/StaleHandle: never a crash of the runner,
never an exception that would stop or skip a test, never a reach into T.
"""
import collections
import datetime
import decimal
import json
import pathlib
import random
import socket
import struct
import sys
import threading
import unittest
import uuid

sys.path.insert(0, sys.argv[1])
import svbrpc  # noqa: E402

ALLOWED = (svbrpc.ProtocolError, svbrpc.StaleHandle, ValueError, TypeError, KeyError, IndexError,
           AttributeError, PermissionError, RuntimeError, UnicodeError, OverflowError, OSError)


class Mod:
    """Stands in for a candidate module on the C side."""


def pair():
    a, b = socket.socketpair()
    t = svbrpc.Peer(a, "T", restricted=True)
    t.timeout = 5
    c = svbrpc.Peer(b, "C")
    threading.Thread(target=lambda: _serve(c), daemon=True).start()
    return t, c


def _serve(c):
    try:
        c.serve_forever()
    except Exception:
        pass


def call(t, fn, *args):
    return t.request("call", o="p:__main__:" + fn, a=t.encode(tuple(args), []), k={"$d": []})


def echo(*a):
    return a[0] if len(a) == 1 else a


Point = collections.namedtuple("Point", "x y")


class Store:
    def __init__(self, d):
        self.d = d

    def put(self, k, v):
        self.d[k] = v


def keep_and_fill(d):
    STORE.append(Store(d))
    return len(STORE) - 1


def fill_later(i, k, v):
    STORE[i].put(k, v)


STORE = []


class AlwaysEqual:
    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def always_equal():
    return AlwaysEqual()


def raise_named(name):
    raise {"ValueError": ValueError, "KeyError": KeyError}[name]("boom")


def reach(cb):
    out = []
    for attr in ("__globals__", "__code__", "__closure__", "__dict__", "__defaults__", "__kwdefaults__"):
        try:
            getattr(cb, attr)
            out.append(attr)
        except Exception:
            pass
    return out


class BridgeTest(unittest.TestCase):
    def test_round_trip(self):
        t, _ = pair()
        values = [None, True, 0, -7, 2**80, 1.5, float("inf"), "", "é\u2603", b"\x00\xff", bytearray(b"ab"),
                  (1, (2, 3)), [1, [2]], {"a": {"b": [1]}}, {1: "x", (1, 2): "y"}, {1, 2}, frozenset({3}),
                  Point(1, 2), datetime.datetime(2026, 1, 2, 3, 4, 5), datetime.date(2026, 1, 2),
                  datetime.timedelta(days=1, seconds=3), decimal.Decimal("1.10"), pathlib.Path("/a/b"),
                  uuid.UUID(int=5)]
        for v in values:
            got = call(t, "echo", v)
            self.assertEqual(got, v, repr(v))
            if isinstance(v, Point):
                self.assertEqual(got._fields, v._fields)
            else:
                self.assertIs(type(got), type(v), repr(v))

    def test_stored_container_mutation_is_seen(self):
        t, _ = pair()
        d = {"ann": {"email": "old"}}
        i = call(t, "keep_and_fill", d)
        call(t, "fill_later", i, "bob", 1)
        self.assertEqual(d["bob"], 1)
        d["carl"] = 2  # T's own change reaches C's copy too
        call(t, "fill_later", i, "dora", 3)
        self.assertEqual(d, {"ann": {"email": "old"}, "bob": 1, "carl": 2, "dora": 3})

    def test_remote_objects_compare_by_identity(self):
        t, _ = pair()
        x = call(t, "always_equal")
        self.assertNotEqual(x, 1)
        self.assertNotEqual(x, "anything")
        self.assertFalse(x == object())

    def test_exceptions_cross_as_their_builtin_types(self):
        t, _ = pair()
        with self.assertRaises(ValueError):
            call(t, "raise_named", "ValueError")
        with self.assertRaises(KeyError):
            call(t, "raise_named", "KeyError")

    def test_callbacks_expose_no_private_attributes(self):
        t, _ = pair()
        secret = {"k": 1}

        def cb():
            return secret

        self.assertEqual(call(t, "reach", cb), [])

    def test_hostile_replies(self):
        """A fake C answers each request with crafted frames."""
        a, b = socket.socketpair()
        t = svbrpc.Peer(a, "T", restricted=True)
        t.timeout = 2
        frames = [
            {"r": 1, "v": {"$c": {"std": ["builtins", "SystemExit"]}}},
            {"r": 1, "e": {"$e": {"c": {"std": ["builtins", "KeyboardInterrupt"]}, "a": {"$t": []}}}},
            {"r": 1, "e": {"$e": {"c": {"std": ["unittest.case", "SkipTest"]}, "a": {"$t": ["skip"]}}}},
            {"r": 1, "e": {"$e": {"c": {"std": ["builtins", "GeneratorExit"]}, "a": {"$t": []}}}},
            {"r": 1, "v": {"$m": "os"}},
            {"r": 1, "v": {"$own": "Tnothing.1"}},
            {"r": 1, "v": {"$b": "not base64!"}},
            {"r": 1, "v": {"$t": "x"}},
            {"r": 1, "v": {"$zzz": 1}},
            {"r": 99, "v": 1},
            {"q": 5, "op": "getattr", "o": "m:os", "n": "system"},
            {"q": 5, "op": "call", "o": "p:os:system", "a": {"$t": ["true"]}, "k": {"$d": []}},
            {"r": 1, "v": {"$h": "Cx.1", "c": {"std": ["builtins", "str"]}, "call": False}},
        ]
        for f in frames:
            with self.subTest(frame=f):
                try:
                    got = _one_reply(t, b, f)
                except BaseException as e:  # noqa: B902 - the point is what escapes
                    self.assertIsInstance(e, ALLOWED, "%s escaped: %r" % (type(e).__name__, e))
                    self.assertNotIsInstance(e, (SystemExit, KeyboardInterrupt, unittest.SkipTest, GeneratorExit))
                else:
                    self.assertNotIsInstance(got, type(sys))
                    if isinstance(got, type):
                        self.assertFalse(issubclass(got, (SystemExit, KeyboardInterrupt, unittest.SkipTest)), got)
                    self.assertNotIsInstance(got, str)

    def test_random_replies(self):
        rng = random.Random(3)
        a, b = socket.socketpair()
        t = svbrpc.Peer(a, "T", restricted=True)
        t.timeout = 2
        for _ in range(1500):
            try:
                _one_reply(t, b, {"r": t.next_q, "v": _random_value(rng, 0)} if rng.random() < 0.8 else _random_value(rng, 0))
            except BaseException as e:
                self.assertIsInstance(e, ALLOWED, "%s escaped: %r" % (type(e).__name__, e))
                if isinstance(e, svbrpc.ProtocolError):
                    a.close()
                    b.close()
                    a, b = socket.socketpair()
                    t = svbrpc.Peer(a, "T", restricted=True)
                    t.timeout = 2


TAGS = ["$t", "$l", "$d", "$s", "$fs", "$b", "$ba", "$nt", "$dt", "$date", "$time", "$td", "$dec", "$uuid",
        "$path", "$sock", "$e", "$c", "$m", "$own", "$bound", "$h", "$sh", "std", "loc", "own"]


def _random_value(rng, depth):
    k = rng.random()
    if depth > 4 or k < 0.3:
        return rng.choice([None, True, 0, -1, 1.5, "x", "", "\ud800", 2**70])
    if k < 0.5:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    d = {}
    for _ in range(rng.randint(1, 3)):
        d[rng.choice(TAGS + ["c", "a", "v", "key", "exc", "base"])] = _random_value(rng, depth + 1)
    return d


def _one_reply(t, b, frame):
    """Send a request from t; answer it on b with frame; return the result."""
    data = json.dumps(frame).encode()
    done = {}

    def answer():
        try:
            hdr = svbrpc.Peer(b, "C")._recv_exact(8)
            n, _ = struct.unpack(">II", hdr)
            svbrpc.Peer(b, "C")._recv_exact(n)
            b.sendall(struct.pack(">II", len(data), 0) + data)
        except Exception as e:
            done["err"] = e

    th = threading.Thread(target=answer, daemon=True)
    th.start()
    try:
        return t.request("getattr", o="Cx.1", n="value")
    finally:
        th.join(3)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
