import unittest

import validators


class BehaviourTest(unittest.TestCase):
    def test_emails(self):
        for good in ["a@ex.com", "first.last+tag@mail.example.co.uk", "x-y_z@my-host.io"]:
            self.assertTrue(validators.is_valid_email(good), good)
        for bad in ["", "a@", "@ex.com", "a@ex", "a..b@ex.com", "a@-ex.com", "a@ex.c0m", "a b@ex.com"]:
            self.assertFalse(validators.is_valid_email(bad), bad)

    def test_usernames(self):
        for good in ["ann", "ab.c-d_e", "Zed2024"]:
            self.assertTrue(validators.is_valid_username(good), good)
        for bad in ["ab", "1abc", "a..b", "a" * 33, "an n"]:
            self.assertFalse(validators.is_valid_username(bad), bad)

    def test_form(self):
        self.assertEqual(validators.validate_signup({"username": "ann", "email": "a@ex.com", "password": "x" * 10}), {})
        self.assertEqual(set(validators.validate_signup({})), {"username", "email", "password"})


if __name__ == "__main__":
    unittest.main()
