import os
import shutil
import sqlite3
import tempfile
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


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.path, self.conn = open_db(self)
        accounts.create_schema(self.conn)
        for name, email in [("alice", "a@example.org"), ("albert", "al@example.org"), ("bob", "b@example.org")]:
            accounts.add_user(self.conn, name, email)

    def test_find_existing(self):
        u = accounts.find_user(self.conn, "alice")
        self.assertEqual(u["email"], "a@example.org")
        self.assertEqual(u["role"], "user")

    def test_find_missing(self):
        self.assertIsNone(accounts.find_user(self.conn, "carol"))

    def test_search_prefix(self):
        names = [u["name"] for u in accounts.search_users(self.conn, "al")]
        self.assertEqual(names, ["albert", "alice"])

    def test_search_order_and_limit(self):
        names = [u["name"] for u in accounts.search_users(self.conn, "", order_by="email", limit=2)]
        self.assertEqual(names, ["alice", "albert"])

    def test_bad_order_rejected(self):
        with self.assertRaises(ValueError):
            accounts.search_users(self.conn, "a", order_by="name; DROP TABLE users")


if __name__ == "__main__":
    unittest.main()
