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

    def test_no_mersenne_twister(self):
        # A private random.Random() is out of reach of the reseeding above,
        # yet still a Mersenne Twister whose whole state follows from 624
        # observed outputs. Pin every such generator in the code under
        # test's process, and the clocks seeds come from: only output of
        # the OS CSPRNG differs between the two pinned runs.
        runs = []
        for _ in range(2):
            svbench_trusted.call("svbench_fixtures.pin_prngs", 330)
            try:
                store = resets.ResetStore()
                runs.append(([resets.new_token() for _ in range(3)], [resets.new_pin() for _ in range(3)], store.issue("x@example.org")))
            finally:
                svbench_trusted.call("svbench_fixtures.unpin_prngs")
        (ta, pa, ia), (tb, pb, ib) = runs
        self.assertNotEqual(ta, tb, "tokens repeat once non-cryptographic generators are pinned")
        self.assertNotEqual(pa, pb, "PINs repeat once non-cryptographic generators are pinned")
        self.assertNotEqual(ia, ib, "issued tokens repeat once non-cryptographic generators are pinned")

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
