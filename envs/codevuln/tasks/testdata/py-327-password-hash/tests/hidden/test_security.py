import hashlib
import random
import string
import unittest

import passwords


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


if __name__ == "__main__":
    unittest.main()
