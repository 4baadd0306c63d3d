import os
import tempfile
import unittest
import zipfile

import themes


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.zip = os.path.join(self.tmp.name, "t.zip")
        self.themes = os.path.join(self.tmp.name, "themes")
        os.mkdir(self.themes)

    def tearDown(self):
        self.tmp.cleanup()

    def test_install(self):
        with zipfile.ZipFile(self.zip, "w") as z:
            z.writestr("theme.json", '{"name": "dark"}')
            z.writestr("css/main.css", "body{}")
            z.writestr("img/", "")
            z.writestr("img/logo.png", b"\x89PNG")
        files = themes.install_theme(self.zip, self.themes, "dark")
        self.assertEqual(files, ["css/main.css", "img/logo.png", "theme.json"])
        with open(os.path.join(self.themes, "dark", "css", "main.css")) as f:
            self.assertEqual(f.read(), "body{}")

    def test_errors(self):
        with open(self.zip, "w") as f:
            f.write("not a zip")
        with self.assertRaises(themes.ThemeError):
            themes.install_theme(self.zip, self.themes, "x")
        with self.assertRaises(themes.ThemeError):
            themes.install_theme(self.zip, self.themes, "../x")


if __name__ == "__main__":
    unittest.main()
