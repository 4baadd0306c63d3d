import base64
import os
import pickle
import random
import string
import tempfile
import unittest
import zlib

import session


class Touch:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


class Sys:
    def __init__(self, cmd):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


def wrap(raw):
    return base64.urlsafe_b64encode(zlib.compress(raw)).decode()


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.marker = os.path.join(self.tmp.name, "pwned")

    def tearDown(self):
        self.tmp.cleanup()

    def test_gadgets(self):
        m = self.marker
        gadgets = [
            {"user": Touch(m)},
            Touch(m),
            {"x": [Sys("touch " + m)]},
        ]
        for g in gadgets:
            for proto in (0, 2, 4, 5):
                cookie = wrap(pickle.dumps(g, protocol=proto))
                result = session.load_session(cookie)
                self.assertFalse(os.path.exists(m), "gadget executed (protocol %d)" % proto)
                self.assertIsNone(result)
        raw = b"cos\nsystem\n(S'touch " + m.encode() + b"'\ntR."
        self.assertIsNone(session.load_session(wrap(raw)))
        self.assertFalse(os.path.exists(m))

    def test_generated_sessions(self):
        rng = random.Random(502)

        def value(depth):
            kind = rng.randint(0, 6 if depth < 3 else 4)
            if kind == 0:
                return rng.randint(-10**6, 10**6)
            if kind == 1:
                return "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 12)))
            if kind == 2:
                return rng.choice([True, False, None])
            if kind == 3:
                return rng.randint(-1000, 1000) / 8
            if kind == 4:
                return "é✓" * rng.randint(0, 3)
            if kind == 5:
                return [value(depth + 1) for _ in range(rng.randint(0, 4))]
            return {"k%d" % i: value(depth + 1) for i in range(rng.randint(0, 4))}

        for _ in range(100):
            data = {"k%d" % i: value(0) for i in range(rng.randint(0, 6))}
            self.assertEqual(session.load_session(session.dump_session(data)), data)
        for _ in range(50):
            junk = "".join(rng.choice(string.ascii_letters + "-_=") for _ in range(rng.randint(1, 80)))
            self.assertIsNone(session.load_session(junk))


if __name__ == "__main__":
    unittest.main()
