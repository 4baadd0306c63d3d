"""SIGTERM on a training run stops its `svbench serve` child.

A stand-in for svbench answers /readyz and writes its pid; a child Python
process starts it through svtrain's Server inside the try/finally every
command uses, and is sent SIGTERM.

    /usr/bin/python3 -m unittest discover -s train/tests -v
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

TRAIN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FAKE_SERVE = textwrap.dedent("""\
    #!/usr/bin/env python3
    import http.server, os, sys
    addr = sys.argv[sys.argv.index("--addr") + 1]
    host, port = addr.rsplit(":", 1)
    with open(os.environ["FAKE_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"status": "ready"}')
        def log_message(self, *a):
            pass
    http.server.HTTPServer((host, int(port)), H).serve_forever()
""")

RUNNER = textwrap.dedent("""\
    import sys, time
    sys.path.insert(0, sys.argv[1])
    from svtrain import cli
    cli.exit_on_signals()
    server = cli.Server(sys.argv[2], None, None, sys.argv[3])
    try:
        print("started", flush=True)
        time.sleep(120)
    finally:
        server.close()
""")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; only its parent's wait is missing.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class TestSigtermStopsServe(unittest.TestCase):
    def test_sigterm(self):
        try:
            import torch  # noqa: F401  (svtrain.cli imports it)
        except ImportError:
            self.skipTest("python3-torch is not installed")
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "svbench")
            with open(fake, "w") as f:
                f.write(FAKE_SERVE)
            os.chmod(fake, 0o755)
            pid_file = os.path.join(d, "serve.pid")
            env = dict(os.environ, FAKE_PID_FILE=pid_file)
            p = subprocess.Popen([sys.executable, "-B", "-c", RUNNER, TRAIN, fake, d], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                line = ""
                while line != "started":  # after svtrain's own log lines
                    out = p.stdout.readline()
                    if not out:
                        self.fail("the run ended before starting: " + p.stderr.read())
                    line = out.strip()
                with open(pid_file) as f:
                    serve_pid = int(f.read())
                self.assertTrue(alive(serve_pid))
                p.send_signal(signal.SIGTERM)
                self.assertEqual(p.wait(timeout=60), 128 + signal.SIGTERM)
                deadline = time.time() + 30
                while alive(serve_pid) and time.time() < deadline:
                    time.sleep(0.1)
                self.assertFalse(alive(serve_pid), "svbench serve outlived the SIGTERM'd run")
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                p.stdout.close()
                p.stderr.close()


if __name__ == "__main__":
    unittest.main()
