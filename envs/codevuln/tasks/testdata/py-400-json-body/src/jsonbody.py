"""Request-body handling for the JSON API."""
import json

MAX_BODY = 64 * 1024
MAX_DEPTH = 32


class BodyError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def read_json(environ, max_bytes=MAX_BODY):
    """The JSON object in the request body."""
    ctype = environ.get("CONTENT_TYPE", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise BodyError(415, "expected application/json")
    body = environ["wsgi.input"].read()
    if len(body) > max_bytes:
        raise BodyError(413, "body too large")
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
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
