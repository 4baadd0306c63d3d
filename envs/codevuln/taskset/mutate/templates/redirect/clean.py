"""Where to send the user after saving a [[.Entity]]."""
from urllib.parse import urlsplit

ALLOWED_HOSTS = {"[[.Host]]"}


def [[.Entity]]_redirect_target(next_url):
    """A safe Location for next_url: same-site paths or https URLs on ALLOWED_HOSTS, else "/"."""
    if not next_url:
        return "/"
    if "\\" in next_url or any(ord(c) < 33 for c in next_url):
        return "/"
    parts = urlsplit(next_url)
    if not parts.scheme and not parts.netloc:
        return next_url if next_url.startswith("/") and not next_url.startswith("//") else "/"
    if parts.scheme == "https" and parts.hostname in ALLOWED_HOSTS and not parts.username:
        return next_url
    return "/"
