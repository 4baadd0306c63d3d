import os
import random
import stat
import tempfile
import unittest
import zipfile

import themes


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = os.path.join(self.tmp.name, "site")
        self.themes = os.path.join(self.base, "themes")
        os.makedirs(self.themes)
        self.zip = os.path.join(self.tmp.name, "t.zip")

    def tearDown(self):
        self.tmp.cleanup()

    def outside_files(self):
        out = []
        for root, _, files in os.walk(self.tmp.name):
            for f in files:
                p = os.path.join(root, f)
                if p != self.zip and not p.startswith(os.path.join(self.themes, "evil") + os.sep):
                    out.append(p)
        return out

    def build(self, entries):
        with zipfile.ZipFile(self.zip, "w") as z:
            for name, data in entries:
                if isinstance(name, zipfile.ZipInfo):
                    z.writestr(name, data)
                else:
                    z.writestr(zipfile.ZipInfo(name), data)

    def test_exploits(self):
        link = zipfile.ZipInfo("link")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        cases = [
            [("../../pwned.py", "x")],
            [("css/../../../pwned.py", "x")],
            [("/" + os.path.join(self.tmp.name, "abs.py").lstrip("/"), "x")],
            [(os.path.join(self.tmp.name, "abs2.py"), "x")],
            [("..\\..\\pwned.py", "x")],
            [("ok.css", "fine"), ("../dark/override.css", "x")],
            [(link, self.base), ("link/pwned.py", "x")],
        ]
        for entries in cases:
            with self.subTest(entries=[getattr(n, "filename", n) for n, _ in entries]):
                self.build(entries)
                try:
                    files = themes.install_theme(self.zip, self.themes, "evil")
                except (themes.ThemeError, OSError):
                    files = None
                self.assertEqual(self.outside_files(), [])
                if files is not None:
                    for f in files:
                        self.assertFalse(f.startswith("/") or ".." in f.split("/"), f)

    def test_generated(self):
        rng = random.Random(2022)
        for i in range(40):
            entries, want, evil = [], set(), False
            for j in range(rng.randint(1, 6)):
                depth = rng.randint(0, 3)
                parts = ["d%d" % rng.randint(0, 3) for _ in range(depth)] + ["f%d.css" % j]
                if rng.random() < 0.2:
                    parts.insert(rng.randint(0, len(parts) - 1), "..")
                    parts = [".."] * rng.randint(1, 3) + parts
                    evil = True
                name = "/".join(parts)
                entries.append((name, "c%d" % j))
                want.add(name)
            self.build(entries)
            target = "t%d" % i
            try:
                files = themes.install_theme(self.zip, self.themes, target)
            except themes.ThemeError:
                self.assertTrue(evil, "benign archive refused: %s" % sorted(want))
                files = None
            installed = tuple(os.path.join(self.themes, "t%d" % k) + os.sep for k in range(i + 1))
            self.assertEqual([p for p in self.outside_files() if not p.startswith(installed)], [])
            if not evil:
                self.assertEqual(files, sorted(want))
                for name, data in entries:
                    with open(os.path.join(self.themes, target, name)) as f:
                        self.assertEqual(f.read(), data)


if __name__ == "__main__":
    unittest.main()
