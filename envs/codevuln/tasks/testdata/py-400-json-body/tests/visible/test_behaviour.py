import io
import json
import unittest

import jsonbody


def env(body, ctype="application/json", length=True):
    e = {"CONTENT_TYPE": ctype, "wsgi.input": io.BytesIO(body)}
    if length:
        e["CONTENT_LENGTH"] = str(len(body))
    return e


class BehaviourTest(unittest.TestCase):
    def test_create(self):
        body = json.dumps({"name": "lamp", "tags": ["home"]}).encode()
        self.assertEqual(jsonbody.create_item(env(body)), (201, {"name": "lamp", "tags": ["home"]}))

    def test_errors(self):
        self.assertEqual(jsonbody.create_item(env(b"{}", ctype="text/plain"))[0], 415)
        self.assertEqual(jsonbody.create_item(env(b"{oops"))[0], 400)
        self.assertEqual(jsonbody.create_item(env(b"[1, 2]"))[0], 400)
        self.assertEqual(jsonbody.create_item(env(b'{"tags": []}'))[0], 400)
        big = json.dumps({"name": "x" * (jsonbody.MAX_BODY + 10)}).encode()
        self.assertEqual(jsonbody.create_item(env(big))[0], 413)


if __name__ == "__main__":
    unittest.main()
