#!/usr/bin/env bash
# Installs the Debian packages svbench needs on this machine, so the README's
# two commands (`make demo`, `make test`) are all the set-up there is.
#
#   scripts/deps.sh demo   what `svbench demo` executes: bubblewrap (E3's
#                          sandbox, the only one svbench uses), python3 and
#                          python3-bandit (E3's Python tasks and analysis),
#                          openssl and ca-certificates (E3's TLS tasks),
#                          util-linux (prlimit) and procps
#   scripts/deps.sh test   the above, plus chromium (the dashboard's browser
#                          tests), git, make, python3-mypy (the Python client's
#                          annotations are checked by its tests), python3-pytest,
#                          gcc, g++ and nodejs (E3's imported CWEval tasks are
#                          pytest suites running Python, C, C++, Go and
#                          JavaScript code), and the client and train sets
#                          below (the client install, the svtrain smoke test
#                          and policy contract run in CI)
#   scripts/deps.sh cweval what the tasks imported from a CWEval checkout need
#                          beyond `test` (svbench data import e3): the C
#                          libraries their programs link, the Python packages
#                          their tests and references import, and Debian's
#                          node-* modules their scripts require
#   scripts/deps.sh client what `make client` (scripts/install-client.sh) needs
#                          to install the Python client offline: python3-venv,
#                          python3-setuptools and python3-wheel for
#                          /usr/bin/python3
#   scripts/deps.sh train  what `make train-demo` runs (train/, svtrain): Debian's
#                          python3-torch for /usr/bin/python3 and
#                          libopenblas0-pthread (without it torch falls back to
#                          the reference BLAS, about 15x slower), python3-yaml
#                          (svtrain e2 reads Kubernetes files)
#
# As root it runs apt-get; otherwise it uses `sudo -n` when that needs no
# password, and else prints the command to run and fails.
set -euo pipefail

what="${1:-demo}"
need=()
train_deps() {
  { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; } || need+=(python3-torch)
  dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q 'ok installed' || need+=(libopenblas0-pthread)
  # svtrain e2 reads the Kubernetes files it trains on as YAML.
  { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import yaml' >/dev/null 2>&1; } || need+=(python3-yaml)
}
client_deps() {
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
    /usr/bin/python3 -c 'import setuptools' >/dev/null 2>&1 || need+=(python3-setuptools)
    /usr/bin/python3 -c 'import wheel' >/dev/null 2>&1 || need+=(python3-wheel)
  else
    need+=(python3 python3-venv python3-setuptools python3-wheel)
  fi
}
pkg_deps() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
  done
}
if [ "$what" = train ]; then
  train_deps
elif [ "$what" = cweval ]; then
  # node-jsdom and node-sqlite3 need Debian's own nodejs; with another
  # Node.js installed, install them by hand or leave those tasks refused.
  pkg_deps gcc g++ nodejs libssl-dev libsqlite3-dev libjwt-dev libarchive-dev libxml2-dev \
    python3-pytest python3-pycryptodome python3-argon2 python3-jwt python3-lxml python3-yaml \
    node-js-yaml node-lodash node-escape-html node-node-rsa
elif [ "$what" = client ]; then
  client_deps
else
  command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  command -v openssl >/dev/null 2>&1 || need+=(openssl)
  [ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
  command -v prlimit >/dev/null 2>&1 || need+=(util-linux)
  command -v pkill >/dev/null 2>&1 || need+=(procps)
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import bandit' >/dev/null 2>&1 || need+=(python3-bandit)
  else
    need+=(python3-bandit)
  fi
  if [ "$what" = test ]; then
    command -v chromium >/dev/null 2>&1 || need+=(chromium)
    command -v git >/dev/null 2>&1 || need+=(git)
    command -v make >/dev/null 2>&1 || need+=(make)
    { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import mypy' >/dev/null 2>&1; } || need+=(python3-mypy)
    # E3's imported benchmarks (CWEval) are pytest suites, run by the
    # trusted runner; the importer's tests run them.
    { [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import pytest' >/dev/null 2>&1; } || need+=(python3-pytest)
    [ -x /usr/bin/gcc ] || need+=(gcc)
    [ -x /usr/bin/g++ ] || need+=(g++)
    [ -x /usr/bin/node ] || need+=(nodejs)
    client_deps
    train_deps
  fi
fi
[ ${#need[@]} -eq 0 ] && exit 0

echo "svbench: installing Debian packages: ${need[*]}" >&2
if [ "$(id -u)" = 0 ]; then
  as=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as=(sudo -n)
else
  echo "svbench: missing packages; run: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# apt's own lines are the progress of a step that can take minutes on a
# fresh machine (python3-torch and chromium are large); -q keeps them to one
# line per package instead of silence.
echo "svbench: apt-get update" >&2
"${as[@]}" apt-get update -q
echo "svbench: apt-get install ${need[*]} (a few minutes on a fresh machine)" >&2
"${as[@]}" apt-get install -y -q "${need[@]}"
echo "svbench: Debian packages installed" >&2
