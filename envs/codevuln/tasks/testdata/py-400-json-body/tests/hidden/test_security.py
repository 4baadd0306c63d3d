import json
import random
import unittest

import jsonbody
import svbench_trusted


class SecurityTest(unittest.TestCase):
    def call(self, body, length, endless=False):
        e = {"CONTENT_TYPE": "application/json"}
        if length is not None:
            e["CONTENT_LENGTH"] = length
        try:
            r = svbench_trusted.call("svbench_fixtures.with_input", jsonbody.create_item, e, body, endless)
        except AssertionError as err:
            self.fail(str(err))
        return r["result"][0], r["read"]

    def test_endless_bodies(self):
        for length, want in [(None, 411), ("", 411), ("abc", 411), (str(10**12), 413), ("100", 400), ("-5", 400)]:
            status, given = self.call(b"", length, endless=True)
            self.assertEqual(status, want, length)
            self.assertLessEqual(given, jsonbody.MAX_BODY + 1, "read %d bytes for Content-Length %r" % (given, length))

    def test_deep_nesting(self):
        for depth in (33, 100, 5000, 200000):
            for opener, closer in (("[", "]"), ('{"a":', "}")):
                body = ('{"name": "x", "deep": ' + opener * depth + "1" + closer * depth + "}").encode()
                if len(body) > jsonbody.MAX_BODY:
                    continue
                status, _ = self.call(body, str(len(body)))
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
            e = {"CONTENT_TYPE": "application/json; charset=utf-8", "CONTENT_LENGTH": str(len(body))}
            got = svbench_trusted.call("svbench_fixtures.with_input", jsonbody.create_item, e, body)["result"]
            self.assertEqual(got, (201, {"name": name, "tags": tags}))


if __name__ == "__main__":
    unittest.main()
