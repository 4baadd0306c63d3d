"""Cookie-backed session storage."""
import base64
import json
import zlib

MAX_COOKIE = 4096
MAX_RAW = 64 * 1024


def dump_session(data):
    """Serialise a session dict into a cookie value."""
    if not isinstance(data, dict):
        raise TypeError("session must be a dict")
    # JSON can only describe data, never objects with behaviour.
    raw = zlib.compress(json.dumps(data, separators=(",", ":"), allow_nan=False).encode("utf-8"))
    cookie = base64.urlsafe_b64encode(raw).decode("ascii")
    if len(cookie) > MAX_COOKIE:
        raise ValueError("session too large for a cookie")
    return cookie


def load_session(cookie):
    """The session dict stored in cookie, or None if it is missing or malformed."""
    if not cookie or len(cookie) > MAX_COOKIE:
        return None
    try:
        d = zlib.decompressobj()
        raw = d.decompress(base64.urlsafe_b64decode(cookie.encode("ascii")), MAX_RAW)
        if d.unconsumed_tail:
            return None
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeError, zlib.error):
        return None
    return data if isinstance(data, dict) else None
