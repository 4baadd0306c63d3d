"""Account settings pages (WSGI)."""
import hashlib
import hmac
import html
import secrets
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

MAX_FORM = 8192


def _reply(start_response, status, text, ctype="text/html; charset=utf-8"):
    body = text.encode("utf-8")
    start_response(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
    return [body]


def make_app(sessions, users):
    """sessions: sid -> user name; users: user name -> {'email': ...}."""
    key = secrets.token_bytes(32)

    def token(sid):
        # Bound to the session and keyed by a server secret: another site can
        # neither read it from our page nor compute it.
        return hmac.new(key, b"csrf:" + sid.encode("utf-8"), hashlib.sha256).hexdigest()

    def current(environ):
        cookie = SimpleCookie(environ.get("HTTP_COOKIE", ""))
        sid = cookie["sid"].value if "sid" in cookie else None
        return sid, sessions.get(sid)

    def app(environ, start_response):
        if environ.get("PATH_INFO") != "/settings/email":
            return _reply(start_response, "404 Not Found", "not found", "text/plain")
        sid, user = current(environ)
        if user is None:
            return _reply(start_response, "401 Unauthorized", "sign in first", "text/plain")
        method = environ.get("REQUEST_METHOD")
        if method == "GET":
            return _reply(start_response, "200 OK",
                          '<form method="post"><input type="hidden" name="csrf_token" value="%s">'
                          '<input name="email" value="%s"><button>Save</button></form>'
                          % (token(sid), html.escape(users[user]["email"])))
        if method == "POST":
            try:
                length = min(int(environ.get("CONTENT_LENGTH") or 0), MAX_FORM)
            except ValueError:
                length = 0
            form = parse_qs(environ["wsgi.input"].read(length).decode("utf-8", "replace"))
            sent = form.get("csrf_token", [""])[0]
            if not hmac.compare_digest(sent.encode("utf-8"), token(sid).encode("ascii")):
                return _reply(start_response, "403 Forbidden", "invalid CSRF token", "text/plain")
            email = form.get("email", [""])[0].strip()
            if "@" not in email or len(email) > 254:
                return _reply(start_response, "400 Bad Request", "invalid e-mail", "text/plain")
            users[user]["email"] = email
            return _reply(start_response, "200 OK", "saved", "text/plain")
        return _reply(start_response, "405 Method Not Allowed", "method not allowed", "text/plain")

    return app
