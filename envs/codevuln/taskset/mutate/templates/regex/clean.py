"""Validation of [[.Entity]] URL slugs."""
import re

SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def is_valid_[[.Entity]]_slug(s):
    """Lower-case words of letters and digits joined by single dashes."""
    return isinstance(s, str) and len(s) <= 200 and SLUG.match(s) is not None
