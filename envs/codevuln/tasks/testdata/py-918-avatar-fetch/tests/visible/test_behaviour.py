import unittest

import avatars
import svbench_trusted

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.png = svbench_trusted.Recorder("image/png", PNG)
        self.addCleanup(self.png.close)

    def net(self, recorder, addresses):
        n = svbench_trusted.build("svbench_fixtures.Net", recorder.port, addresses)
        return n.fetch, n.resolve

    def test_import(self):
        body = avatars.import_avatar("https://cdn.example.com/a.png", *self.net(self.png, ["93.184.216.34"]))
        self.assertEqual(body, PNG)
        self.assertEqual(self.png.taken(), [("https://cdn.example.com/a.png", "93.184.216.34")])

    def test_not_image(self):
        page = svbench_trusted.Recorder("text/html", b"<html>")
        self.addCleanup(page.close)
        with self.assertRaises(avatars.AvatarError):
            avatars.import_avatar("https://cdn.example.com/a", *self.net(page, ["93.184.216.34"]))

    def test_unresolvable(self):
        with self.assertRaises(avatars.AvatarError):
            avatars.import_avatar("https://nowhere.example/a.png", *self.net(self.png, []))


if __name__ == "__main__":
    unittest.main()
