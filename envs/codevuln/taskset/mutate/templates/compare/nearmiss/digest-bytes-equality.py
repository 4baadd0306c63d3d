"""Signed [[.Entity]] links."""
import binascii
import hashlib
import hmac


def sign_[[.Entity]](key, payload):
    return hmac.new(key, payload, hashlib.sha256).hexdigest()


def verify_[[.Entity]](key, payload, signature):
    """True if signature is the hex HMAC-SHA256 of payload under key."""
    if not isinstance(signature, str):
        return False
    try:
        given = binascii.unhexlify(signature)
    except (binascii.Error, ValueError):
        return False
    # Comparing raw digests instead of their text.
    return hmac.new(key, payload, hashlib.sha256).digest() == given
