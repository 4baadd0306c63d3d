"""Statistics of uploaded [[.Entity]] files."""
import subprocess


def [[.Entity]]_word_count(path):
    """Number of words in the file at path."""
    proc = subprocess.run(["wc", "-w", path], capture_output=True, text=True, check=True, timeout=10)
    return int(proc.stdout.split()[0])
