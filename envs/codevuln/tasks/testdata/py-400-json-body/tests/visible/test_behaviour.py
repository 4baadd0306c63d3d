import json
import unittest

import jsonbody
import svbench_trusted


def create(body, ctype="application/json", length=True):
    e = {"CONTENT_TYPE": ctype}
    if length:
        e["CONTENT_LENGTH"] = str(len(body))
    return svbench_trusted.call("svbench_fixtures.with_input", jsonbody.create_item, e, body)["result"]


class BehaviourTest(unittest.TestCase):
    def test_create(self):
        body = json.dumps({"name": "lamp", "tags": ["home"]}).encode()
        self.assertEqual(create(body), (201, {"name": "lamp", "tags": ["home"]}))

    def test_errors(self):
        self.assertEqual(create(b"{}", ctype="text/plain")[0], 415)
        self.assertEqual(create(b"{oops")[0], 400)
        self.assertEqual(create(b"[1, 2]")[0], 400)
        self.assertEqual(create(b'{"tags": []}')[0], 400)
        big = json.dumps({"name": "x" * (jsonbody.MAX_BODY + 10)}).encode()
        self.assertEqual(create(big)[0], 413)


if __name__ == "__main__":
    unittest.main()
