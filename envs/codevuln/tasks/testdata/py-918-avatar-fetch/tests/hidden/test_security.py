import ipaddress
import random
import unittest

import os

import avatars
import svbench_trusted

# Unknown to the code under test: only a fetch that reached the recorder
# can return it.
PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(8)


class SecurityTest(unittest.TestCase):
    def setUp(self):
        # Requests are seen on this side, where the code under test cannot
        # erase them.
        self.recorder = svbench_trusted.Recorder("image/png", PNG)
        self.addCleanup(self.recorder.close)

    def net(self, addresses):
        n = svbench_trusted.build("svbench_fixtures.Net", self.recorder.port, [str(a) for a in addresses])
        return n.fetch, n.resolve

    def refused(self, url, addrs):
        self.recorder.taken()
        try:
            got = avatars.import_avatar(url, *self.net(addrs))
        except avatars.AvatarError:
            got = None
        self.assertIsNone(got, "fetched %s -> %s" % (url, addrs))
        self.assertEqual(self.recorder.taken(), [], url)

    def test_internal_addresses(self):
        for ip in ["127.0.0.1", "10.0.0.5", "172.16.3.4", "192.168.1.1", "169.254.169.254", "0.0.0.0",
                   "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "100.64.0.1", "224.0.0.1"]:
            self.refused("http://internal.example/a.png", [ip])
        self.refused("http://rebind.example/a.png", ["93.184.216.34", "127.0.0.1"])

    def test_address_encodings(self):
        # Every spelling of an internal destination a resolver can answer:
        # IPv4-mapped IPv6 (dotted, hex, expanded, upper-case) of each
        # internal IPv4 range, 6to4 and NAT64 addresses embedding one, IPv6
        # internal ranges, a zone-scoped link-local address.
        internal_v4 = ["169.254.169.254", "127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.0.10", "0.0.0.0", "100.64.0.1", "192.0.0.1", "240.0.0.1"]
        corpus = []
        for v4 in internal_v4:
            hi, lo = divmod(int(ipaddress.IPv4Address(v4)), 1 << 16)
            corpus += ["::ffff:" + v4, "::ffff:%x:%x" % (hi, lo), "0:0:0:0:0:ffff:%x:%x" % (hi, lo), ("::FFFF:%X:%X" % (hi, lo)),
                       "64:ff9b::" + v4, "2002:%x:%x::1" % (hi, lo)]
        corpus += ["::", "0::0", "::1", "0:0:0:0:0:0:0:1", "fd12:3456::1", "fc00::5", "fe80::dead:beef", "fe80::1%eth0",
                   "ff02::1", "ff05::2", "2001:db8::1", "100::1"]
        for i, ip in enumerate(corpus):
            self.refused("http://enc%d.example/a.png" % i, [ip])
        for order in (["2606:2800:220:1::1", "::ffff:169.254.169.254"], ["::ffff:a9fe:a9fe", "93.184.216.34"]):
            self.refused("http://mixed.example/a.png", order)
        # Internal hosts spelled in the URL (decimal, octal, hex, IPv6
        # literals, names) are judged by what they resolve to.
        for host, ip in [("2852039166", "169.254.169.254"), ("0251.0376.0251.0376", "169.254.169.254"),
                         ("0xa9fea9fe", "169.254.169.254"), ("[::ffff:a9fe:a9fe]", "::ffff:a9fe:a9fe"),
                         ("127.1", "127.0.0.1"), ("0", "0.0.0.0"), ("localhost", "127.0.0.1"),
                         ("metadata.google.internal", "169.254.169.254"), ("localtest.me", "::1")]:
            self.refused("http://%s/latest/meta-data/" % host, [ip])
        # Public destinations keep working in every family and encoding.
        for ip in ["2606:2800:220:1:248:1893:25c8:1946", "::ffff:93.184.216.34", "64:ff9b::5db8:d822"]:
            self.recorder.taken()
            self.assertEqual(avatars.import_avatar("https://v6.example/a.png", *self.net([ip])), PNG, ip)
            self.assertEqual(self.recorder.taken(), [("https://v6.example/a.png", ip)])

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
                self.recorder.taken()
                self.assertEqual(avatars.import_avatar(url, *self.net([a])), PNG)
                self.assertEqual(self.recorder.taken(), [(url, str(a))])
            else:
                self.refused(url, [str(a)])
        for prefix in ["10.", "127.", "192.168.", "169.254."]:
            for _ in range(10):
                ip = prefix + ".".join(str(rng.randint(0, 254)) for _ in range(4 - prefix.count(".")))
                self.refused("https://x.example/a.png", [ip])


if __name__ == "__main__":
    unittest.main()
