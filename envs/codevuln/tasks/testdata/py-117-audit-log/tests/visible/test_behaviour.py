import datetime
import unittest

import audit
import svbench_trusted

NOW = datetime.datetime(2024, 3, 1, 8, 30, tzinfo=datetime.timezone.utc)


class BehaviourTest(unittest.TestCase):
    def test_line_format(self):
        s = svbench_trusted.build("io.StringIO")
        audit.record(s, "login_failed", "alice@example.com", "203.0.113.9", now=NOW)
        self.assertEqual(s.getvalue(), "ts=2024-03-01T08:30:00Z event=login_failed user=alice@example.com ip=203.0.113.9 detail=\n")

    def test_roundtrip(self):
        s = svbench_trusted.build("io.StringIO")
        audit.record(s, "password_reset", "bob", "198.51.100.7", detail="sent email", now=NOW)
        f = audit.parse_line(s.getvalue())
        self.assertEqual((f["event"], f["user"], f["ip"], f["detail"]), ("password_reset", "bob", "198.51.100.7", "sent email"))

    def test_unknown_event(self):
        with self.assertRaises(ValueError):
            audit.record(svbench_trusted.build("io.StringIO"), "sudo", "x", "1.2.3.4")


if __name__ == "__main__":
    unittest.main()
