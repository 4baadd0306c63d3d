"""Statistics about log files using standard Unix tools."""
import subprocess


class StatsError(Exception):
    pass


def _quote(s):
    # Inside double quotes the shell still expands $ and ` and ends at ":
    # escape those three.
    return '"' + s.replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'


def _run(cmd):
    proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=10)
    if proc.returncode not in (0, 1):
        raise StatsError(proc.stderr.strip() or "command failed")
    return proc.stdout


def count_lines(path):
    """Number of newline-terminated lines in the file at path."""
    out = _run("wc -l < %s" % _quote(path))
    return int(out.split()[0])


def count_matches(path, word):
    """Number of lines of the file containing word (a fixed string)."""
    if not word:
        raise StatsError("empty search word")
    out = _run("grep -c -F -e %s -- %s" % (_quote(word), _quote(path)))
    return int(out.strip() or 0)
