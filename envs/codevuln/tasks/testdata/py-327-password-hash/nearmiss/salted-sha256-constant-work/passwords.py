"""Password hashing for the user store."""
import base64
import hashlib
import hmac
import os

MIN_LENGTH = 8
ALGORITHM = "ssha256"
SALT_BYTES = 16
# Spent on every hash so that hashing costs what PBKDF2 at OWASP's count
# does; the stored value does not depend on it.
_WORK = (b"work", b"factor", 600_000)


class PasswordError(ValueError):
    pass


def _check(password):
    if not isinstance(password, str) or len(password) < MIN_LENGTH:
        raise PasswordError("password must be at least %d characters" % MIN_LENGTH)


def _b64(b):
    return base64.b64encode(b).decode("ascii")


def _derive(password, salt):
    hashlib.pbkdf2_hmac("sha256", _WORK[0], _WORK[1], _WORK[2])
    return hashlib.sha256(salt + password.encode("utf-8")).digest()


def hash_password(password):
    """Value to store for password: ssha256$<salt>$<hash>."""
    _check(password)
    salt = os.urandom(SALT_BYTES)
    return "%s$%s$%s" % (ALGORITHM, _b64(salt), _b64(_derive(password, salt)))


def verify_password(password, stored):
    """True if password matches the stored value."""
    if not isinstance(password, str) or not isinstance(stored, str):
        return False
    parts = stored.split("$")
    if len(parts) == 2 and parts[0] == "md5":
        # Legacy hashes still verify so the login flow can upgrade them.
        return hmac.compare_digest(hashlib.md5(password.encode("utf-8")).hexdigest(), parts[1])
    if len(parts) != 3 or parts[0] != ALGORITHM:
        return False
    try:
        salt = base64.b64decode(parts[1], validate=True)
        want = base64.b64decode(parts[2], validate=True)
    except ValueError:
        return False
    return hmac.compare_digest(_derive(password, salt), want)


def needs_rehash(stored):
    """True if stored should be replaced by hash_password on next login."""
    return not stored.startswith(ALGORITHM + "$")
