import os
import shutil
import sqlite3
import tempfile
import unittest

import svbench_trusted

import [[.Module]] as m


def open_db(test):
    """A database file the code under test reaches through a connection
    built on its own side (only data crosses to it); the test reads the file
    with its own connection."""
    d = tempfile.mkdtemp()
    test.addCleanup(shutil.rmtree, d, True)
    path = os.path.join(d, "[[.Table]].db")
    return path, svbench_trusted.build("sqlite3.connect", path, isolation_level=None)


class BehaviourTest(unittest.TestCase):
    def test_find(self):
        path, conn = open_db(self)
        m.create_schema(conn)
        m.add_[[.Entity]](conn, "first", "ann")
        m.add_[[.Entity]](conn, "second", "bob")
        m.add_[[.Entity]](conn, "third", "ann")
        self.assertEqual([r["[[.Field]]"] for r in m.find_[[.Entity]]s(conn, "ann")], ["first", "third"])
        self.assertEqual(m.find_[[.Entity]]s(conn, "zed"), [])
        with sqlite3.connect(path) as own:
            self.assertEqual(own.execute("SELECT COUNT(*) FROM [[.Table]]").fetchone()[0], 3)


if __name__ == "__main__":
    unittest.main()
