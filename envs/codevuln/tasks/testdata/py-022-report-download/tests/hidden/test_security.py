import os
import random
import tempfile
import unittest

import reports

SECRET = b"other-tenant-secret"


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        b = self.base = self.tmp.name
        for d in ["acme/x/y", "globex", "acme-old"]:
            os.makedirs(os.path.join(b, d))
        for p in ["globex/payroll.csv", "acme-old/leak.txt", "host.cfg"]:
            with open(os.path.join(b, p), "wb") as f:
                f.write(SECRET)
        with open(os.path.join(b, "acme/x/y/ok.txt"), "wb") as f:
            f.write(b"ok")
        os.symlink(os.path.join(b, "globex/payroll.csv"), os.path.join(b, "acme/link.csv"))

    def tearDown(self):
        self.tmp.cleanup()

    def assertRefused(self, name):
        status, _, body = reports.download(self.base, "acme", name)
        self.assertNotEqual(status, 200, name)
        self.assertNotIn(SECRET, body, name)

    def test_exploits(self):
        for name in [
            "../globex/payroll.csv",
            "x/../../globex/payroll.csv",
            "x/y/../../../host.cfg",
            os.path.join(self.base, "globex", "payroll.csv"),
            "/etc/passwd",
            "..\\globex\\payroll.csv",
            "../acme-old/leak.txt",
            "link.csv",
            "./../host.cfg",
        ]:
            with self.subTest(name=name):
                self.assertRefused(name)

    def test_generated(self):
        rng = random.Random(2222)
        segs = ["x", "y", "..", ".", "x/y"]
        for _ in range(150):
            parts = [rng.choice(segs) for _ in range(rng.randint(1, 6))]
            depth, escaped = 0, False
            for p in parts:
                depth += {"..": -1, ".": 0, "x/y": 2}.get(p, 1)
                escaped |= depth < 0
            name = "/".join(parts)
            if escaped:
                self.assertRefused(name + "/../../../../host.cfg")
            else:
                good = name + "/" + "../" * depth + "x/y/ok.txt"
                real = os.path.join(self.base, "acme", good)
                if os.path.isfile(real):
                    status, _, body = reports.download(self.base, "acme", good)
                    self.assertEqual((status, body), (200, b"ok"), good)


if __name__ == "__main__":
    unittest.main()
