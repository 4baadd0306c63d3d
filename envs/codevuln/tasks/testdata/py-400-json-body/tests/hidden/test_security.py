import io
import json
import random
import unittest

import jsonbody


class Endless(io.RawIOBase):
    """A body stream that never ends; counts the bytes handed out."""

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


class SecurityTest(unittest.TestCase):
    def call(self, stream, length):
        e = {"CONTENT_TYPE": "application/json", "wsgi.input": stream}
        if length is not None:
            e["CONTENT_LENGTH"] = length
        try:
            return jsonbody.create_item(e)[0]
        except AssertionError as err:
            self.fail(str(err))

    def test_endless_bodies(self):
        for length, want in [(None, 411), ("", 411), ("abc", 411), (str(10**12), 413), ("100", 400), ("-5", 400)]:
            s = Endless()
            status = self.call(s, length)
            self.assertEqual(status, want, length)
            self.assertLessEqual(s.given, jsonbody.MAX_BODY + 1, "read %d bytes for Content-Length %r" % (s.given, length))

    def test_deep_nesting(self):
        for depth in (33, 100, 5000, 200000):
            for opener, closer in (("[", "]"), ('{"a":', "}")):
                body = ('{"name": "x", "deep": ' + opener * depth + "1" + closer * depth + "}").encode()
                if len(body) > jsonbody.MAX_BODY:
                    continue
                status = self.call(io.BytesIO(body), str(len(body)))
                self.assertEqual(status, 400, depth)

    def test_generated(self):
        rng = random.Random(400)

        def value(d):
            k = rng.randint(0, 4 if d < 6 else 2)
            if k == 0:
                return rng.randint(-99, 99)
            if k == 1:
                return "".join(rng.choice('ab"\\[]{}é ') for _ in range(rng.randint(0, 8)))
            if k == 2:
                return None
            if k == 3:
                return [value(d + 1) for _ in range(rng.randint(0, 3))]
            return {"k%d" % i: value(d + 1) for i in range(rng.randint(0, 3))}

        for _ in range(150):
            tags = [value(0) for _ in range(rng.randint(0, 4))]
            name = "".join(rng.choice("abc[]{}\"") for _ in range(rng.randint(1, 10)))
            body = json.dumps({"name": name, "tags": tags}).encode()
            e = {"CONTENT_TYPE": "application/json; charset=utf-8", "CONTENT_LENGTH": str(len(body)), "wsgi.input": io.BytesIO(body)}
            self.assertEqual(jsonbody.create_item(e), (201, {"name": name, "tags": tags}))


if __name__ == "__main__":
    unittest.main()
