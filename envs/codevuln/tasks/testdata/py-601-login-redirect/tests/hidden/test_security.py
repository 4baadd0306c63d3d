import random
import string
import unittest
from urllib.parse import quote, urljoin, urlsplit

import login
import svbench_trusted

HOST = "shop.example.com"


def lands_on(location):
    # Resolve as a browser would against the login page, after its
    # backslash-to-slash and whitespace-stripping normalisation.
    loc = location.replace("\\", "/")
    loc = "".join(c for c in loc if c not in "\t\r\n")
    return urlsplit(urljoin("https://%s/login" % HOST, loc)).hostname


class SecurityTest(unittest.TestCase):
    def test_exploits(self):
        for n in ["https://evil.example/phish", "http://evil.example", "//evil.example/x", "/\\evil.example",
                  "\\\\evil.example", "%2F%2Fevil.example", "https:evil.example", "HTTPS://evil.example",
                  "https://shop.example.com.evil.example/", "https://shop.example.com@evil.example/",
                  "/\t/evil.example", "javascript:alert(1)", "http://evil.example#https://shop.example.com",
                  "%68ttps://evil.example"]:
            with self.subTest(n=n):
                loc = login.after_login_location(n, HOST)
                self.assertIn(lands_on(loc), (HOST,), (n, loc))
                self.assertFalse(loc.lower().startswith("javascript"))

    def test_login_response(self):
        ok = svbench_trusted.build("svbench_fixtures.Credentials", {"ann": "pw"})
        for n in ["https://evil.example/", "//evil.example", "/\\evil.example", "/orders/7"]:
            status, headers = login.login_response({"user": "ann", "password": "pw", "next": n}, HOST, ok)
            self.assertEqual(status, 303)
            self.assertEqual(lands_on(headers["Location"]), HOST, n)
        self.assertEqual(login.login_response({"user": "ann", "password": "pw", "next": "/orders/7"}, HOST, ok)[1]["Location"], "/orders/7")
        self.assertEqual(login.login_response({"user": "ann", "password": "no", "next": "/x"}, HOST, ok)[0], 401)

    def test_generated(self):
        rng = random.Random(601)
        for _ in range(200):
            path = "/" + "/".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 3)))
            if rng.random() < 0.5:
                path += "?q=%d&s=%s" % (rng.randint(0, 99), rng.choice("abc"))
            encoded = quote(path, safe="") if rng.random() < 0.3 else path
            self.assertEqual(login.after_login_location(encoded, HOST), path)
            evil_host = "".join(rng.choice(string.ascii_lowercase) for _ in range(8)) + ".test"
            prefix = rng.choice(["https://", "http://", "//", "/\\", "\\\\", "https:/\\", "//%s@" % HOST])
            loc = login.after_login_location(prefix + evil_host + path, HOST)
            self.assertEqual(lands_on(loc), HOST, (prefix + evil_host + path, loc))


if __name__ == "__main__":
    unittest.main()
