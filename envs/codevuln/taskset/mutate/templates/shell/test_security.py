import os
import random
import subprocess
import tempfile
import unittest

import svbench_trusted

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_injection(self):
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "pwned")
            for p in ["x'; touch %s; echo '" % marker, "$(touch %s)" % marker, "x' || touch %s #" % marker, "`touch %s`" % marker,
                      'x\\"; touch %s; #' % marker, "x\\\\'; touch %s; #" % marker, "x\ntouch %s\n" % marker]:
                try:
                    m.[[.Entity]]_word_count(os.path.join(d, p))
                except (subprocess.CalledProcessError, OSError, ValueError, IndexError):
                    pass
                self.assertFalse(os.path.exists(marker), p)

    def test_no_shell(self):
        # No payload list shows that no shell parses the file name (quoting
        # that forgets one character passes every payload made of the
        # others), so the programs started are recorded in the code under
        # test's process: wc, and never a shell.
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a 'b' \"c\" $d.txt")
            with open(p, "w") as f:
                f.write("one two")
            svbench_trusted.call("svbench_fixtures.record_execs")
            try:
                m.[[.Entity]]_word_count(p)
            except Exception:
                pass
            started = svbench_trusted.call("svbench_fixtures.execs")
        self.assertTrue(started, "no program was started")
        for e in started:
            self.assertEqual(os.path.basename(e["program"]), "wc", "started %r (%s)" % (e["argv"], e["event"]))

    def test_generated(self):
        rng = random.Random([[.Seed]])
        with tempfile.TemporaryDirectory() as d:
            for i in range(15):
                name = "".join(rng.choice("ab '$;`\"\\") for _ in range(rng.randint(1, 8))) + "%d.txt" % i
                words = rng.randint(0, 30)
                with open(os.path.join(d, name), "w") as f:
                    f.write(" ".join("w%d" % j for j in range(words)))
                self.assertEqual(m.[[.Entity]]_word_count(os.path.join(d, name)), words, name)


if __name__ == "__main__":
    unittest.main()
