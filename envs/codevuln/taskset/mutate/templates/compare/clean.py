"""Signed [[.Entity]] links."""
import hashlib
import hmac


def sign_[[.Entity]](key, payload):
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def verify_[[.Entity]](key, payload, signature):
    """True if signature is the hex HMAC-SHA256 of payload under key."""
    if not isinstance(signature, str):
        return False
    return hmac.compare_digest(sign_[[.Entity]](key, payload).encode("ascii"), signature.encode("utf-8"))
