import unittest

import avatars

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.calls = []

    def fetch(self, url, ip):
        self.calls.append((url, ip))
        return "image/png", PNG

    def test_import(self):
        body = avatars.import_avatar("https://cdn.example.com/a.png", self.fetch, lambda h: ["93.184.216.34"])
        self.assertEqual(body, PNG)
        self.assertEqual(self.calls, [("https://cdn.example.com/a.png", "93.184.216.34")])

    def test_not_image(self):
        with self.assertRaises(avatars.AvatarError):
            avatars.import_avatar("https://cdn.example.com/a", lambda u, i: ("text/html", b"<html>"), lambda h: ["93.184.216.34"])

    def test_unresolvable(self):
        with self.assertRaises(avatars.AvatarError):
            avatars.import_avatar("https://nowhere.example/a.png", self.fetch, lambda h: [])


if __name__ == "__main__":
    unittest.main()
