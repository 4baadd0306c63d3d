"""Signed webhook deliveries."""
import hashlib
import hmac

TOLERANCE = 300
PREFIX = "sha256="


def sign(secret, timestamp, body):
    """Signature header value for a delivery; secret and body are bytes."""
    msg = str(int(timestamp)).encode() + b"." + body
    return PREFIX + hmac.new(secret, msg, hashlib.sha256).hexdigest()


def verify(secret, header, timestamp, body, now):
    """True if header is a valid, fresh signature of body."""
    if not isinstance(header, str) or not header.startswith(PREFIX):
        return False
    try:
        ts = int(timestamp)
    except (TypeError, ValueError):
        return False
    if abs(now - ts) > TOLERANCE:
        return False
    expected = sign(secret, ts, body)
    # compare_digest's running time does not depend on where the inputs differ.
    return hmac.compare_digest(header.lower().encode("utf-8"), expected.encode("ascii"))
