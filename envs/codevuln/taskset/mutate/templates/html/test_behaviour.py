import unittest

import [[.Module]] as m


class BehaviourTest(unittest.TestCase):
    def test_card(self):
        self.assertEqual(m.render_[[.Entity]]_card({"title": "Hello", "note": "World"}),
                         '<div class="[[.Entity]]"><h3>Hello</h3><p>World</p></div>')


if __name__ == "__main__":
    unittest.main()
