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
    return header.lower() == expected
