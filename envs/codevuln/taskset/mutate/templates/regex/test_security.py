import random
import re
import subprocess
import sys
import unittest

import svbench_trusted

import [[.Module]] as m

REF = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


ATTACKS = ["'a' * 40 + '!'", "'ab1' * 15 + '-'", "'a-' * 20 + '!'", "'0' * 60 + 'A'"]


class SecurityTest(unittest.TestCase):
    def test_linear_time(self):
        # A catastrophic regex cannot be interrupted from inside the
        # interpreter: the call must answer from another process in time.
        if svbench_trusted.bridged():
            # svbench runs the code under test in its own process already.
            for expr in ATTACKS:
                try:
                    with svbench_trusted.deadline(3):
                        got = m.is_valid_[[.Entity]]_slug(eval(expr, {}))
                except TimeoutError:
                    self.fail("slug validation of %s took more than 3 seconds" % expr)
                self.assertIs(got, False, expr)
            return
        code = "import [[.Module]] as m\n" + "".join("assert m.is_valid_[[.Entity]]_slug(%s) is False\n" % e for e in ATTACKS)
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
