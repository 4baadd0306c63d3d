import json
import unittest

import api
import svbench_trusted


def call(app, path, method="GET"):
    r = svbench_trusted.call("svbench_fixtures.wsgi", app, {"REQUEST_METHOD": method, "PATH_INFO": path})
    return r["status"], json.loads(r["body"])


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        fetch = svbench_trusted.build("svbench_fixtures.Lookup", {1: {"id": 1, "total": 990}}, missing=["api", "NotFound"])
        self.app = api.make_app(fetch, svbench_trusted.build("logging.getLogger", "test"))

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
