"""Read [[.Entity]] files stored below a base directory."""
import os


def read_[[.Entity]](base_dir, name):
    """Text of the [[.Entity]] file called name (may contain sub-folders)."""
    root = os.path.abspath(base_dir)
    path = os.path.normpath(os.path.join(root, name))
    if os.path.commonpath([root, path]) != root:
        raise ValueError("outside the [[.Entity]] directory")
    with open(path, encoding="utf-8") as f:
        return f.read()
