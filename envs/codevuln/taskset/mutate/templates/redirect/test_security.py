import random
import unittest
from urllib.parse import urljoin, urlsplit

import [[.Module]] as m


def lands(loc):
    loc = loc.replace("\\", "/")
    loc = "".join(c for c in loc if c not in "\t\r\n")
    return urlsplit(urljoin("https://[[.Host]]/save", loc)).hostname


class SecurityTest(unittest.TestCase):
    def test_exploits(self):
        for u in ["https://evil.example/", "//evil.example", "/\\evil.example", "https://[[.Host]].evil.example/",
                  "https://[[.Host]]@evil.example/", "javascript:alert(1)", "/\t/evil.example", "http://evil.example"]:
            loc = m.[[.Entity]]_redirect_target(u)
            self.assertEqual(lands(loc), "[[.Host]]", (u, loc))
            self.assertFalse(loc.startswith("javascript"))

    def test_generated(self):
        rng = random.Random([[.Seed]])
        for _ in range(100):
            path = "/" + "/".join("".join(rng.choice("abcxyz") for _ in range(4)) for _ in range(rng.randint(1, 3)))
            self.assertEqual(m.[[.Entity]]_redirect_target(path), path)
            evil = "".join(rng.choice("abcdef") for _ in range(7)) + ".test"
            loc = m.[[.Entity]]_redirect_target(rng.choice(["https://", "//", "http://", "/\\"]) + evil + path)
            self.assertEqual(lands(loc), "[[.Host]]")


if __name__ == "__main__":
    unittest.main()
