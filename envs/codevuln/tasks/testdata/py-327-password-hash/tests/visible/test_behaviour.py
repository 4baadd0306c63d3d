import unittest

import passwords


class BehaviourTest(unittest.TestCase):
    def test_roundtrip(self):
        h = passwords.hash_password("correct horse")
        self.assertTrue(passwords.verify_password("correct horse", h))
        self.assertFalse(passwords.verify_password("wrong horse!", h))
        self.assertFalse(passwords.needs_rehash(h))

    def test_short(self):
        with self.assertRaises(passwords.PasswordError):
            passwords.hash_password("short")

    def test_garbage(self):
        self.assertFalse(passwords.verify_password("whatever1", "nonsense"))
        self.assertFalse(passwords.verify_password("whatever1", ""))

    def test_legacy(self):
        legacy = "md5$5f4dcc3b5aa765d61d8327deb882cf99"  # "password"
        self.assertTrue(passwords.verify_password("password", legacy))


if __name__ == "__main__":
    unittest.main()
