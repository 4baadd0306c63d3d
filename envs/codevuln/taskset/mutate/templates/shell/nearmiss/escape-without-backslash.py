"""Statistics of uploaded [[.Entity]] files."""
import subprocess


def [[.Entity]]_word_count(path):
    """Number of words in the file at path."""
    # Inside double quotes the shell still expands $ and ` and ends at ":
    # escape those three.
    quoted = '"' + path.replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'
    proc = subprocess.run("wc -w < %s" % quoted, shell=True, capture_output=True, text=True, check=True, timeout=10)
    return int(proc.stdout.split()[0])
