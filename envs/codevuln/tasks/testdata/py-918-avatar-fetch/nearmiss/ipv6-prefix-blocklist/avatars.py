"""Import a user's avatar image from a URL."""
import ipaddress
from urllib.parse import urlsplit

MAX_BYTES = 512 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
DEFAULT_PORTS = {"http": 80, "https": 443}


class AvatarError(Exception):
    pass


_INTERNAL_V6 = ("::1", "::ffff:127.", "::ffff:10.", "::ffff:192.168.", "::ffff:172.16.", "fc", "fd", "fe80:")


def _public(ip_text):
    try:
        ip = ipaddress.ip_address(ip_text)
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        return not ip.is_unspecified and not ip_text.lower().startswith(_INTERNAL_V6)
    return ip.is_global and not ip.is_multicast


def import_avatar(url, fetch, resolve):
    """Download the avatar at url.

    resolve(host) returns the host's IP addresses as strings; fetch(url, ip)
    downloads url from the server at ip and returns (content_type, body).
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise AvatarError("malformed URL")
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise AvatarError("only http and https URLs are allowed")
    if not parts.hostname:
        raise AvatarError("URL has no host")
    if parts.username or parts.password:
        raise AvatarError("credentials in URL are not allowed")
    if port is not None and port != DEFAULT_PORTS[scheme]:
        raise AvatarError("non-default port")
    addresses = resolve(parts.hostname)
    if not addresses:
        raise AvatarError("host does not resolve")
    # Every address must be public: a DNS answer mixing public and internal
    # addresses is a rebinding attempt.
    if not all(_public(a) for a in addresses):
        raise AvatarError("host resolves to a non-public address")
    # Connect to the address we checked, not to a fresh resolution.
    content_type, body = fetch(url, addresses[0])
    if content_type.split(";")[0].strip().lower() not in IMAGE_TYPES:
        raise AvatarError("not an image")
    if len(body) > MAX_BYTES:
        raise AvatarError("image too large")
    return body
