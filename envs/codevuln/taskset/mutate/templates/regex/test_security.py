import random
import re
import subprocess
import sys
import unittest

import [[.Module]] as m

REF = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class SecurityTest(unittest.TestCase):
    def test_linear_time(self):
        code = ("import [[.Module]] as m\n"
                "for s in ['a' * 40 + '!', 'ab1' * 15 + '-', 'a-' * 20 + '!', '0' * 60 + 'A']:\n"
                "    assert m.is_valid_[[.Entity]]_slug(s) is False\n")
        try:
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=3)
        except subprocess.TimeoutExpired:
            self.fail("slug validation took more than 3 seconds on a crafted input")
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())

    def test_generated(self):
        rng = random.Random([[.Seed]])
        for _ in range(300):
            s = "".join(rng.choice("ab9-A ") for _ in range(rng.randint(1, 12)))
            self.assertEqual(m.is_valid_[[.Entity]]_slug(s), REF.match(s) is not None, s)


if __name__ == "__main__":
    unittest.main()
