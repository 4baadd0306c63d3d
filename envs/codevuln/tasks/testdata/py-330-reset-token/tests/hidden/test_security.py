import random
import unittest
from collections import Counter

import resets
import svbench_trusted


def seed(n):
    # The module-level PRNG of the code under test is the one in its own
    # process: seed that one.
    svbench_trusted.call("random.seed", n)


class SecurityTest(unittest.TestCase):
    def test_not_derived_from_random_module_state(self):
        # An attacker who can reproduce the module-level PRNG state (here: by
        # seeding it) must not be able to reproduce tokens or PINs.
        for s in (0, 1, 330, 2**31):
            seed(s)
            a = [resets.new_token() for _ in range(3)] + [resets.new_pin() for _ in range(3)]
            b_store = resets.ResetStore()
            seed(s)
            b = [resets.new_token() for _ in range(3)] + [resets.new_pin() for _ in range(3)]
            self.assertNotEqual(a[:3], b[:3], "tokens repeat after reseeding random")
            self.assertNotEqual(a[3:], b[3:], "PINs repeat after reseeding random")
            seed(s)
            t1 = b_store.issue("x@example.org")
            seed(s)
            t2 = b_store.issue("y@example.org")
            self.assertNotEqual(t1, t2)

    def test_random_getstate_unchanged(self):
        # Drawing from a CSPRNG leaves random's state alone; drawing from
        # random advances it.
        seed(42)
        state = svbench_trusted.call("random.getstate")
        resets.new_token()
        resets.new_pin()
        self.assertEqual(svbench_trusted.call("random.getstate"), state)

    def test_outputs_follow_only_the_os_csprng(self):
        # What makes a token unpredictable from earlier ones is that it is
        # fresh OS randomness and nothing else. Pin the code under test's OS
        # CSPRNG (os.urandom, secrets, SystemRandom, /dev/urandom) to a
        # stream keyed by a seed and stop its clocks: drawing twice under the
        # same seed must give the same tokens and PINs, and another seed
        # other ones. A generator with state of its own (a counter hashed
        # with SHA-256, a private Mersenne Twister, one seeded from the clock
        # or the pid) does not repeat; one that ignores the OS does not
        # change with the seed.
        store = resets.ResetStore()
        runs = []
        for seed in (330, 330, 331):
            svbench_trusted.call("svbench_fixtures.pin_csprng", seed)
            try:
                runs.append(([resets.new_token() for _ in range(3)], [resets.new_pin() for _ in range(3)], store.issue("x@example.org")))
            finally:
                svbench_trusted.call("svbench_fixtures.unpin_csprng")
        (ta, pa, ia), (tb, pb, ib), (tc, pc, ic) = runs
        msg = "%s differ between two draws from the same OS randomness: they depend on state or inputs other than fresh output of the OS CSPRNG"
        self.assertEqual(ta, tb, msg % "tokens")
        self.assertEqual(pa, pb, msg % "PINs")
        self.assertEqual(ia, ib, msg % "issued tokens")
        msg = "%s do not change with the OS randomness"
        self.assertNotEqual(ta, tc, msg % "tokens")
        self.assertNotEqual(pa, pc, msg % "PINs")
        self.assertNotEqual(ia, ic, msg % "issued tokens")

    def test_generated_properties(self):
        rng = random.Random(330)
        tokens = [resets.new_token(rng.choice([16, 32, 48])) for _ in range(400)]
        self.assertEqual(len(set(tokens)), len(tokens))
        for t in tokens:
            self.assertIn(len(t), (16, 32, 48))
            self.assertTrue(set(t) <= set(resets.TOKEN_ALPHABET))
        counts = Counter("".join(tokens))
        self.assertGreaterEqual(len(counts), 60, "tokens do not use the whole alphabet")
        pins = [resets.new_pin() for _ in range(2000)]
        self.assertTrue(all(len(p) == 6 and p.isdigit() for p in pins))
        self.assertGreater(len(set(pins)), 1900)
        firsts = Counter(p[0] for p in pins)
        self.assertEqual(len(firsts), 10)
        store = resets.ResetStore()
        emails = ["u%d@example.org" % i for i in range(50)]
        issued = [(store.issue(e), e) for e in emails]
        rng.shuffle(issued)
        for t, e in issued:
            self.assertEqual(store.redeem(t), e)


if __name__ == "__main__":
    unittest.main()
