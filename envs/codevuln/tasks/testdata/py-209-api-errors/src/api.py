"""WSGI front of the orders API."""
import json
import traceback
import uuid


class NotFound(Exception):
    pass


def _respond(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))])
    return [data]


def make_app(fetch_order, logger):
    """fetch_order(order_id: int) -> dict; logger: a logging.Logger."""

    def application(environ, start_response):
        request_id = uuid.uuid4().hex[:12]
        path = environ.get("PATH_INFO", "")
        if environ.get("REQUEST_METHOD") != "GET" or not path.startswith("/orders/"):
            return _respond(start_response, "404 Not Found", {"error": "not found", "request_id": request_id})
        raw = path[len("/orders/"):]
        if not raw.isdigit():
            return _respond(start_response, "400 Bad Request", {"error": "order id must be a number", "request_id": request_id})
        try:
            order = fetch_order(int(raw))
        except NotFound:
            return _respond(start_response, "404 Not Found", {"error": "order not found", "request_id": request_id})
        except Exception as e:
            return _respond(start_response, "500 Internal Server Error", {
                "error": "%s: %s" % (type(e).__name__, e),
                "trace": traceback.format_exc(),
                "request_id": request_id,
            })
        return _respond(start_response, "200 OK", {"order": order, "request_id": request_id})

    return application
