import random
import unittest
from html.parser import HTMLParser

import [[.Module]] as m


class P(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def parse(s):
    p = P()
    p.feed(s)
    p.close()
    return p


class SecurityTest(unittest.TestCase):
    def check(self, item):
        p = parse(m.render_[[.Entity]]_card(item))
        self.assertEqual([t for t, _ in p.tags], ["div", "h3", "p"], item)
        self.assertEqual("".join(p.text), item["title"] + item.get("note", ""))

    def test_payloads(self):
        for x in ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</h3><svg onload=alert(1)>", "\"><b>x</b>"]:
            self.check({"title": x, "note": x})

    def test_generated(self):
        rng = random.Random([[.Seed]])
        for _ in range(150):
            self.check({"title": "".join(rng.choice("ab <>&\"'/=") for _ in range(rng.randint(1, 15))),
                        "note": "".join(rng.choice("cd <>&\"'/=") for _ in range(rng.randint(0, 15)))})


if __name__ == "__main__":
    unittest.main()
