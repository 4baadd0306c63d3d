import unittest

import dbconfig


class BehaviourTest(unittest.TestCase):
    def test_from_env(self):
        s = dbconfig.load_settings({"APP_DB_HOST": "db", "APP_DB_PORT": "6543", "APP_DB_PASSWORD": "p@ss/w:rd"})
        self.assertEqual((s.host, s.port, s.name, s.user), ("db", 6543, "orders", "orders_app"))
        self.assertEqual(dbconfig.dsn(s), "postgresql://orders_app:p%40ss%2Fw%3Ard@db:6543/orders")

    def test_bad_port(self):
        for p in ["x", "0", "70000"]:
            with self.assertRaises(dbconfig.ConfigError):
                dbconfig.load_settings({"APP_DB_PORT": p, "APP_DB_PASSWORD": "x"})


if __name__ == "__main__":
    unittest.main()
