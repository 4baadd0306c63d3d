"""Post-login redirect handling."""
from urllib.parse import unquote

DEFAULT = "/dashboard"


def after_login_location(next_param, host):
    """Location to redirect to after login; host is this site's host name."""
    if not next_param:
        return DEFAULT
    target = unquote(next_param).strip()
    if target.startswith("/") or target.startswith("http"):
        return target
    return DEFAULT


def login_response(form, host, check_password):
    """(status, headers) for a POSTed login form."""
    user, password = form.get("user", ""), form.get("password", "")
    if not check_password(user, password):
        return 401, {"Content-Type": "text/plain"}
    return 303, {"Location": after_login_location(form.get("next"), host)}
