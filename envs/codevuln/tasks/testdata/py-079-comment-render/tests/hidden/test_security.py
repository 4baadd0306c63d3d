import html
import random
import re
import unittest
from html.parser import HTMLParser

import comments

ALLOWED = {"section", "article", "header", "time", "span", "a", "p", "br", "em"}


class Collect(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_data(self, data):
        self.text.append(data)


def parse(out):
    p = Collect()
    p.feed(out)
    p.close()
    return p


class SecurityTest(unittest.TestCase):
    def assertInert(self, out):
        p = parse(out)
        self.assertTrue(set(p.tags) <= ALLOWED, (set(p.tags) - ALLOWED, out))
        for k, v in p.attrs:
            self.assertFalse(k.startswith("on"), out)
            self.assertIn(k, {"class", "href", "rel", "data-count"}, out)
            if k == "href":
                self.assertRegex(v or "", r"^https?://", out)

    def test_exploits(self):
        payloads = [
            "<script>alert(1)</script>",
            "<img src=x onerror=alert(1)>",
            '"><svg onload=alert(1)>',
            "*<iframe src=//evil>*",
            "</p><script>steal()</script>",
            "<a href='javascript:alert(1)'>x</a>",
        ]
        for p in payloads:
            for field in ["author", "text", "date"]:
                c = {"author": "a", "date": "2024-01-01", "text": "t"}
                c[field] = p
                self.assertInert(comments.render_comment(c))
        for site in ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", 'https://x" onmouseover="alert(1)',
                     "data:text/html,<script>alert(1)</script>", "vbscript:msgbox(1)"]:
            out = comments.render_comment({"author": "a", "website": site, "text": "t"})
            self.assertInert(out)

    def test_generated_text_roundtrip(self):
        rng = random.Random(79)
        alphabet = "abc xyz<>&\"'/=;:()*\n"
        for _ in range(120):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))
            author = "".join(rng.choice(alphabet.replace("\n", "")) for _ in range(rng.randint(1, 12)))
            out = comments.render_comment({"author": author, "date": "2024-01-01", "text": text})
            self.assertInert(out)
            p = parse(out)
            visible = "".join(p.text)
            # Every non-space, non-asterisk character the user typed is shown as text.
            want = re.sub(r"[\s*]", "", author.strip() or "anonymous") + re.sub(r"[\s*]", "", text)
            got = re.sub(r"[\s*]", "", visible).replace("2024-01-01", "")
            self.assertEqual(got, want, (author, text, out))

    def test_generated_threads(self):
        rng = random.Random(81)
        for _ in range(30):
            n = rng.randint(0, 5)
            thread = [{"author": "a%d<b>" % i, "date": "2024-01-0%d" % (i + 1), "text": "t%d <script>x</script>" % i} for i in range(n)]
            out = comments.render_thread(thread)
            self.assertInert(out)
            self.assertIn('data-count="%d"' % n, out)
            self.assertEqual(parse(out).tags.count("article"), n)
            for c in thread:
                self.assertIn(html.escape(c["author"]), out)

    def test_safe_links_kept(self):
        rng = random.Random(80)
        for _ in range(30):
            host = "".join(rng.choice("abcdefgh") for _ in range(6)) + ".example"
            url = rng.choice(["http", "https"]) + "://" + host + "/p?a=1&b=2"
            out = comments.render_comment({"author": "z", "website": url, "text": "t"})
            self.assertIn('href="%s"' % html.escape(url, quote=True), out)


if __name__ == "__main__":
    unittest.main()
