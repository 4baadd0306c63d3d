import ipaddress
import random
import unittest

import avatars

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 8


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.fetched = []

    def fetch(self, url, ip):
        self.fetched.append((url, ip))
        return "image/png", PNG

    def refused(self, url, addrs):
        self.fetched.clear()
        try:
            avatars.import_avatar(url, self.fetch, lambda h: list(addrs))
        except avatars.AvatarError:
            pass
        else:
            self.fail("fetched %s -> %s" % (url, addrs))
        self.assertEqual(self.fetched, [], url)

    def test_internal_addresses(self):
        for ip in ["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "0.0.0.0",
                   "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "100.64.0.1", "224.0.0.1"]:
            self.refused("http://internal.example/a.png", [ip])
        self.refused("http://rebind.example/a.png", ["93.184.216.34", "127.0.0.1"])

    def test_schemes_ports_credentials(self):
        pub = ["93.184.216.34"]
        for url in ["file:///etc/passwd", "gopher://cdn.example.com/", "ftp://cdn.example.com/a.png",
                    "http://cdn.example.com:8080/a.png", "https://cdn.example.com:22/", "http://user:pw@cdn.example.com/a.png",
                    "dict://cdn.example.com:11211/", "http://cdn.example.com:99999/"]:
            self.refused(url, pub)

    def test_generated(self):
        rng = random.Random(918)
        for _ in range(300):
            a = ipaddress.ip_address(rng.getrandbits(32))
            host = "h%d.example" % rng.randint(0, 10**6)
            url = rng.choice(["http", "https"]) + "://" + host + "/img%d.png" % rng.randint(0, 99)
            if a.is_global and not a.is_multicast:
                self.fetched.clear()
                self.assertEqual(avatars.import_avatar(url, self.fetch, lambda h, a=a: [str(a)]), PNG)
                self.assertEqual(self.fetched, [(url, str(a))])
            else:
                self.refused(url, [str(a)])
        for prefix in ["10.", "127.", "192.168.", "169.254."]:
            for _ in range(10):
                ip = prefix + ".".join(str(rng.randint(0, 254)) for _ in range(4 - prefix.count(".")))
                self.refused("https://x.example/a.png", [ip])


if __name__ == "__main__":
    unittest.main()
