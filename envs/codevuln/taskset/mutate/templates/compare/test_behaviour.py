import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_verify(self):
        s = m.sign_[[.Entity]](b"k", b"data")
        self.assertTrue(m.verify_[[.Entity]](b"k", b"data", s))
        self.assertFalse(m.verify_[[.Entity]](b"k", b"other", s))
        self.assertFalse(m.verify_[[.Entity]](b"k", b"data", None))


if __name__ == "__main__":
    unittest.main()
