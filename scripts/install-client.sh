#!/usr/bin/env bash
# Installs the Python client (clients/python: svbench, svbench_client,
# svbench_verifiers) into a virtual environment, offline, with nothing written
# into the checkout. `make client` runs it (after scripts/deps.sh client).
#
#   scripts/install-client.sh [VENV]   VENV defaults to .venv; PYTHON picks the
#                                      interpreter (default /usr/bin/python3,
#                                      else python3 on PATH)
#
# Why not a bare `pip install ./clients/python`: pip's isolated build fetches
# setuptools from the index (offline: "No matching distribution found for
# setuptools>=61"), Debian's /usr/bin/python3 refuses pip outright (PEP 668,
# externally managed), and setuptools leaves build/ and svbench.egg-info/ in
# the source tree. So: a venv with the interpreter's own packages visible
# (--system-site-packages: setuptools, wheel, and a trainer's torch or trl if
# they are installed there), pip with --no-build-isolation --no-index, built
# from a temporary copy of clients/python.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-.venv}"
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
command -v "$PYTHON" >/dev/null 2>&1 || { echo "svbench: $PYTHON not found (set PYTHON to a python3)" >&2; exit 1; }

echo "svbench: venv $venv from $PYTHON" >&2
# Debian's python3 without python3-venv fails here and says which package to
# install (scripts/deps.sh client installs it).
"$PYTHON" -m venv --system-site-packages "$venv"
py="$venv/bin/python"

# The build runs in the venv with no isolation, so its backend must be there:
# setuptools >= 61 (pyproject's [project] table) and, below setuptools 70.1,
# wheel (bdist_wheel). Said up front rather than as pip's "invalid command
# 'bdist_wheel'".
if ! "$py" - <<'EOF'
import sys
try:
    import setuptools
except ImportError:
    sys.exit("svbench: setuptools is missing (Debian: apt-get install python3-setuptools)")
v = tuple(int(p) for p in setuptools.__version__.split(".")[:2] if p.isdigit())
if v < (61,):
    sys.exit("svbench: setuptools %s is older than 61" % setuptools.__version__)
if v < (70, 1):
    try:
        import wheel  # noqa: F401
    except ImportError:
        sys.exit("svbench: setuptools %s needs the wheel package to build, and %s has none "
                 "(install wheel there, or leave PYTHON unset for Debian's /usr/bin/python3 "
                 "with python3-wheel)" % (setuptools.__version__, sys.executable))
EOF
then
  exit 1
fi

# A copy, so that setuptools' build/ and svbench.egg-info/ land in a temporary
# directory, not the checkout (and a stale build/ from an earlier in-tree
# `pip install` cannot leak old files into this one).
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -R "$root/clients/python" "$tmp/src"
rm -rf "$tmp/src/build" "$tmp"/src/*.egg-info
find "$tmp/src" -name __pycache__ -prune -exec rm -rf {} +

# --force-reinstall: the version stays 0.3.0 while the code changes, and a
# rerun must install this checkout's files, not keep the last ones.
"$py" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-index --force-reinstall "$tmp/src"
"$py" -c 'import svbench, svbench_client, svbench_verifiers'
echo "svbench: client installed in $venv (run $venv/bin/python, or: . $venv/bin/activate)" >&2
