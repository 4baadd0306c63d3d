import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_format(self):
        t = m.new_[[.Entity]]_token()
        self.assertEqual(len(t), 32)
        self.assertTrue(t.isalnum())
        self.assertEqual(len(m.new_[[.Entity]]_token(8)), 8)


if __name__ == "__main__":
    unittest.main()
