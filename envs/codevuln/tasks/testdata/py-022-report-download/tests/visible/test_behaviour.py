import os
import tempfile
import unittest

import reports


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = self.tmp.name
        os.makedirs(os.path.join(self.base, "acme", "2024"))
        with open(os.path.join(self.base, "acme", "summary.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        with open(os.path.join(self.base, "acme", "2024", "q1.txt"), "w") as f:
            f.write("Q1")

    def tearDown(self):
        self.tmp.cleanup()

    def test_download(self):
        status, headers, body = reports.download(self.base, "acme", "summary.csv")
        self.assertEqual(status, 200)
        self.assertEqual(body, b"a,b\n1,2\n")
        self.assertEqual(headers["Content-Type"], "text/csv")
        self.assertIn('filename="summary.csv"', headers["Content-Disposition"])

    def test_nested(self):
        status, _, body = reports.download(self.base, "acme", "2024/q1.txt")
        self.assertEqual((status, body), (200, b"Q1"))

    def test_missing(self):
        self.assertEqual(reports.download(self.base, "acme", "nope.csv")[0], 404)

    def test_bad_tenant(self):
        self.assertEqual(reports.download(self.base, "../acme", "summary.csv")[0], 400)


if __name__ == "__main__":
    unittest.main()
