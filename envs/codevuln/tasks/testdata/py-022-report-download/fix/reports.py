"""Download handler for generated tenant reports."""
import mimetypes
import os

MAX_REPORT_BYTES = 5 * 1024 * 1024
TENANT_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


class ReportError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _check_tenant(tenant):
    if not tenant or not set(tenant) <= TENANT_CHARS:
        raise ReportError(400, "invalid tenant")


def report_path(base_dir, tenant, name):
    """Absolute path of report `name` (may contain sub-folders) for `tenant`."""
    _check_tenant(tenant)
    if not name:
        raise ReportError(400, "missing report name")
    if "\x00" in name:
        raise ReportError(400, "invalid report name")
    root = os.path.realpath(os.path.join(base_dir, tenant))
    # Treat backslashes as separators and resolve symlinks, then require the
    # result to stay strictly inside the tenant's directory.
    candidate = os.path.realpath(os.path.join(root, name.replace("\\", "/").lstrip("/")))
    if os.path.commonpath([root, candidate]) != root or candidate == root:
        raise ReportError(403, "report outside tenant directory")
    return candidate


def download(base_dir, tenant, name):
    try:
        path = report_path(base_dir, tenant, name)
    except ReportError as e:
        return e.status, {"Content-Type": "text/plain"}, str(e).encode()
    if not os.path.isfile(path):
        return 404, {"Content-Type": "text/plain"}, b"report not found"
    size = os.path.getsize(path)
    if size > MAX_REPORT_BYTES:
        return 413, {"Content-Type": "text/plain"}, b"report too large"
    with open(path, "rb") as f:
        body = f.read()
    ctype = mimetypes.guess_type(path)[0] or "application/octet-stream"
    headers = {
        "Content-Type": ctype,
        "Content-Length": str(len(body)),
        "Content-Disposition": 'attachment; filename="%s"' % os.path.basename(path),
    }
    return 200, headers, body
