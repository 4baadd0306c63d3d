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
        if os.path.exists(target):
            shutil.rmtree(target)
        os.makedirs(target)
        written = []
        for info in infos:
            dest = os.path.join(target, info.filename)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with zf.open(info) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
            written.append(info.filename)
    return sorted(written)
