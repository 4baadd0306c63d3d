"""Statistics about log files using standard Unix tools."""
import subprocess


class StatsError(Exception):
    pass


def _run(argv, stdin=None):
    # An argument vector without a shell: no string is ever parsed as shell syntax.
    proc = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, timeout=10)
    if proc.returncode not in (0, 1):
        raise StatsError(proc.stderr.strip() or "command failed")
    return proc.stdout


def count_lines(path):
    """Number of newline-terminated lines in the file at path."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise StatsError(str(e)) from None
    with f:
        out = _run(["wc", "-l"], stdin=f)
    return int(out.split()[0])


def count_matches(path, word):
    """Number of lines of the file containing word (a fixed string)."""
    if not word:
        raise StatsError("empty search word")
    out = _run(["grep", "-c", "-F", "-e", word, "--", path])
    return int(out.strip() or 0)
