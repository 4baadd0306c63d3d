import ast
import random
import unittest

import svbench_trusted

import [[.Module]] as m


def short_circuit_compares(source):
    """Whether verify_[[.Entity]] compares its signature (or anything derived
    from it) with == or !=, or never calls a constant-time compare_digest:
    the code under test runs in another process, where no spy or probing
    str subclass can follow it, so how it compares is read off its source."""
    tree = ast.parse(source)
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "verify_[[.Entity]]"), None)
    if fn is None or len(fn.args.args) < 3:
        return True
    tainted = {fn.args.args[2].arg}
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
    def test_constant_time(self):
        self.assertFalse(short_circuit_compares(svbench_trusted.source("[[.Module]]")),
                         "the signature is compared with == or != in verify_[[.Entity]], or compare_digest is never called")
        good = m.sign_[[.Entity]](b"key", b"payload")
        for sig, want in [(good, True), ("0" * 64, False), (good[:-1] + "x", False), (good.upper(), False), (None, False)]:
            self.assertEqual(m.verify_[[.Entity]](b"key", b"payload", sig), want, sig)

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
