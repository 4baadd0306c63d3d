import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_targets(self):
        self.assertEqual(m.[[.Entity]]_redirect_target("/list?page=2"), "/list?page=2")
        self.assertEqual(m.[[.Entity]]_redirect_target("https://[[.Host]]/x"), "https://[[.Host]]/x")
        self.assertEqual(m.[[.Entity]]_redirect_target(""), "/")


if __name__ == "__main__":
    unittest.main()
