import base64
import binascii
import hashlib
import random
import re
import string
import unittest

import passwords

# OWASP Password Storage Cheat Sheet (2023): the least PBKDF2 iteration
# counts per HMAC digest, and the scrypt settings it lists as equivalent
# (N=2^17 r=8 p=1 down to N=2^13 r=8 p=10): N*r*p and the memory N*r must
# reach the weakest of them.
OWASP_PBKDF2 = {"sha1": 1_300_000, "sha256": 600_000, "sha512": 210_000}
OWASP_SCRYPT_NRP = 2**13 * 8 * 10
OWASP_SCRYPT_NR = 2**13 * 8

# Self-describing formats whose function and parameters can be read back
# from the stored value: PBKDF2 as Django (pbkdf2_sha256$N$salt$hash),
# passlib ($pbkdf2-sha256$N$salt$hash) and Werkzeug (pbkdf2:sha256:N$salt$hash)
# spell it; scrypt as Werkzeug (scrypt:N:r:p$salt$hash), passlib
# ($scrypt$ln=log2(N),r=R,p=P$salt$hash) or scrypt$N$r$p$salt$hash.
PBKDF2 = re.compile(r"^\$?pbkdf2[_:-](sha1|sha256|sha512)[$:](\d+)\$([^$]+)\$([^$]+)$")
SCRYPT = re.compile(r"^\$?scrypt[$:](\d+)[$:](\d+)[$:](\d+)\$([^$]+)\$([^$]+)$")
SCRYPT_LN = re.compile(r"^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$")

MIN_SALT = 16  # bytes of salt given to the KDF
MIN_KEY = 16  # bytes of derived key stored


def fast_digests(pw):
    b = pw.encode("utf-8")
    out = set()
    for name in ("md5", "sha1", "sha224", "sha256", "sha512", "sha3_256", "blake2b"):
        h = hashlib.new(name, b)
        out.add(h.hexdigest())
    return out


def decodings(text):
    """The byte strings text may stand for: base64 (standard, URL-safe,
    passlib's '.' alphabet, padded or not), hex, or the text itself (Django
    and Werkzeug hand the salt string to the KDF as it is)."""
    out = []
    pad = "=" * (-len(text) % 4)
    for decode in (lambda s: base64.b64decode(s + pad, validate=True),
                   lambda s: base64.b64decode(s + pad, altchars=b"-_", validate=True),
                   lambda s: base64.b64decode(s.replace(".", "+") + pad, validate=True),
                   bytes.fromhex):
        try:
            b = decode(text)
        except (ValueError, binascii.Error):
            continue
        if b not in out:
            out.append(b)
    raw = text.encode("utf-8")
    if raw not in out:
        out.append(raw)
    return out


class Stored:
    """A stored value read back: the KDF, its work parameters and a way to
    recompute it here, in the tests' process, for a password and salt."""

    def __init__(self, value):
        self.value = value
        self.kdf = None
        m = PBKDF2.match(value)
        if m:
            digest, n = m.group(1), int(m.group(2))
            self.kdf = "PBKDF2-HMAC-%s" % digest.upper()
            self.work_ok = n >= OWASP_PBKDF2[digest]
            self.work = "%d iterations (OWASP: %d)" % (n, OWASP_PBKDF2[digest])
            self.derive = lambda pw, salt, size: hashlib.pbkdf2_hmac(digest, pw, salt, n, size)
            self.count_span = m.span(2)
            self.salt_text, self.key_text = m.group(3), m.group(4)
            return
        for rx, log in ((SCRYPT, False), (SCRYPT_LN, True)):
            m = rx.match(value)
            if not m:
                continue
            n, r, p = (int(g) for g in m.group(1, 2, 3))
            if log:
                n = 2**n if n < 64 else 0
            self.kdf = "scrypt"
            self.work_ok = n > 1 and n & (n - 1) == 0 and n * r * p >= OWASP_SCRYPT_NRP and n * r >= OWASP_SCRYPT_NR and r * p < 2**30
            self.work = "N=%d r=%d p=%d (OWASP: N*r*p >= %d)" % (n, r, p, OWASP_SCRYPT_NRP)
            # scrypt needs about 128*r*(N+p) bytes; a value asking for more
            # than 512 MiB is not recomputed here (and fails).
            need = 128 * r * (n + p + 2)
            self.derive = lambda pw, salt, size: hashlib.scrypt(pw, salt=salt, n=n, r=r, p=p, maxmem=need + (1 << 20), dklen=size) if need <= 512 << 20 else b""
            self.count_span = m.span(1)
            self.salt_text, self.key_text = m.group(4), m.group(5)
            return

    def weaker(self):
        """The same value with the work factor lowered to a legacy one."""
        a, b = self.count_span
        low = "1000" if self.kdf.startswith("PBKDF2") else ("10" if self.value.startswith("$scrypt$ln=") else "1024")
        return self.value[:a] + low + self.value[b:]

    def derived_from(self, password):
        """True when the stored key is the KDF of password under the stored
        salt and parameters (computed here, so nothing the code under test
        does about timing or constants enters the verdict)."""
        keys = [k for k in decodings(self.key_text) if len(k) >= MIN_KEY]
        if not keys:
            return False
        size = max(len(k) for k in keys)
        pw = password.encode("utf-8")
        for salt in decodings(self.salt_text):
            if len(salt) < MIN_SALT:
                continue
            got = self.derive(pw, salt, size)
            # PBKDF2 and scrypt keys of different lengths share a prefix.
            if any(got[:len(k)] == k for k in keys):
                return True
        return False


class SecurityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Hashing is slow on purpose (each call well over 0.1 s), and the
        # suite runs under one time limit: two values of one generated
        # password are made once and read by every test, and four KDF runs
        # in all (three here, one in the tests' process) decide the verdict.
        rng = random.Random(327)
        alphabet = string.ascii_letters + string.digits + string.punctuation + " éü"
        cls.password = "".join(rng.choice(alphabet) for _ in range(rng.randint(12, 30))) + "é"
        cls.a = passwords.hash_password(cls.password)
        cls.b = passwords.hash_password(cls.password)

    def test_not_a_fast_digest(self):
        for h in (self.a, self.b):
            self.assertIsInstance(h, str)
            for d in fast_digests(self.password):
                self.assertNotIn(d, h)
            self.assertFalse(h.startswith(("md5", "sha1", "sha256$")))

    def test_stored_value_is_a_slow_kdf_of_the_password(self):
        # The property is read off the stored value: it must name a KDF and
        # its parameters, the parameters must reach OWASP's work factor, and
        # recomputing that KDF here from the password and the stored salt
        # must give the stored key. A salted fast digest, a stated count that
        # was not the one used, or time spent on anything but this password
        # fail; how long hash_password takes does not matter.
        s = Stored(self.a)
        self.assertIsNotNone(s.kdf, "%r does not name PBKDF2 or scrypt with its parameters in a format these tests read (e.g. pbkdf2_sha256$<iterations>$<salt>$<hash>)" % self.a)
        self.assertTrue(s.work_ok, "%s at %s" % (s.kdf, s.work))
        self.assertTrue(s.derived_from(self.password), "%r is not %s of the password with the stored salt (at least %d bytes) and parameters" % (self.a, s.kdf, MIN_SALT))

    def test_salted(self):
        self.assertNotEqual(self.a, self.b, "equal passwords give equal hashes: no salt")
        sa, sb = Stored(self.a), Stored(self.b)
        if sa.kdf is not None and sb.kdf is not None:
            self.assertNotEqual(sa.salt_text, sb.salt_text, "the same salt for two hashes")

    def test_verify(self):
        # (The behavioural tests check that a wrong password is refused.)
        self.assertTrue(passwords.verify_password(self.password, self.b))
        self.assertFalse(passwords.needs_rehash(self.a))

    def test_legacy_is_upgraded(self):
        legacy = "md5$" + hashlib.md5(b"legacy-pass").hexdigest()
        self.assertTrue(passwords.verify_password("legacy-pass", legacy))
        self.assertFalse(passwords.verify_password("legacy-pasS", legacy))
        self.assertTrue(passwords.needs_rehash(legacy))
        self.assertTrue(passwords.needs_rehash("sha1$" + hashlib.sha1(b"legacy-pass").hexdigest()))

    def test_weaker_work_factor_is_upgraded(self):
        s = Stored(self.a)
        if s.kdf is None:
            self.fail("%r: no work factor to read" % self.a)
        self.assertTrue(passwords.needs_rehash(s.weaker()), "a hash at a legacy work factor is not upgraded: %r" % s.weaker())


if __name__ == "__main__":
    unittest.main()
