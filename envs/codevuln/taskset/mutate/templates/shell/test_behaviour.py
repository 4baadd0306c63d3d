import os
import tempfile
import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_count(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "my file.txt")
            with open(p, "w") as f:
                f.write("one two\nthree\n")
            self.assertEqual(m.[[.Entity]]_word_count(p), 3)


if __name__ == "__main__":
    unittest.main()
