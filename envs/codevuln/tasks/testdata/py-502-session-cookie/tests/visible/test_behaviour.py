import unittest

import session


class BehaviourTest(unittest.TestCase):
    def test_roundtrip(self):
        data = {"user": "ann", "id": 7, "cart": [1, 2, 3], "prefs": {"dark": True, "lang": None}, "score": 1.5}
        c = session.dump_session(data)
        self.assertIsInstance(c, str)
        self.assertEqual(session.load_session(c), data)

    def test_missing_or_garbage(self):
        self.assertIsNone(session.load_session(""))
        self.assertIsNone(session.load_session(None))
        self.assertIsNone(session.load_session("not-a-cookie!!"))

    def test_not_a_dict(self):
        with self.assertRaises(TypeError):
            session.dump_session([1, 2])


if __name__ == "__main__":
    unittest.main()
