"""svbench's trusted test runner (T) for E3's Python tasks.

It runs a suite's unittest modules in this process, which holds the tests and
never imports the model's code. Each module of the code under test is a
RemoteModule: every use of it is an operation executed by the candidate end
(C), a second Python started in a nested sandbox that sees the candidate's
sources and a shared work directory, but neither these tests nor this
process (own pid namespace, no /proc). The verdict is written on this
process's own stdout, which C has no descriptor for.

argv[1] is a JSON object: {"tests": [module, ...], "modules": [name, ...],
"cand": dir, "work": dir, "timeout": seconds, "pytest"?: {"files": [file,
...], "mark": name}}. With "pytest" the suite is the tests of those files
carrying the mark, run by pytest in this process (imported benchmarks such as
CWEval are pytest suites); its verdict is the single entry "pytest". A
compiled candidate has no modules: its binaries are in cand, and the test
module runs them through launchers (see launch).
"""

import json
import os
import socket
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import svbrpc  # noqa: E402

# The candidate end runs svbrpc.py, svbench_fixtures.py and
# svbench_compat.py from this string (-c): nothing of the runner's directory
# is mounted in its sandbox.
CANDIDATE_MAIN = """
def _svb_module(name, src):
    import types
    m = types.ModuleType(name)
    exec(compile(src, name + ".py", "exec"), m.__dict__)
    sys.modules[name] = m
    return m
_svb_module("svbench_fixtures", %r)
_svb_module("svbench_compat", %r).install()
serve_candidate(int(sys.argv[1]), [sys.argv[2]])
"""
HIDDEN_ROOT = {"proc", "dev", "tmp", "scratch", "sys", "run"}
SECCOMP_FILTER = "/run/svbench/seccomp.bpf"  # verify/sandbox.SeccompFilterPath
TMPFS_BYTES = 64 << 20
# Where Debian's node-* packages keep their modules: Debian's node searches
# there itself, a Node.js from elsewhere (nodesource's) only when told.
LAUNCH_ENV = (("NODE_PATH", "/usr/share/nodejs:/usr/lib/nodejs:/usr/lib/x86_64-linux-gnu/nodejs:/usr/lib/aarch64-linux-gnu/nodejs"),)


def sandbox_argv(cand, work, seccomp, tail, share_tmp=False, env=()):
    """bwrap's argv for code under test: a root of its own, the candidate's
    directory read-only and the work directory it shares with the tests.
    With share_tmp, /tmp is this run's own (a tmpfs of the runner's sandbox,
    holding nothing the runner reads) instead of a fresh one: compiled
    programs name /tmp/... where Python's tempfile honours TMPDIR, and a
    benchmark's tests read what they wrote there."""
    a = ["/usr/bin/bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
         "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for name in sorted(os.listdir("/")):
        if name in HIDDEN_ROOT:
            continue
        p = "/" + name
        if os.path.islink(p):
            a += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            a += ["--ro-bind", p, p]
    # /dev/shm and /tmp are RAM: sized, and counted by svbench's watchdog
    # against the run's memory bound; the root and /dev are read-only, so
    # the work directory is the only place to write.
    a += ["--dev", "/dev", "--remount-ro", "/dev", "--size", str(TMPFS_BYTES), "--tmpfs", "/dev/shm"]
    a += ["--bind", "/tmp", "/tmp"] if share_tmp else ["--size", str(TMPFS_BYTES), "--tmpfs", "/tmp"]
    a += ["--ro-bind", cand, cand, "--bind", work, work, "--remount-ro", "/", "--chdir", work, "--clearenv"]
    if seccomp is not None:
        a += ["--seccomp", str(seccomp)]
    for k, v in (("PATH", "/usr/bin:/bin"), ("HOME", "/tmp"), ("TMPDIR", work), ("LANG", "C.UTF-8"),
                 ("PYTHONHASHSEED", "0"), ("PYTHONDONTWRITEBYTECODE", "1")) + tuple(env):
        a += ["--setenv", k, v]
    return a + ["--"] + tail


def launch(binary, cand, work, timeout, rewrite=None):
    """Runs a compiled candidate in the same sandbox as the Python candidate
    end, as if it were the binary itself: a benchmark's test module runs
    compiled/<name>, and that path is a script calling this (see
    verify_compiled.go). Arguments, standard input and output pass
    through, each argument found in rewrite replaced (node's script, from
    the test module's directory to the candidate's); the exit status is the
    program's, 124 when it ran past the timeout, 125 when it could not be
    started."""
    rewrite = rewrite or {}
    args = [rewrite.get(os.path.normpath(a) if os.path.isabs(a) else a, a) for a in sys.argv[1:]]
    sfd = os.open(SECCOMP_FILTER, os.O_RDONLY)
    try:
        p = subprocess.Popen(sandbox_argv(cand, work, sfd, [binary] + args, share_tmp=True, env=LAUNCH_ENV), pass_fds=(sfd,), env={},
                             start_new_session=True)
    except OSError as e:
        sys.stderr.write("svbench: cannot start the code under test: %s\n" % e)
        sys.exit(125)
    finally:
        os.close(sfd)
    try:
        code = p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        sys.stderr.write("svbench: the code under test ran past %.1f s and was stopped\n" % timeout)
        sys.exit(124)
    # A signal (a crash) reads as 128+N, as a shell reports it.
    sys.exit(code if code >= 0 else 128 - code)


class Guarded(svbrpc.Frame):
    """Frames to the candidate end; any failure to talk kills it, so the
    next test starts a fresh one."""

    def __init__(self, conn):
        super().__init__(None)
        self.conn = conn

    def recv(self):
        try:
            return super().recv()
        except socket.timeout:
            self.conn.kill()
            raise TimeoutError("the code under test did not answer within %.1f s" % self.timeout) from None
        except svbrpc.ProtocolError:
            self.conn.kill()
            raise
        except OSError as e:
            self.conn.kill()
            raise svbrpc.ProtocolError("connection to the code under test lost: %s" % e) from None

    def send(self, msg):
        if self.sock is None:
            self.conn.start()
        try:
            super().send(msg)
        except OSError as e:
            self.conn.kill()
            raise svbrpc.ProtocolError("connection to the code under test lost: %s" % e) from None


class Conn:
    """The candidate end's process: started on first use, killed between
    test modules and whenever it stops answering."""

    def __init__(self, cand, work, timeout):
        self.cand, self.work, self.timeout = cand, work, timeout
        self.proc = None
        self.frame = Guarded(self)
        self.frame.timeout = timeout
        self.t = svbrpc.Trusted(self.frame)
        with open(os.path.join(HERE, "svbrpc.py")) as f:
            code = f.read()
        with open(os.path.join(HERE, "svbench_fixtures.py")) as f:
            fixtures = f.read()
        with open(os.path.join(HERE, "svbench_compat.py")) as f:
            self.code = code + CANDIDATE_MAIN % (fixtures, f.read())

    def end(self):
        """T's end of the bridge; the candidate process starts on first use."""
        if self.frame.sock is None:
            self.start()
        return self.t

    def bwrap_argv(self, fd, seccomp=None):
        tail = [sys.executable, "-I", "-B", "-c", self.code, str(fd), self.cand]
        return sandbox_argv(self.cand, self.work, seccomp, tail)

    def start(self):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # svbench's strict seccomp filter for the code under test (no
        # namespaces, mounts, io_uring, keyrings, ptrace...). bwrap reads the
        # descriptor to its end, so it is opened anew for every start. The
        # runner's own sandbox was given a filter that still lets it build
        # this one; without the file there is no candidate process.
        sfd = os.open(SECCOMP_FILTER, os.O_RDONLY)
        try:
            self.proc = subprocess.Popen(self.bwrap_argv(b.fileno(), sfd), pass_fds=(b.fileno(), sfd),
                                         stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno(),
                                         stderr=sys.stderr.fileno(), env={}, start_new_session=True)
        finally:
            b.close()
            os.close(sfd)
        self.frame.sock = a

    def kill(self):
        if self.proc is not None:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
        if self.frame.sock is not None:
            self.frame.sock.close()
            self.frame.sock = None


class Outcome(unittest.TextTestResult):
    """Records which test methods passed; a subtest failure fails its test."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.bad = set()
        self.good = []

    def _name(self, test):
        return test.id().rsplit(".", 1)[-1]

    def addSuccess(self, test):
        super().addSuccess(test)
        self.good.append(self._name(test))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.bad.add(self._name(test))

    def addError(self, test, err):
        super().addError(test, err)
        self.bad.add(self._name(test))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.bad.add(self._name(test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.bad.add(self._name(test))

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self.bad.add(self._name(test))


class PytestRecorder:
    """A pytest plugin recording each selected test's outcome by node id.

    Tests whose function name contains "_unsafe" are dropped: benchmarks
    such as CWEval keep a known-vulnerable copy of the function in the test
    module and test it there, which says nothing about the candidate."""

    def __init__(self):
        self.good, self.bad, self.errors, self.ran = set(), set(), [], set()

    def pytest_collection_modifyitems(self, session, config, items):
        drop = [i for i in items if "_unsafe" in (getattr(i, "originalname", "") or i.name)]
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = [i for i in items if i not in drop]

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append("collecting %s: %s" % (report.nodeid or "the test module", report.longreprtext[-2000:]))

    def pytest_runtest_logreport(self, report):
        self.ran.add(report.nodeid)
        if report.failed or report.skipped:
            self.bad.add(report.nodeid)
        elif report.when == "call" and report.passed:
            self.good.add(report.nodeid)


def run_pytest(spec, work):
    """Runs one pytest suite; tmp_path lives in the work directory the
    candidate shares, so files a test prepares are where the code under
    test looks."""
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    import pytest
    rec = PytestRecorder()
    args = ["-q", "-p", "no:cacheprovider", "-p", "no:stepwise", "--rootdir", HERE, "-c", os.devnull,
            "--tb=short", "--basetemp", os.path.join(work, "pytest-tmp"), "-m", spec["mark"], "-W", "ignore::DeprecationWarning",
            "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    args += [os.path.join(HERE, f) for f in spec["files"]]
    code = pytest.main(args, plugins=[rec])
    entry = {"passed": sorted(rec.good - rec.bad), "failed": sorted(rec.bad), "ran": len(rec.ran)}
    if rec.errors:
        entry["error"] = "; ".join(rec.errors)
    elif int(code) not in (0, 1):
        entry["error"] = "pytest exited %d" % int(code)
    return entry


def main():
    cfg = json.loads(sys.argv[1])
    verdict = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    import svbench_compat
    svbench_compat.install()
    conn = Conn(cfg["cand"], cfg["work"], float(cfg.get("timeout", 20)))
    import svbench_trusted
    svbench_trusted._bind(conn)
    for name in cfg["modules"]:
        sys.modules[name] = svbrpc.RemoteModule(name, conn, os.path.join(cfg["cand"], name + ".py"))
    results = {}
    if cfg.get("pytest"):
        try:
            results["pytest"] = run_pytest(cfg["pytest"], cfg["work"])
        except BaseException as e:
            sys.stderr.write("runner: %s: %s\n" % (type(e).__name__, e))
            results["pytest"] = {"passed": [], "failed": [], "ran": 0, "error": "%s: %s" % (type(e).__name__, e)}
        finally:
            conn.kill()
        os.write(verdict, ("SVBENCH-VERDICT " + json.dumps(results) + "\n").encode())
        return
    for mod in cfg["tests"]:
        entry = {"passed": [], "failed": [], "ran": 0}
        try:
            suite = unittest.defaultTestLoader.loadTestsFromName(mod)
            r = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=Outcome).run(suite)
            entry["ran"] = r.testsRun
            entry["passed"] = sorted(set(n for n in r.good if n not in r.bad))
            entry["failed"] = sorted(r.bad)
        except BaseException as e:  # an import error of the test module fails it whole
            sys.stderr.write("runner: %s: %s\n" % (type(e).__name__, e))
            entry["error"] = "%s: %s" % (type(e).__name__, e)
        finally:
            conn.kill()
        results[mod] = entry
    os.write(verdict, ("SVBENCH-VERDICT " + json.dumps(results) + "\n").encode())


if __name__ == "__main__":
    main()
