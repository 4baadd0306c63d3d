"""The package's annotations hold: mypy finds no error in svbench/ (the
package ships py.typed, so a trainer's type checker reads them). Skipped
where mypy is not installed (Debian: python3-mypy)."""

import os
import subprocess
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class TypingTest(unittest.TestCase):
    def test_mypy_clean(self):
        try:
            import mypy  # noqa: F401
        except ImportError:
            self.skipTest("mypy is not installed for %s" % sys.executable)
        # The trainers are not installed here: their imports are unresolved,
        # not errors. 3.9 is the oldest Python pyproject.toml accepts.
        r = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports", "--python-version", "3.9",
                            "--no-incremental", "svbench"], cwd=ROOT, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
