"""Installer for uploaded CMS theme packages."""
import os
import re
import shutil
import zipfile

MAX_FILES = 500
MAX_TOTAL = 20 * 1024 * 1024
NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


class ThemeError(Exception):
    pass


def install_theme(zip_path, themes_dir, name):
    """Extract the theme archive into themes_dir/name; return its files."""
    if not NAME.match(name):
        raise ThemeError("invalid theme name")
    target = os.path.join(themes_dir, name)
    try:
        zf = zipfile.ZipFile(zip_path)
    except zipfile.BadZipFile:
        raise ThemeError("not a zip archive")
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        if len(infos) > MAX_FILES or sum(i.file_size for i in infos) > MAX_TOTAL:
            raise ThemeError("theme too large")
        root = os.path.realpath(target)
        plan = []
        # Validate every entry before writing anything, so a bad archive leaves
        # no partial install behind.
        for info in infos:
            rel = info.filename.replace("\\", "/")
            parts = rel.split("/")
            if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel) or ".." in parts or "\x00" in rel:
                raise ThemeError("unsafe path in archive: %r" % info.filename)
            if (info.external_attr >> 16) & 0o170000 == 0o120000:
                raise ThemeError("symlinks are not allowed in themes: %r" % info.filename)
            dest = os.path.realpath(os.path.join(root, *[p for p in parts if p not in ("", ".")]))
            if os.path.commonpath([root, dest]) != root or dest == root:
                raise ThemeError("unsafe path in archive: %r" % info.filename)
            plan.append((info, dest, os.path.relpath(dest, root).replace(os.sep, "/")))
        if os.path.exists(target):
            shutil.rmtree(target)
        os.makedirs(target)
        written = []
        for info, dest, rel in plan:
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with zf.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
            written.append(rel)
    return sorted(written)
