"""Serialise [[.Entity]] state for the client to send back later."""
import base64
import json


def dump_[[.Entity]](data):
    return base64.b64encode(json.dumps(data).encode("utf-8")).decode("ascii")


def load_[[.Entity]](text):
    """The dict stored in text, or None if it is malformed."""
    try:
        data = json.loads(base64.b64decode(text))
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None
