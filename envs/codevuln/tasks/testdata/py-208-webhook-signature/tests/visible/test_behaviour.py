import unittest

import webhooks

SECRET = b"whsec_test"


class BehaviourTest(unittest.TestCase):
    def test_valid(self):
        h = webhooks.sign(SECRET, 1700000000, b'{"id":1}')
        self.assertTrue(h.startswith("sha256="))
        self.assertTrue(webhooks.verify(SECRET, h, "1700000000", b'{"id":1}', 1700000100))

    def test_invalid(self):
        h = webhooks.sign(SECRET, 1700000000, b'{"id":1}')
        self.assertFalse(webhooks.verify(SECRET, h, 1700000000, b'{"id":2}', 1700000000))
        self.assertFalse(webhooks.verify(b"other", h, 1700000000, b'{"id":1}', 1700000000))
        self.assertFalse(webhooks.verify(SECRET, h, 1700000000, b'{"id":1}', 1700000301))
        self.assertFalse(webhooks.verify(SECRET, "md5=abc", 1700000000, b"", 1700000000))


if __name__ == "__main__":
    unittest.main()
