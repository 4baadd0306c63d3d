import os
import random
import shutil
import sqlite3
import string
import tempfile
import unittest

import svbench_trusted

import [[.Module]] as m


def open_db(test):
    """A database file the code under test reaches through a connection
    built on its own side (only data crosses to it); the test reads the file
    with its own connection, where the code under test cannot lie about it."""
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d, True)
    path = os.path.join(d, "[[.Table]].db")
    return path, svbench_trusted.build("sqlite3.connect", path, isolation_level=None)


def rows(path):
    with sqlite3.connect(path) as own:
        return own.execute("SELECT id, [[.Field]], owner FROM [[.Table]] ORDER BY id").fetchall()


class SecurityTest(unittest.TestCase):
    def test_injection(self):
        path, conn = open_db(self)
        m.create_schema(conn)
        m.add_[[.Entity]](conn, "private", "ann")
        before = rows(path)
        for p in ["' OR '1'='1", "x' OR 1=1 --", "' UNION SELECT 1, owner FROM [[.Table]] --", "ann' --", "'; DELETE FROM [[.Table]]; --",
                  # Names of columns, and double-quoted forms: in a
                  # double-quoted "literal" SQLite reads a column's name as
                  # the column, so owner = "owner" matches every row.
                  "owner", "id", "[[.Field]]", '" OR "1"="1', 'x" OR 1=1 --', "ann\\' OR 1=1 --"]:
            try:
                self.assertEqual(m.find_[[.Entity]]s(conn, p), [], p)
            except sqlite3.Error as e:
                self.fail("payload %r reached the SQL parser: %s" % (p, e))
            self.assertEqual(rows(path), before, "payload %r changed the table" % p)
        self.assertEqual(len(m.find_[[.Entity]]s(conn, "ann")), 1)

    def test_owners_named_like_sql(self):
        # Owners whose names are SQL (column names, quotes, comments) are
        # data: each finds exactly its own rows, read back from the file.
        path, conn = open_db(self)
        m.create_schema(conn)
        names = ["owner", "id", "[[.Field]]", "'", '"', "--", "a' OR 'a'='a", 'b" OR "b"="b', "%", "_", "\\\\"]
        for i, owner in enumerate(names):
            m.add_[[.Entity]](conn, "v%d" % i, owner)
        stored = rows(path)
        self.assertEqual([(r[1], r[2]) for r in stored], [("v%d" % i, o) for i, o in enumerate(names)])
        for i, owner in enumerate(names):
            self.assertEqual([r["[[.Field]]"] for r in m.find_[[.Entity]]s(conn, owner)], ["v%d" % i], owner)

    def test_generated(self):
        rng = random.Random([[.Seed]])
        path, conn = open_db(self)
        m.create_schema(conn)
        owners = {}
        for i in range(60):
            owner = "".join(rng.choice(string.ascii_letters + "'\"%_;- \\") for _ in range(rng.randint(1, 10)))
            owners.setdefault(owner, []).append("v%d" % i)
            m.add_[[.Entity]](conn, "v%d" % i, owner)
        self.assertEqual(len(rows(path)), 60)
        for owner, values in owners.items():
            self.assertEqual([r["[[.Field]]"] for r in m.find_[[.Entity]]s(conn, owner)], values, owner)


if __name__ == "__main__":
    unittest.main()
