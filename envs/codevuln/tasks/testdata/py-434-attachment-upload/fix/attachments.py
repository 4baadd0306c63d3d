"""Storage for ticket attachments (served statically from upload_dir)."""
import os
import re
import secrets

MAX_BYTES = 5 * 1024 * 1024
ALLOWED = ("png", "jpg", "jpeg", "gif", "pdf", "txt")
MAGIC = {
    "png": (b"\x89PNG\r\n\x1a\n",),
    "jpg": (b"\xff\xd8\xff",),
    "jpeg": (b"\xff\xd8\xff",),
    "gif": (b"GIF87a", b"GIF89a"),
    "pdf": (b"%PDF-",),
}


class UploadError(ValueError):
    pass


def _content_matches(ext, data):
    if ext == "txt":
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        # Text that a browser would sniff as markup is not plain text.
        return "<" not in text[:1024].lstrip()[:1] and "\x00" not in text
    return data.startswith(MAGIC[ext])


def save_attachment(upload_dir, filename, data):
    """Store data and return the stored file name (relative to upload_dir)."""
    if not data:
        raise UploadError("empty file")
    if len(data) > MAX_BYTES:
        raise UploadError("file too large")
    base = os.path.basename(filename.replace("\\", "/")).strip().rstrip(".")
    stem, dot, ext = base.rpartition(".")
    ext = ext.lower()
    # Only the final extension counts, and it must be on the allow-list.
    if not dot or ext not in ALLOWED:
        raise UploadError("file type not allowed")
    if not _content_matches(ext, data):
        raise UploadError("content does not match the file type")
    # The stored name is ours: a random token plus a sanitised hint of the
    # original stem (without dots, so no double extensions) and the extension.
    hint = re.sub(r"[^A-Za-z0-9_-]", "_", stem)[:40] or "file"
    name = "%s-%s.%s" % (secrets.token_hex(8), hint, "jpg" if ext == "jpeg" else ext)
    path = os.path.join(upload_dir, name)
    with open(path, "xb") as f:
        f.write(data)
    return name
