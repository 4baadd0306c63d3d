import random
import sqlite3
import string
import unittest

import accounts

PAYLOADS = [
    "' OR '1'='1",
    "' OR 1=1 --",
    "nobody' UNION SELECT 1, owner, token, 'admin' FROM secrets --",
    "x'; DROP TABLE users; --",
    "' OR name LIKE '%",
    "alice' --",
    "alice'/*",
    "' OR ''='",
]


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.conn = sqlite3.connect(":memory:")
        accounts.create_schema(self.conn)
        self.conn.execute("INSERT INTO secrets VALUES ('root', 'tok-XYZ')")
        for name in ["alice", "bob", "carol"]:
            accounts.add_user(self.conn, name, name + "@example.org")

    def assertIntact(self):
        n = self.conn.execute("SELECT COUNT(*) FROM users").fetchone()[0]
        self.assertEqual(n, 3)

    def test_find_user_payloads(self):
        for p in PAYLOADS:
            with self.subTest(payload=p):
                try:
                    u = accounts.find_user(self.conn, p)
                except sqlite3.Error as e:
                    self.fail("payload reached the SQL parser: %s" % e)
                self.assertIsNone(u)
                self.assertIntact()

    def test_search_payloads(self):
        for p in PAYLOADS:
            with self.subTest(payload=p):
                try:
                    rows = accounts.search_users(self.conn, p)
                except sqlite3.Error as e:
                    self.fail("payload reached the SQL parser: %s" % e)
                self.assertEqual(rows, [])
                self.assertIntact()

    def test_like_wildcards_are_literal(self):
        self.assertEqual(accounts.search_users(self.conn, "%"), [])
        self.assertEqual(accounts.search_users(self.conn, "_lice"), [])

    def test_generated_names_roundtrip(self):
        rng = random.Random(8901)
        alphabet = string.ascii_letters + string.digits + "'\"%_;-/*\\ "
        names = set()
        while len(names) < 40:
            names.add("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))))
        conn = sqlite3.connect(":memory:")
        accounts.create_schema(conn)
        for i, n in enumerate(sorted(names)):
            accounts.add_user(conn, n, "u%d@example.org" % i)
        for n in names:
            u = accounts.find_user(conn, n)
            self.assertIsNotNone(u, n)
            self.assertEqual(u["name"], n)
            hits = {r["name"] for r in accounts.search_users(conn, n, limit=100)}
            self.assertIn(n, hits)
            # LIKE is case-insensitive for ASCII in SQLite.
            self.assertTrue(all(h.lower().startswith(n.lower()) for h in hits), (n, hits))
        for _ in range(30):
            probe = "".join(rng.choice(alphabet) for _ in range(15)) + "'"
            if probe not in names:
                self.assertIsNone(accounts.find_user(conn, probe))


if __name__ == "__main__":
    unittest.main()
