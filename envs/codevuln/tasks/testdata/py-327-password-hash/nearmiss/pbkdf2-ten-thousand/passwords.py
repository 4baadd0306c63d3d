"""Password hashing for the user store."""
import base64
import hashlib
import hmac
import os

MIN_LENGTH = 8
ALGORITHM = "pbkdf2_sha256"
ITERATIONS = 10_000
SALT_BYTES = 16


class PasswordError(ValueError):
    pass


def _check(password):
    if not isinstance(password, str) or len(password) < MIN_LENGTH:
        raise PasswordError("password must be at least %d characters" % MIN_LENGTH)


def _b64(b):
    return base64.b64encode(b).decode("ascii")


def _derive(password, salt, iterations):
    return hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, iterations)


def hash_password(password):
    """Value to store for password: pbkdf2_sha256$<iterations>$<salt>$<hash>."""
    _check(password)
    salt = os.urandom(SALT_BYTES)
    return "%s$%d$%s$%s" % (ALGORITHM, ITERATIONS, _b64(salt), _b64(_derive(password, salt, ITERATIONS)))


def verify_password(password, stored):
    """True if password matches the stored value."""
    if not isinstance(password, str) or not isinstance(stored, str):
        return False
    parts = stored.split("$")
    if len(parts) == 2 and parts[0] == "md5":
        # Legacy hashes still verify so the login flow can upgrade them.
        return hmac.compare_digest(hashlib.md5(password.encode("utf-8")).hexdigest(), parts[1])
    if len(parts) != 4 or parts[0] != ALGORITHM:
        return False
    try:
        iterations = int(parts[1])
        salt = base64.b64decode(parts[2], validate=True)
        want = base64.b64decode(parts[3], validate=True)
    except ValueError:
        return False
    if not 1000 <= iterations <= 10_000_000:
        return False
    return hmac.compare_digest(_derive(password, salt, iterations), want)


def needs_rehash(stored):
    """True if stored should be replaced by hash_password on next login."""
    parts = stored.split("$")
    return len(parts) != 4 or parts[0] != ALGORITHM or parts[1] != str(ITERATIONS)
