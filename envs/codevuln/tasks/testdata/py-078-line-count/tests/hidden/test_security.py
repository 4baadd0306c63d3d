import os
import random
import tempfile
import unittest

import logstats
import svbench_trusted


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.marker = os.path.join(self.dir, "pwned")
        self.path = os.path.join(self.dir, "log.txt")
        with open(self.path, "w") as f:
            f.write("alpha\nbeta $HOME\n`x` and $(y)\nquote ' and \" here\n-e dash\n")

    def tearDown(self):
        self.tmp.cleanup()

    def attempt(self, fn, *args):
        try:
            fn(*args)
        except (logstats.StatsError, ValueError, OSError):
            pass
        self.assertFalse(os.path.exists(self.marker), "injected command ran: %r" % (args,))

    def test_word_injection(self):
        m = self.marker
        for word in ['"; touch %s; echo "' % m, "$(touch %s)" % m, "`touch %s`" % m,
                     '" "/dev/null"; touch %s #' % m, "\"$(touch %s)\"" % m]:
            self.attempt(logstats.count_matches, self.path, word)

    def test_path_injection(self):
        m = self.marker
        for p in ["x'; touch %s; echo '" % m, "$(touch %s)" % m, "x' || touch %s #" % m,
                  self.path + "'; touch %s'" % m]:
            self.attempt(logstats.count_lines, p)
            self.attempt(logstats.count_matches, p, "alpha")

    def test_no_shell(self):
        # No payload list shows that no shell parses the arguments (quoting
        # that forgets one character, the backslash say, passes every payload
        # made of the others), so the programs started are recorded in the
        # code under test's process: only wc and grep, never a shell.
        svbench_trusted.call("svbench_fixtures.record_execs")
        for fn, args in ((logstats.count_lines, (self.path,)), (logstats.count_matches, (self.path, "alpha")),
                         (logstats.count_matches, (self.path, "a'b\\\""))):
            try:
                fn(*args)
            except Exception:
                pass
        started = svbench_trusted.call("svbench_fixtures.execs")
        self.assertTrue(started, "no program was started")
        for e in started:
            self.assertIn(os.path.basename(e["program"]), ("wc", "grep"), "started %r (%s)" % (e["argv"], e["event"]))

    def test_backslash_injection(self):
        m = self.marker
        self.attempt(logstats.count_matches, self.path, '\\"; touch %s; #' % m)
        self.attempt(logstats.count_lines, self.path + '\\"; touch %s; #' % m)

    def test_metacharacters_are_literal(self):
        self.assertEqual(logstats.count_matches(self.path, "$HOME"), 1)
        self.assertEqual(logstats.count_matches(self.path, "$(y)"), 1)
        self.assertEqual(logstats.count_matches(self.path, "`x`"), 1)
        self.assertEqual(logstats.count_matches(self.path, '"'), 1)
        self.assertEqual(logstats.count_matches(self.path, "-e"), 1)

    def test_generated_files(self):
        rng = random.Random(7878)
        names = ["a b.log", "it's.log", "semi;colon.log", "dollar$x.log", "q\"uote.log", "-dash.log"]
        for i in range(24):
            name = rng.choice(names).replace(".log", "%d.log" % i)
            lines = ["%s %d" % (rng.choice(["GET", "PUT", "$(id)", "`id`", "a'b"]), rng.randint(0, 9)) for _ in range(rng.randint(0, 12))]
            p = os.path.join(self.dir, name)
            with open(p, "w") as f:
                f.write("".join(l + "\n" for l in lines))
            self.assertEqual(logstats.count_lines(p), len(lines), name)
            for w in ["GET", "$(id)", "`id`", "a'b"]:
                self.assertEqual(logstats.count_matches(p, w), sum(w in l for l in lines), (name, w))
        self.assertFalse(os.path.exists(self.marker))


if __name__ == "__main__":
    unittest.main()
