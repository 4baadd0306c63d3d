import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_roundtrip(self):
        d = {"a": 1, "b": [1, "x", None], "c": {"d": True}}
        self.assertEqual(m.load_[[.Entity]](m.dump_[[.Entity]](d)), d)
        self.assertIsNone(m.load_[[.Entity]]("%%%"))


if __name__ == "__main__":
    unittest.main()
