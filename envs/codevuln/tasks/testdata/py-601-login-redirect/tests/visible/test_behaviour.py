import unittest

import login
import svbench_trusted

HOST = "shop.example.com"


class BehaviourTest(unittest.TestCase):
    def test_relative(self):
        self.assertEqual(login.after_login_location("/orders?page=2#top", HOST), "/orders?page=2#top")
        self.assertEqual(login.after_login_location("%2Fcart", HOST), "/cart")

    def test_default(self):
        self.assertEqual(login.after_login_location(None, HOST), "/dashboard")
        self.assertEqual(login.after_login_location("", HOST), "/dashboard")

    def test_same_host_absolute(self):
        self.assertEqual(login.after_login_location("https://shop.example.com/a", HOST), "https://shop.example.com/a")

    def test_response(self):
        ok = svbench_trusted.build("svbench_fixtures.Credentials", {"ann": "pw"})
        self.assertEqual(login.login_response({"user": "ann", "password": "x"}, HOST, ok)[0], 401)
        status, headers = login.login_response({"user": "ann", "password": "pw", "next": "/me"}, HOST, ok)
        self.assertEqual((status, headers["Location"]), (303, "/me"))


if __name__ == "__main__":
    unittest.main()
