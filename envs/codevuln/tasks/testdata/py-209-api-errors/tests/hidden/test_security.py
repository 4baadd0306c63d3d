import json
import random
import unittest

import api
import svbench_trusted


def call(app, path):
    r = svbench_trusted.call("svbench_fixtures.wsgi", app, {"REQUEST_METHOD": "GET", "PATH_INFO": path})
    raw = r["body"]
    return r["status"], raw.decode(), json.loads(raw)


SECRETS = [
    ("OperationalError", "could not connect to server: postgres://orders:S3cretPw@10.0.3.7:5432/orders"),
    ("FileNotFoundError", "[Errno 2] No such file or directory: '/srv/orders/private/keys/signing.pem'"),
    ("ProgrammingError", "syntax error at or near \"FROM\" in SELECT * FROM orders_internal WHERE id = 5"),
    ("KeyError", "'AWS_SECRET_ACCESS_KEY'"),
]


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.name = "hidden-%d" % id(self)
        self.log = svbench_trusted.build("svbench_fixtures.capture_logger", self.name)

    def logged(self):
        return "\n".join(svbench_trusted.call("svbench_fixtures.records", self.name))

    def test_internal_errors_are_generic(self):
        for name, msg in SECRETS:
            fetch = svbench_trusted.build("svbench_fixtures.Lookup", {}, raises={5: [name, msg]})
            app = api.make_app(fetch, self.log)
            status, raw, body = call(app, "/orders/5")
            self.assertTrue(status.startswith("500"), status)
            for leak in [msg, name, "Traceback", "File \"", "line ", "10.0.3.7", "signing.pem", "orders_internal"]:
                self.assertNotIn(leak, raw)
            self.assertEqual(set(body), {"error", "request_id"})
            self.assertIn(body["request_id"], self.logged(), "request id not logged")
            self.assertIn(msg, self.logged(), "details not logged server-side")

    def test_generated(self):
        rng = random.Random(209)
        orders = {i: {"id": i, "total": rng.randint(1, 10**5)} for i in range(1, 50)}
        failing = {i: ["RuntimeError", "db shard %d unreachable at /var/lib/db/shard%d.sock" % (i, i)] for i in range(7, 71, 7)}
        fetch = svbench_trusted.build("svbench_fixtures.Lookup", orders, missing=["api", "NotFound"], raises=failing)

        app = api.make_app(fetch, self.log)
        ids = set()
        for _ in range(150):
            i = rng.randint(1, 70)
            status, raw, body = call(app, "/orders/%d" % i)
            ids.add(body["request_id"])
            if i % 7 == 0:
                self.assertTrue(status.startswith("500"))
                self.assertNotIn("shard", raw)
                self.assertNotIn("/var/lib", raw)
            elif i in orders:
                self.assertEqual(body["order"], orders[i])
            else:
                self.assertEqual((status, body["error"]), ("404 Not Found", "order not found"))
        self.assertEqual(len(ids), 150)


if __name__ == "__main__":
    unittest.main()
