import os
import tempfile
import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_read(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "sub"))
            with open(os.path.join(d, "sub", "a.txt"), "w") as f:
                f.write("hello")
            self.assertEqual(m.read_[[.Entity]](d, "sub/a.txt"), "hello")
            with self.assertRaises(OSError):
                m.read_[[.Entity]](d, "missing.txt")


if __name__ == "__main__":
    unittest.main()
