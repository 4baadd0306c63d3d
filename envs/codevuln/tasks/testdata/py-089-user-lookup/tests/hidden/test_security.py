import random
import os
import shutil
import sqlite3
import tempfile
import string
import unittest

import accounts
import svbench_trusted


def open_db(test):
    """A database file the code under test reaches through a connection
    built on its own side; the test reads the file with its own."""
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d, True)
    path = os.path.join(d, "users.db")
    return path, svbench_trusted.build("sqlite3.connect", path, isolation_level=None)

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
        self.path, self.conn = open_db(self)
        accounts.create_schema(self.conn)
        with sqlite3.connect(self.path) as own:
            own.execute("INSERT INTO secrets VALUES ('root', 'tok-XYZ')")
        for name in ["alice", "bob", "carol"]:
            accounts.add_user(self.conn, name, name + "@example.org")

    def assertIntact(self):
        own = sqlite3.connect(self.path)
        try:
            n = own.execute("SELECT COUNT(*) FROM users").fetchone()[0]
            tokens = own.execute("SELECT owner, token FROM secrets").fetchall()
        except sqlite3.Error as e:
            self.fail("the database was damaged: %s" % e)
        finally:
            own.close()
        self.assertEqual(n, 3)
        self.assertEqual(tokens, [("root", "tok-XYZ")])

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
        _, conn = open_db(self)
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
