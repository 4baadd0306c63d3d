"""Post-login redirect handling."""
from urllib.parse import unquote, urlsplit

DEFAULT = "/dashboard"


def after_login_location(next_param, host):
    """Location to redirect to after login; host is this site's host name."""
    if not next_param:
        return DEFAULT
    target = unquote(next_param).strip()
    # Browsers treat backslashes like slashes and drop tabs/newlines, so
    # "/\\evil.com" or "/\t/evil.com" would become protocol-relative.
    if any(c in target for c in "\\\t\r\n") or any(ord(c) < 32 for c in target):
        return DEFAULT
    parts = urlsplit(target)
    if not parts.scheme and not parts.netloc:
        if target.startswith("/") and not target.startswith("//"):
            return target
        return DEFAULT
    if parts.scheme in ("http", "https") and parts.hostname == host.lower() and not parts.username and not parts.password:
        return target
    return DEFAULT


def login_response(form, host, check_password):
    """(status, headers) for a POSTed login form."""
    user, password = form.get("user", ""), form.get("password", "")
    if not check_password(user, password):
        return 401, {"Content-Type": "text/plain"}
    return 303, {"Location": after_login_location(form.get("next"), host)}
