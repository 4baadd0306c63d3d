import os
import random
import subprocess
import tempfile
import unittest

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_injection(self):
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "pwned")
            for p in ["x'; touch %s; echo '" % marker, "$(touch %s)" % marker, "x' || touch %s #" % marker, "`touch %s`" % marker]:
                try:
                    m.[[.Entity]]_word_count(os.path.join(d, p))
                except (subprocess.CalledProcessError, OSError, ValueError, IndexError):
                    pass
                self.assertFalse(os.path.exists(marker), p)

    def test_generated(self):
        rng = random.Random([[.Seed]])
        with tempfile.TemporaryDirectory() as d:
            for i in range(15):
                name = "".join(rng.choice("ab '$;`\"") for _ in range(rng.randint(1, 8))) + "%d.txt" % i
                words = rng.randint(0, 30)
                with open(os.path.join(d, name), "w") as f:
                    f.write(" ".join("w%d" % j for j in range(words)))
                self.assertEqual(m.[[.Entity]]_word_count(os.path.join(d, name)), words, name)


if __name__ == "__main__":
    unittest.main()
