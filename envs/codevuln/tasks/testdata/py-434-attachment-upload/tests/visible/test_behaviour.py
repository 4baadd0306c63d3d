import os
import tempfile
import unittest

import attachments

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def stored(self, name):
        with open(os.path.join(self.dir, name), "rb") as f:
            return f.read()

    def test_saves_allowed(self):
        for fname, data in [("screenshot.png", PNG), ("invoice.PDF", PDF), ("log.txt", b"line 1\nline 2\n")]:
            name = attachments.save_attachment(self.dir, fname, data)
            self.assertEqual(self.stored(name), data)
            self.assertTrue(name.lower().endswith(os.path.splitext(fname)[1].lower()))

    def test_rejects(self):
        with self.assertRaises(attachments.UploadError):
            attachments.save_attachment(self.dir, "tool.exe", b"MZ...")
        with self.assertRaises(attachments.UploadError):
            attachments.save_attachment(self.dir, "a.png", b"")


if __name__ == "__main__":
    unittest.main()
