import hmac
import random
import unittest
from unittest import mock

import webhooks

try:
    import svbench_trusted  # present when svbench runs the suite
except ImportError:
    svbench_trusted = None

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


def short_circuit_compares(source):
    """Whether verify() compares its header (or anything derived from it)
    with == / != , or never calls a constant-time compare_digest."""
    import ast
    tree = ast.parse(source)
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "verify"), None)
    if fn is None or len(fn.args.args) < 2:
        return True
    tainted = {fn.args.args[1].arg}
    changed = True
    while changed:
        changed = False
        for n in ast.walk(fn):
            if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                value = n.value
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                if value is not None and any(isinstance(x, ast.Name) and x.id in tainted for x in ast.walk(value)):
                    for tgt in targets:
                        for x in ast.walk(tgt):
                            if isinstance(x, ast.Name) and x.id not in tainted:
                                tainted.add(x.id)
                                changed = True
    uses_digest = False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "compare_digest":
                uses_digest = True
        if isinstance(n, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in n.ops):
            operands = [n.left] + list(n.comparators)
            if any(isinstance(x, ast.Name) and x.id in tainted for o in operands for x in ast.walk(o)):
                return True
    return not uses_digest


class SecurityTest(unittest.TestCase):
    def test_comparison_is_constant_time(self):
        good = webhooks.sign(SECRET, 1700000000, b"body")
        cases = [(good, True), (good[:-1] + ("0" if good[-1] != "0" else "1"), False),
                 ("sha256=" + "0" * 64, False), (good.upper().replace("SHA256=", "sha256="), True)]
        if svbench_trusted is not None and svbench_trusted.bridged():
            # The code under test runs in another process, where neither a
            # spy nor a probing str subclass can follow it: read how verify
            # compares instead (its source is data here), then check results.
            self.assertFalse(short_circuit_compares(svbench_trusted.source("webhooks")),
                             "the signature is compared with == or != in verify")
            for header, want in cases:
                self.assertEqual(webhooks.verify(SECRET, header, 1700000000, b"body", 1700000000), want, header)
            return
        calls = []
        real = hmac.compare_digest

        def spy(a, b):
            calls.append((a, b))
            return real(a, b)

        with mock.patch.object(hmac, "compare_digest", spy):
            for header, want in cases:
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
