import datetime
import random
import unittest

import audit
import svbench_trusted

NOW = datetime.datetime(2024, 3, 1, 8, 30, tzinfo=datetime.timezone.utc)


class SecurityTest(unittest.TestCase):
    def lines(self, user, detail=""):
        s = svbench_trusted.build("io.StringIO")
        audit.record(s, "login_failed", user, "203.0.113.9", detail=detail, now=NOW)
        return s.getvalue()

    def test_forged_entries(self):
        forged = [
            "eve\nts=2024-03-01T08:30:01Z event=login_ok user=admin ip=10.0.0.1 detail=",
            "eve\r\nts=2024-03-01T08:30:01Z event=login_ok user=admin",
            "eve\rts=x event=login_ok user=admin",
            "eve event=login_ok user=admin",
            "eve\u2028event=login_ok",
            "eve\x85event=login_ok",
            "eve\x1b[2Kevent=login_ok",
            "eve\x00",
            "eve\x0bevent=login_ok\x0cuser=admin",
        ]
        for user in forged:
            with self.subTest(user=user):
                out = self.lines(user, detail=user)
                self.assertEqual(len(out.splitlines()), 1, repr(out))
                self.assertTrue(out.endswith("\n"))
                f = audit.parse_line(out)
                self.assertEqual(f["event"], "login_failed")
                self.assertEqual(f["user"], user)
                self.assertEqual(f["detail"], user)
                self.assertTrue(all(c.isprintable() for c in out[:-1]), repr(out))

    def test_generated_roundtrip(self):
        rng = random.Random(117)
        alphabet = "abcXYZ019 _=%@.-\n\r\t\x1b\u2028\x85é\"'"
        for _ in range(300):
            user = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20)))
            detail = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
            out = self.lines(user, detail)
            self.assertEqual(len(out.splitlines()), 1, repr(out))
            f = audit.parse_line(out)
            self.assertEqual((f["user"], f["detail"], f["ip"]), (user, detail, "203.0.113.9"))
        for user in ["alice", "bob.smith@example.com", "carol-99"]:
            self.assertIn(" user=%s " % user, self.lines(user))


if __name__ == "__main__":
    unittest.main()
