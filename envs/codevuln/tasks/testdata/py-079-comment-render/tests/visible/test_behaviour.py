import unittest

import comments


class BehaviourTest(unittest.TestCase):
    def test_plain(self):
        out = comments.render_comment({"author": "Ann", "date": "2024-05-01", "text": "Nice post"})
        self.assertEqual(out, '<article class="comment"><header><span>Ann</span> <time>2024-05-01</time></header><p>Nice post</p></article>')

    def test_link_and_formatting(self):
        out = comments.render_comment({"author": "Bo", "website": "https://bo.example", "date": "2024-05-02",
                                       "text": "I *really* agree.\nTwo lines.\n\nSecond para."})
        self.assertIn('<a href="https://bo.example" rel="nofollow">Bo</a>', out)
        self.assertIn("<p>I <em>really</em> agree.<br>Two lines.</p><p>Second para.</p>", out)

    def test_thread(self):
        out = comments.render_thread([{"author": "A", "text": "x"}, {"text": "y"}])
        self.assertTrue(out.startswith('<section class="comments" data-count="2">'))
        self.assertIn("<span>anonymous</span>", out)


if __name__ == "__main__":
    unittest.main()
