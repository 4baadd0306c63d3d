"""Password hashing for the user store."""
import hashlib

MIN_LENGTH = 8


class PasswordError(ValueError):
    pass


def _check(password):
    if not isinstance(password, str) or len(password) < MIN_LENGTH:
        raise PasswordError("password must be at least %d characters" % MIN_LENGTH)


def hash_password(password):
    """Value to store for password."""
    _check(password)
    return "md5$" + hashlib.md5(password.encode("utf-8")).hexdigest()


def verify_password(password, stored):
    """True if password matches the stored value."""
    if not isinstance(password, str) or not isinstance(stored, str):
        return False
    scheme, _, digest = stored.partition("$")
    if scheme == "md5":
        return hashlib.md5(password.encode("utf-8")).hexdigest() == digest
    return False


def needs_rehash(stored):
    """True if stored should be replaced by hash_password on next login."""
    return not stored.startswith("md5$")
