"""Import a user's avatar image from a URL."""
from urllib.parse import urlsplit

MAX_BYTES = 512 * 1024
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


class AvatarError(Exception):
    pass


def import_avatar(url, fetch, resolve):
    """Download the avatar at url.

    resolve(host) returns the host's IP addresses as strings; fetch(url, ip)
    downloads url from the server at ip and returns (content_type, body).
    """
    parts = urlsplit(url)
    if not parts.hostname:
        raise AvatarError("URL has no host")
    addresses = resolve(parts.hostname)
    if not addresses:
        raise AvatarError("host does not resolve")
    content_type, body = fetch(url, addresses[0])
    if content_type.split(";")[0].strip().lower() not in IMAGE_TYPES:
        raise AvatarError("not an image")
    if len(body) > MAX_BYTES:
        raise AvatarError("image too large")
    return body
