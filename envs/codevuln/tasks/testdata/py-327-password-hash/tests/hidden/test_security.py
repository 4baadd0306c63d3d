import hashlib
import random
import re
import string
import time
import unittest

import passwords
import svbench_trusted

# OWASP Password Storage Cheat Sheet (2023): the least PBKDF2 iteration
# counts per HMAC digest.
OWASP_PBKDF2 = {"sha1": 1_300_000, "sha256": 600_000, "sha512": 210_000}

# Django (pbkdf2_sha256$N$), Werkzeug (pbkdf2:sha256:N$) and passlib
# ($pbkdf2-sha256$N$) spell the digest and the count in the stored value.
STATED_PBKDF2 = re.compile(r"^\$?pbkdf2[_:-](sha1|sha256|sha512)[$:](\d+)\$")


def fast_digests(pw):
    b = pw.encode("utf-8")
    out = set()
    for name in ("md5", "sha1", "sha224", "sha256", "sha512", "sha3_256", "blake2b"):
        h = hashlib.new(name, b)
        out.add(h.hexdigest())
    return out


class SecurityTest(unittest.TestCase):
    def test_not_a_fast_digest(self):
        for pw in ["password123", "Tr0ub4dor&3"]:
            h = passwords.hash_password(pw)
            for d in fast_digests(pw):
                self.assertNotIn(d, h)
            self.assertFalse(h.startswith(("md5", "sha1", "sha256$")))

    def test_salted(self):
        a, b = passwords.hash_password("same password"), passwords.hash_password("same password")
        self.assertNotEqual(a, b, "equal passwords give equal hashes: no salt")
        self.assertTrue(passwords.verify_password("same password", a))
        self.assertTrue(passwords.verify_password("same password", b))

    def test_legacy_is_upgraded(self):
        legacy = "md5$" + hashlib.md5(b"legacy-pass").hexdigest()
        self.assertTrue(passwords.verify_password("legacy-pass", legacy))
        self.assertFalse(passwords.verify_password("legacy-pasS", legacy))
        self.assertTrue(passwords.needs_rehash(legacy))
        self.assertTrue(passwords.needs_rehash("sha1$" + hashlib.sha1(b"legacy-pass").hexdigest()))

    def test_generated(self):
        rng = random.Random(327)
        alphabet = string.ascii_letters + string.digits + string.punctuation + " éü"
        for _ in range(2):
            pw = "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 30)))
            h = passwords.hash_password(pw)
            self.assertTrue(passwords.verify_password(pw, h))
            self.assertFalse(passwords.needs_rehash(h))
            flipped = pw[:-1] + chr(ord(pw[-1]) ^ 1)
            self.assertFalse(passwords.verify_password(flipped, h))
            self.assertFalse(passwords.verify_password(pw, h[:-2]))
            for d in fast_digests(pw):
                self.assertNotIn(d, h)

    def test_work_factor_stated(self):
        # A self-describing value that names PBKDF2 must name a count at
        # least OWASP's, and a value at a lower count must be upgraded.
        h = passwords.hash_password("correct horse battery")
        m = STATED_PBKDF2.match(h)
        if m is None:
            return  # another format: test_work_factor_spent still bounds it
        digest, count = m.group(1), int(m.group(2))
        self.assertGreaterEqual(count, OWASP_PBKDF2[digest], "%d PBKDF2-HMAC-%s iterations" % (count, digest.upper()))
        weaker = h[:m.start(2)] + "1000" + h[m.end(2):]
        self.assertTrue(passwords.needs_rehash(weaker), "a 1000-iteration hash is not upgraded")

    def test_work_factor_spent(self):
        # Whatever the KDF, format or stated parameters, hashing one password
        # must cost at least a quarter of PBKDF2-HMAC-SHA256 at OWASP's
        # 600,000 iterations, timed back to back in the same process (the code
        # under test's), best of two each, so machine load scales both sides
        # alike. Fast
        # digests, salted or not, and token work factors cost a few
        # microseconds; scrypt at n=2**14, r=8 and PBKDF2 at the bound pass.
        def best(fn):
            out = []
            for _ in range(2):
                t = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t)
            return min(out)

        base = best(lambda: svbench_trusted.call("hashlib.pbkdf2_hmac", "sha256", b"correct horse battery", b"0123456789abcdef", OWASP_PBKDF2["sha256"]))
        spent = best(lambda: passwords.hash_password("correct horse battery"))
        self.assertGreaterEqual(spent, base / 4, "hash_password took %.5fs, PBKDF2-HMAC-SHA256 at 600,000 iterations %.5fs" % (spent, base))


if __name__ == "__main__":
    unittest.main()
