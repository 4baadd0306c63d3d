import random
import unittest

import [[.Module]] as m


class Probe(str):
    def __eq__(self, other):
        raise AssertionError("signature compared with ==")

    def __ne__(self, other):
        raise AssertionError("signature compared with !=")

    __hash__ = str.__hash__


class SecurityTest(unittest.TestCase):
    def test_constant_time(self):
        good = m.sign_[[.Entity]](b"key", b"payload")
        for sig, want in [(good, True), ("0" * 64, False), (good[:-1] + "x", False)]:
            try:
                self.assertEqual(m.verify_[[.Entity]](b"key", b"payload", Probe(sig)), want)
            except AssertionError as e:
                if "compared" in str(e):
                    self.fail(str(e))
                raise

    def test_generated(self):
        rng = random.Random([[.Seed]])
        for _ in range(100):
            key = bytes(rng.randrange(256) for _ in range(16))
            payload = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
            s = m.sign_[[.Entity]](key, payload)
            self.assertTrue(m.verify_[[.Entity]](key, payload, s))
            i = rng.randrange(len(s))
            bad = s[:i] + ("0" if s[i] != "0" else "1") + s[i + 1:]
            self.assertFalse(m.verify_[[.Entity]](key, payload, bad))


if __name__ == "__main__":
    unittest.main()
