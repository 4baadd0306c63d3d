import os
import tempfile
import unittest

import logstats


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "app log.txt")
        with open(self.path, "w") as f:
            f.write("GET /a 200\nGET /b 404\nPOST /a 200\nGET /c 500\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_count_lines(self):
        self.assertEqual(logstats.count_lines(self.path), 4)

    def test_count_matches(self):
        self.assertEqual(logstats.count_matches(self.path, "GET"), 3)
        self.assertEqual(logstats.count_matches(self.path, " 200"), 2)
        self.assertEqual(logstats.count_matches(self.path, "DELETE"), 0)

    def test_empty_word(self):
        with self.assertRaises(logstats.StatsError):
            logstats.count_matches(self.path, "")


if __name__ == "__main__":
    unittest.main()
