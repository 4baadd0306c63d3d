"""Trainers' own sources for the tests in test_trainer_sources.py.

The trainers cannot be installed here (GPU stacks), but the code that calls
svbench is plain Python. These helpers take the files that call us from a
git repository of the trainer at a pinned commit, into a temporary
directory, beside small stand-ins for the heavy modules they import (torch,
ray, vLLM, ...). Nothing of the trainers is kept in this repository: point
an environment variable at a clone (or a bare mirror) and the tests read it
with ``git show <commit>:<path>``:

    SVBENCH_SRC_VERL=~/src/verl SVBENCH_SRC_TRL=~/src/trl \\
    SVBENCH_SRC_OPENRLHF=~/src/OpenRLHF SVBENCH_SRC_VERIFIERS=~/src/verifiers \\
        python3 -m unittest -v tests.test_trainer_sources

Without the variable (or without the pinned commit in that repository) the
test is skipped, and says which.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

# clients/python: the package, the compatibility modules and examples/.
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The commits the adapters were written against; a test names the files it runs.
PINS = {
    "verl": ("SVBENCH_SRC_VERL", "volcengine/verl", "b178a3cd56f58b2d502255daba591e92833930a7"),
    "trl": ("SVBENCH_SRC_TRL", "huggingface/trl", "f2cd57710ae345ea6428ae95363267fcf38a3dc8"),
    "openrlhf": ("SVBENCH_SRC_OPENRLHF", "OpenRLHF/OpenRLHF", "3c3be6234e0cb353e76bb8019947db9dfe99fca7"),
    "verifiers": ("SVBENCH_SRC_VERIFIERS", "PrimeIntellect-ai/verifiers", "a60a606ecc4d309247edf9ff92c3eabca362781f"),
}

# A module that answers every attribute with a permissive object: for
# imports whose names are only referenced (decorators, type hints, classes
# instantiated at import time) on paths the tests do not exercise.
ANY_MODULE = '''
class _Any:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        if len(a) == 1 and not k and callable(a[0]):
            return a[0]  # used as a decorator
        return _Any()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Any()

    def __mro_entries__(self, bases):
        return (object,)

    def __getitem__(self, item):
        return _Any()

    def __or__(self, other):  # annotations such as torch.Tensor | dict
        return _Any()

    __ror__ = __or__


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Any()
'''


def _git(repo: str, *args: str) -> subprocess.CompletedProcess:
    if os.path.isdir(os.path.join(repo, ".git")):
        cmd = ["git", "-C", repo]
    else:
        cmd = ["git", "--git-dir", repo]
    return subprocess.run(cmd + list(args), capture_output=True)


class Source:
    """One trainer's repository at its pinned commit."""

    def __init__(self, name: str):
        self.name = name
        self.var, self.upstream, self.commit = PINS[name]
        self.repo = os.environ.get(self.var) or ""

    def why_not(self) -> str | None:
        if not self.repo:
            return "%s not set: a clone of %s holding %s" % (self.var, self.upstream, self.commit[:7])
        r = _git(self.repo, "cat-file", "-e", self.commit + "^{commit}")
        if r.returncode != 0:
            return "%s=%s has no commit %s of %s" % (self.var, self.repo, self.commit[:7], self.upstream)
        return None

    def require(self, case: unittest.TestCase) -> None:
        why = self.why_not()
        if why:
            case.skipTest(why)

    def read(self, path: str) -> str:
        r = _git(self.repo, "show", "%s:%s" % (self.commit, path))
        if r.returncode != 0:
            raise FileNotFoundError("%s@%s:%s: %s" % (self.upstream, self.commit[:7], path, r.stderr.decode()))
        return r.stdout.decode("utf-8")

    def extract(self, dest: str, *paths: str) -> None:
        for p in paths:
            write(dest, p, self.read(p))

    def function(self, path: str, qualname: str) -> str:
        """The source of one function or method ("Class.method") of path,
        dedented to module level: for a file too entangled to import whole."""
        text = self.read(path)
        tree = ast.parse(text)
        node: ast.AST = tree
        for part in qualname.split("."):
            found = [n for n in ast.iter_child_nodes(node)
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == part]
            if not found:
                raise LookupError("%s@%s:%s has no %s" % (self.upstream, self.commit[:7], path, qualname))
            node = found[0]
        lines = text.splitlines(keepends=True)
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])  # type: ignore[attr-defined]
        return textwrap.dedent("".join(lines[first - 1:node.end_lineno]))  # type: ignore[attr-defined]


def write(dest: str, relpath: str, text: str) -> None:
    path = os.path.join(dest, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(text) if text.startswith("\n") else text)


def packages(dest: str, *dirs: str) -> None:
    """Empty __init__.py files, so extracted modules import as their package
    names without the trainers' own (heavy) package __init__."""
    for d in dirs:
        init = os.path.join(dest, d, "__init__.py")
        if not os.path.exists(init):
            write(dest, os.path.join(d, "__init__.py"), "")


def run_script(dest: str, script: str, env: dict[str, str] | None = None, timeout: float = 240
               ) -> subprocess.CompletedProcess:
    """Run script with the extracted sources and this package importable, in
    a fresh interpreter (the stand-ins must not leak into other tests)."""
    path = os.path.join(dest, "_scenario.py")
    body = textwrap.indent(textwrap.dedent(script).strip("\n"), "    ")
    with open(path, "w", encoding="utf-8") as f:
        # Under a main guard: a spawned child imports this file again.
        f.write("def _main():\n%s\n\n\nif __name__ == '__main__':\n    _main()\n" % body)
    e = dict(os.environ)
    e.update(env or {})
    e["PYTHONPATH"] = os.pathsep.join([dest, HERE] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
    e["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-B", path], capture_output=True, text=True, env=e, cwd=dest,
                          timeout=timeout)


def require_modules(case: unittest.TestCase, *names: str) -> None:
    """Skip unless these (real, not stood-in) modules import here."""
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    if missing:
        case.skipTest("needs %s for %s" % (", ".join(missing), sys.executable))


def stub_missing(dest: str, name: str, text: str = ANY_MODULE, submodules: tuple[str, ...] = ()) -> None:
    """A stand-in for module name (a package with these submodules), only
    where the real one is not installed."""
    if importlib.util.find_spec(name) is not None:
        return
    if not submodules:
        write(dest, name + ".py", text)
        return
    write(dest, os.path.join(name, "__init__.py"), text)
    for sub in submodules:
        write(dest, os.path.join(name, sub + ".py"), text)


def tempdir(case: unittest.TestCase) -> str:
    d = tempfile.mkdtemp(prefix="svbench-trainer-")
    case.addCleanup(__import__("shutil").rmtree, d, True)
    return d
