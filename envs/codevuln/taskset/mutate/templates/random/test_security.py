import random
import unittest

import svbench_trusted

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_not_from_the_random_module(self):
        # The random module that matters is the one in the code under
        # test's process: reseeding it must not reproduce tokens, and
        # drawing a token must leave its state alone.
        for seed in (0, 1, [[.Seed]]):
            svbench_trusted.call("random.seed", seed)
            a = m.new_[[.Entity]]_token()
            svbench_trusted.call("random.seed", seed)
            b = m.new_[[.Entity]]_token()
            self.assertNotEqual(a, b, "token reproducible by reseeding random")
        svbench_trusted.call("random.seed", 5)
        state = svbench_trusted.call("random.getstate")
        m.new_[[.Entity]]_token()
        self.assertEqual(svbench_trusted.call("random.getstate"), state, "token drawn from the random module")

    def test_tokens_are_fresh_os_randomness(self):
        # A token must be fresh OS randomness and nothing else. With the
        # code under test's OS CSPRNG pinned to a stream keyed by a seed
        # (and its clocks stopped), the same seed must give the same tokens
        # and another seed other ones: a generator with state of its own (a
        # hashed counter, a private Mersenne Twister, one seeded from the
        # clock) does not repeat, one that ignores the OS does not change.
        runs = []
        for seed in ([[.Seed]], [[.Seed]], [[.Seed]] + 1):
            svbench_trusted.call("svbench_fixtures.pin_csprng", seed)
            try:
                runs.append([m.new_[[.Entity]]_token(), m.new_[[.Entity]]_token(12)])
            finally:
                svbench_trusted.call("svbench_fixtures.unpin_csprng")
        self.assertEqual(runs[0], runs[1], "tokens differ between two draws from the same OS randomness: they depend on state or inputs other than fresh output of the OS CSPRNG")
        self.assertNotEqual(runs[0], runs[2], "tokens do not change with the OS randomness")

    def test_generated(self):
        rng = random.Random([[.Seed]])
        seen = set()
        for _ in range(300):
            n = rng.randint(8, 48)
            t = m.new_[[.Entity]]_token(n)
            self.assertEqual(len(t), n)
            self.assertTrue(t.isalnum() and t.isascii())
            seen.add(t)
        self.assertEqual(len(seen), 300)


if __name__ == "__main__":
    unittest.main()
