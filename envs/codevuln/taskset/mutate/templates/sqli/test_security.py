import random
import sqlite3
import string
import unittest

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_injection(self):
        conn = sqlite3.connect(":memory:")
        m.create_schema(conn)
        m.add_[[.Entity]](conn, "private", "ann")
        for p in ["' OR '1'='1", "x' OR 1=1 --", "' UNION SELECT 1, owner FROM [[.Table]] --", "ann' --", "'; DELETE FROM [[.Table]]; --"]:
            try:
                self.assertEqual(m.find_[[.Entity]]s(conn, p), [], p)
            except sqlite3.Error as e:
                self.fail("payload %r reached the SQL parser: %s" % (p, e))
        self.assertEqual(len(m.find_[[.Entity]]s(conn, "ann")), 1)

    def test_generated(self):
        rng = random.Random([[.Seed]])
        conn = sqlite3.connect(":memory:")
        m.create_schema(conn)
        owners = {}
        for i in range(60):
            owner = "".join(rng.choice(string.ascii_letters + "'\"%_;- ") for _ in range(rng.randint(1, 10)))
            owners.setdefault(owner, []).append("v%d" % i)
            m.add_[[.Entity]](conn, "v%d" % i, owner)
        for owner, values in owners.items():
            self.assertEqual([r["[[.Field]]"] for r in m.find_[[.Entity]]s(conn, owner)], values, owner)


if __name__ == "__main__":
    unittest.main()
