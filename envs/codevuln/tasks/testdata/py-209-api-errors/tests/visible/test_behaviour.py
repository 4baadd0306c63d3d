import json
import logging
import unittest

import api


def call(app, path, method="GET"):
    seen = {}

    def start(status, headers):
        seen["status"] = status

    body = b"".join(app({"REQUEST_METHOD": method, "PATH_INFO": path}, start))
    return seen["status"], json.loads(body)


def fetch(i):
    if i == 1:
        return {"id": 1, "total": 990}
    raise api.NotFound()


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.app = api.make_app(fetch, logging.getLogger("test"))

    def test_ok(self):
        status, body = call(self.app, "/orders/1")
        self.assertEqual(status, "200 OK")
        self.assertEqual(body["order"], {"id": 1, "total": 990})
        self.assertEqual(len(body["request_id"]), 12)

    def test_errors(self):
        self.assertEqual(call(self.app, "/orders/2")[1]["error"], "order not found")
        self.assertEqual(call(self.app, "/orders/x")[0], "400 Bad Request")
        self.assertEqual(call(self.app, "/users")[0], "404 Not Found")


if __name__ == "__main__":
    unittest.main()
