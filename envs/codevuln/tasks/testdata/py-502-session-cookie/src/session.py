"""Cookie-backed session storage."""
import base64
import pickle
import zlib

MAX_COOKIE = 4096


def dump_session(data):
    """Serialise a session dict into a cookie value."""
    if not isinstance(data, dict):
        raise TypeError("session must be a dict")
    raw = zlib.compress(pickle.dumps(data, protocol=4))
    cookie = base64.urlsafe_b64encode(raw).decode("ascii")
    if len(cookie) > MAX_COOKIE:
        raise ValueError("session too large for a cookie")
    return cookie


def load_session(cookie):
    """The session dict stored in cookie, or None if it is missing or malformed."""
    if not cookie or len(cookie) > MAX_COOKIE:
        return None
    try:
        raw = zlib.decompress(base64.urlsafe_b64decode(cookie.encode("ascii")))
        data = pickle.loads(raw)
    except Exception:
        return None
    return data if isinstance(data, dict) else None
