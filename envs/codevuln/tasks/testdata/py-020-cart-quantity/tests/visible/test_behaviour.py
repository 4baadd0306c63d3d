import unittest

import cart

CATALOG = {"MUG": 1250, "TEE": 1999, "PEN": 300}


class BehaviourTest(unittest.TestCase):
    def test_total(self):
        c = cart.Cart(CATALOG)
        c.add("MUG", 2)
        c.add("PEN", "3")
        self.assertEqual(c.total(), 2 * 1250 + 3 * 300)
        c.set_quantity("MUG", 1)
        self.assertEqual(c.total(), 1250 + 900)
        c.set_quantity("PEN", 0)
        self.assertEqual(c.total(), 1250)

    def test_coupon(self):
        c = cart.Cart(CATALOG)
        c.add("TEE", 2)
        c.apply_coupon("SPRING10", {"SPRING10": 10})
        self.assertEqual(c.total(), 3598)
        with self.assertRaises(cart.CartError):
            c.apply_coupon("NOPE", {"SPRING10": 10})


if __name__ == "__main__":
    unittest.main()
