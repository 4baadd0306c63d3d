import sqlite3
import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_find(self):
        conn = sqlite3.connect(":memory:")
        m.create_schema(conn)
        m.add_[[.Entity]](conn, "first", "ann")
        m.add_[[.Entity]](conn, "second", "bob")
        m.add_[[.Entity]](conn, "third", "ann")
        self.assertEqual([r["[[.Field]]"] for r in m.find_[[.Entity]]s(conn, "ann")], ["first", "third"])
        self.assertEqual(m.find_[[.Entity]]s(conn, "zed"), [])


if __name__ == "__main__":
    unittest.main()
