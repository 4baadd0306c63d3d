"""Storage for ticket attachments (served statically from upload_dir)."""
import os
import re

MAX_BYTES = 5 * 1024 * 1024
ALLOWED = ("png", "jpg", "jpeg", "gif", "pdf", "txt")


class UploadError(ValueError):
    pass


def save_attachment(upload_dir, filename, data):
    """Store data and return the stored file name (relative to upload_dir)."""
    if not data:
        raise UploadError("empty file")
    if len(data) > MAX_BYTES:
        raise UploadError("file too large")
    name = os.path.basename(filename.replace("\\", "/"))
    if not any(ext in name.lower() for ext in ALLOWED):
        raise UploadError("file type not allowed")
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    path = os.path.join(upload_dir, name)
    with open(path, "wb") as f:
        f.write(data)
    return name
