"""Request-body handling for the JSON API."""
import json

MAX_BODY = 64 * 1024
MAX_DEPTH = 32


class BodyError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _depth_ok(text, limit):
    # Count bracket nesting outside strings before handing the text to the
    # recursive parser, which would otherwise hit RecursionError.
    depth, in_str, esc = 0, False, False
    for c in text:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "[{":
            depth += 1
            if depth > limit:
                return False
        elif c in "]}":
            depth -= 1
    return True


def read_json(environ, max_bytes=MAX_BODY):
    """The JSON object in the request body."""
    ctype = environ.get("CONTENT_TYPE", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise BodyError(415, "expected application/json")
    raw_len = environ.get("CONTENT_LENGTH", "")
    try:
        length = int(raw_len)
    except (TypeError, ValueError):
        raise BodyError(411, "Content-Length required")
    if length < 0:
        raise BodyError(400, "invalid Content-Length")
    if length > max_bytes:
        raise BodyError(413, "body too large")
    # Read exactly the declared length, already bounded by max_bytes: a
    # client that sends more than it announced is never read past that.
    body = environ["wsgi.input"].read(length)
    if len(body) < length:
        raise BodyError(400, "truncated body")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise BodyError(400, "malformed JSON")
    if not _depth_ok(text, MAX_DEPTH):
        raise BodyError(400, "JSON nested too deeply")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise BodyError(400, "malformed JSON")
    if not isinstance(data, dict):
        raise BodyError(400, "expected a JSON object")
    return data


def create_item(environ):
    """POST /items: returns (status, body dict)."""
    try:
        data = read_json(environ)
    except BodyError as e:
        return e.status, {"error": str(e)}
    name = data.get("name")
    if not isinstance(name, str) or not name:
        return 400, {"error": "name required"}
    return 201, {"name": name, "tags": data.get("tags", [])}
