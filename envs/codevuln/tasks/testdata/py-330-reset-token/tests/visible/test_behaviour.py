import unittest

import resets
import svbench_trusted


class BehaviourTest(unittest.TestCase):
    def test_issue_redeem_once(self):
        s = resets.ResetStore()
        t = s.issue("a@example.org")
        self.assertEqual(len(t), 32)
        self.assertTrue(set(t) <= set(resets.TOKEN_ALPHABET))
        self.assertEqual(s.redeem(t), "a@example.org")
        self.assertIsNone(s.redeem(t))

    def test_expiry(self):
        c = svbench_trusted.build("svbench_fixtures.Clock", 1000.0)
        s = resets.ResetStore(ttl=60, clock=c)
        t = s.issue("b@example.org")
        c.advance(61)
        self.assertIsNone(s.redeem(t))

    def test_pin(self):
        p = resets.new_pin()
        self.assertEqual(len(p), 6)
        self.assertTrue(p.isdigit())


if __name__ == "__main__":
    unittest.main()
