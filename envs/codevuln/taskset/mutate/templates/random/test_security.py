import random
import unittest

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_unpredictable(self):
        for seed in (0, 1, [[.Seed]]):
            random.seed(seed)
            a = m.new_[[.Entity]]_token()
            random.seed(seed)
            b = m.new_[[.Entity]]_token()
            self.assertNotEqual(a, b, "token reproducible by reseeding random")
        random.seed(5)
        state = random.getstate()
        m.new_[[.Entity]]_token()
        self.assertEqual(random.getstate(), state, "token drawn from the random module")

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
