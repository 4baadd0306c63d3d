"""Stand-ins for packages benchmarks' tests and reference code import that
Debian ships under another name or not at all. Each is installed only where
the real package is absent (a finder at the end of sys.meta_path), on both
ends: the trusted runner (the tests) and the candidate end (the code under
test), which loads this file from a string like svbench_fixtures.py.
"""

import functools
import importlib
import importlib.abc
import importlib.util
import signal
import sys
import types


class _CryptoAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of Crypto.* served by Cryptodome.*: CWEval is written against
    PyPI's pycryptodome, which Debian ships as python3-pycryptodome under the
    name Cryptodome (the same library; PyPI calls that build
    pycryptodomex)."""

    def find_spec(self, name, path=None, target=None):
        if name != "Crypto" and not name.startswith("Crypto."):
            return None
        real = importlib.util.find_spec("Cryptodome" + name[len("Crypto"):])
        if real is None:
            return None
        return importlib.util.spec_from_loader(name, self, is_package=real.submodule_search_locations is not None)

    def create_module(self, spec):
        return importlib.import_module("Cryptodome" + spec.name[len("Crypto"):])

    def exec_module(self, module):
        pass


def timeout(dec_timeout=None, use_signals=True, timeout_exception=None, exception_message=None, **_):
    """wrapt_timeout_decorator.timeout as CWEval's tests use it (@timeout(4)
    on a helper the test calls): the call raises TimeoutError once it has run
    dec_timeout seconds, by SIGALRM in the calling (main) thread. A call to
    the code under test waiting on the bridge is interrupted like any
    other."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            secs = kwargs.pop("dec_timeout", dec_timeout)
            if not secs:
                return fn(*args, **kwargs)

            def expire(signum, frame):
                raise (timeout_exception or TimeoutError)(
                    exception_message or "Function %s timed out after %s seconds" % (fn.__name__, secs))

            old = signal.signal(signal.SIGALRM, expire)
            signal.setitimer(signal.ITIMER_REAL, float(secs))
            try:
                return fn(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)

        return wrapper

    return decorate


class _Modules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves whole stand-in modules by name."""

    def __init__(self, modules):
        self.modules = modules

    def find_spec(self, name, path=None, target=None):
        if name in self.modules:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__dict__.update(self.modules[spec.name])
        m.__all__ = sorted(self.modules[spec.name])
        return m

    def exec_module(self, module):
        pass


def _absent(name):
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def install():
    if _absent("Crypto") and not _absent("Cryptodome"):
        sys.meta_path.append(_CryptoAlias())
    if _absent("wrapt_timeout_decorator"):
        sys.meta_path.append(_Modules({"wrapt_timeout_decorator": {"timeout": timeout}}))
