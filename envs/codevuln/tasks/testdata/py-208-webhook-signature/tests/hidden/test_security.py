import hmac
import random
import unittest
from unittest import mock

import webhooks

SECRET = b"whsec_hidden"


class Probe(str):
    """A header whose ordinary comparison is observable: a short-circuiting
    == or != on it (or on its lower-cased copy) is what leaks timing."""

    def __eq__(self, other):
        raise AssertionError("signature compared with ==")

    def __ne__(self, other):
        raise AssertionError("signature compared with !=")

    __hash__ = str.__hash__

    def lower(self):
        return Probe(str.lower(self))

    def strip(self, *a):
        return Probe(str.strip(self, *a))


class SecurityTest(unittest.TestCase):
    def test_comparison_is_constant_time(self):
        good = webhooks.sign(SECRET, 1700000000, b"body")
        calls = []
        real = hmac.compare_digest

        def spy(a, b):
            calls.append((a, b))
            return real(a, b)

        with mock.patch.object(hmac, "compare_digest", spy):
            for header, want in [(good, True), (good[:-1] + ("0" if good[-1] != "0" else "1"), False),
                                 ("sha256=" + "0" * 64, False), (good.upper().replace("SHA256=", "sha256="), True)]:
                try:
                    got = webhooks.verify(SECRET, Probe(header), 1700000000, b"body", 1700000000)
                except AssertionError as e:
                    self.fail(str(e))
                self.assertEqual(got, want, header)
        self.assertTrue(calls, "hmac.compare_digest was never used")

    def test_generated_deliveries(self):
        rng = random.Random(208)
        for _ in range(200):
            body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 64)))
            ts = rng.randint(1_600_000_000, 1_800_000_000)
            now = ts + rng.randint(-400, 400)
            h = webhooks.sign(SECRET, ts, body)
            fresh = abs(now - ts) <= 300
            self.assertEqual(webhooks.verify(SECRET, h, ts, body, now), fresh)
            i = rng.randrange(7, len(h))
            forged = h[:i] + rng.choice([c for c in "0123456789abcdef" if c != h[i]]) + h[i + 1:]
            self.assertFalse(webhooks.verify(SECRET, forged, ts, body, now))
            self.assertFalse(webhooks.verify(SECRET, h[:-1], ts, body, now))


if __name__ == "__main__":
    unittest.main()
