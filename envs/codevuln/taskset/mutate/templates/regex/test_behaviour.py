import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_slugs(self):
        for s in ["a", "my-[[.Entity]]-2", "x1-y2-z3"]:
            self.assertTrue(m.is_valid_[[.Entity]]_slug(s), s)
        for s in ["", "-a", "a-", "a--b", "A-b", "a b", None]:
            self.assertFalse(m.is_valid_[[.Entity]]_slug(s), s)


if __name__ == "__main__":
    unittest.main()
