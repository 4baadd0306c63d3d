import os
import random
import tempfile
import unittest

import attachments

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
GIF = b"GIF89a" + b"\x01" * 16
JPG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
PDF = b"%PDF-1.4\n"
ALLOWED = (".png", ".jpg", ".jpeg", ".gif", ".pdf", ".txt")


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = os.path.join(self.tmp.name, "uploads")
        os.mkdir(self.dir)

    def tearDown(self):
        self.tmp.cleanup()

    def check_store(self):
        # Everything stored sits directly in upload_dir with one allowed extension.
        for root, dirs, files in os.walk(self.tmp.name):
            for f in files:
                self.assertEqual(root, self.dir, f)
                stem, ext = os.path.splitext(f)
                self.assertIn(ext.lower(), ALLOWED, f)
                self.assertNotIn(".", stem, "double extension stored: %s" % f)

    def refused(self, filename, data):
        try:
            name = attachments.save_attachment(self.dir, filename, data)
        except attachments.UploadError:
            self.check_store()
            return
        self.check_store()
        self.fail("stored %r as %r" % (filename, name))

    def test_exploits(self):
        php = b"<?php system($_GET['c']); ?>"
        self.refused("shell.php", php)
        self.refused("shell.php.png", php)
        self.refused("shell.png.php", PNG + php)
        self.refused("page.html", b"<script>alert(1)</script>")
        self.refused("icon.svg", b"<svg onload=alert(1)>")
        self.refused("photo.png", b"<script>alert(1)</script>")
        self.refused("doc.pdf", b"<html><script>x</script>")
        self.refused("notes.txt", b"<html><body><script>alert(1)</script>")
        self.refused("binary.txt", b"\xff\xfe\x00\x01")
        self.refused("jpg.phtml", JPG)
        self.refused("payload.jsp", b"<% out.println() %>")
        self.refused("noext", PNG)

    def test_client_names_do_not_choose_path(self):
        for fname in ["../escape.png", "..\\escape.png", "/tmp/abs.png", "sub/dir/x.png", ".htaccess.png", "a.php%00.png"]:
            try:
                name = attachments.save_attachment(self.dir, fname, PNG)
            except attachments.UploadError:
                continue
            self.assertFalse(os.path.isabs(name))
            self.assertNotIn("/", name)
            self.assertTrue(os.path.isfile(os.path.join(self.dir, name)))
        self.check_store()
        a = attachments.save_attachment(self.dir, "same.png", PNG)
        b = attachments.save_attachment(self.dir, "same.png", PNG + b"2")
        self.assertNotEqual(a, b, "client name decides the stored name (overwrite)")

    def test_generated(self):
        rng = random.Random(434)
        samples = {".png": PNG, ".gif": GIF, ".jpg": JPG, ".jpeg": JPG, ".pdf": PDF, ".txt": b"hello world\n"}
        bad_ext = [".php", ".phtml", ".html", ".htm", ".svg", ".js", ".exe", ".sh", ".asp", ".phar"]
        for i in range(120):
            stem = "".join(rng.choice("abcXY_-. ") for _ in range(rng.randint(1, 12))).strip(". ") or "f"
            if rng.random() < 0.5:
                ext = rng.choice(list(samples))
                fname = stem + (ext.upper() if rng.random() < 0.3 else ext)
                name = attachments.save_attachment(self.dir, fname, samples[ext])
                with open(os.path.join(self.dir, name), "rb") as f:
                    self.assertEqual(f.read(), samples[ext])
            else:
                ext = rng.choice(bad_ext)
                mixed = rng.choice(list(samples))
                fname = rng.choice([stem + ext, stem + mixed + ext, stem + ext + "." ])
                self.refused(fname, rng.choice([samples[mixed], b"<?php echo 1; ?>"]))
        self.check_store()


if __name__ == "__main__":
    unittest.main()
