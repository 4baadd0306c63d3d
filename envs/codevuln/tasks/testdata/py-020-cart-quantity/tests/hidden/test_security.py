import copy
import random
import unittest

import cart

CATALOG = {"MUG": 1250, "TEE": 1999, "PEN": 300, "BOX": 7}


def snapshot(c):
    return copy.deepcopy((c.lines, c.coupons))


class SecurityTest(unittest.TestCase):
    def rejected(self, c, fn, *args):
        before = snapshot(c)
        with self.assertRaises(cart.CartError, msg=args):
            fn(*args)
        self.assertEqual(snapshot(c), before, "cart changed by rejected input %r" % (args,))

    def test_bad_quantities(self):
        c = cart.Cart(CATALOG)
        c.add("MUG", 1)
        for q in [-1, "-3", 0, "0", 1.5, "1.5", "1e3", 100, "100", 10**9, "nan", "inf", "", " 2", True, None, [1], "٣"]:
            self.rejected(c, c.add, "PEN", q)
        for q in [-1, "-1", 2.5, 100, "x", None]:
            self.rejected(c, c.set_quantity, "MUG", q)
        self.rejected(c, c.add, "GIFTCARD", 1)
        self.rejected(c, c.set_quantity, "GIFTCARD", 5)
        c.add("MUG", 98)
        self.rejected(c, c.add, "MUG", 1)
        self.assertEqual(c.total(), 99 * 1250)

    def test_coupons(self):
        c = cart.Cart(CATALOG)
        c.add("TEE", 1)
        coupons = {"A": 60, "B": 60, "NEG": -50, "HUGE": 150, "FRAC": 12.5, "ZERO": 0}
        for code in ["NEG", "HUGE", "FRAC", "ZERO"]:
            self.rejected(c, c.apply_coupon, code, coupons)
        c.apply_coupon("A", coupons)
        self.rejected(c, c.apply_coupon, "B", coupons)
        self.rejected(c, c.apply_coupon, "A", coupons)
        self.assertGreaterEqual(c.total(), 0)

    def test_generated(self):
        rng = random.Random(20)
        for _ in range(200):
            c = cart.Cart(CATALOG)
            want = {}
            for _ in range(rng.randint(1, 8)):
                sku = rng.choice(list(CATALOG))
                q = rng.randint(1, 20)
                if want.get(sku, 0) + q > 99:
                    continue
                c.add(sku, rng.choice([q, str(q)]))
                want[sku] = want.get(sku, 0) + q
            evil = rng.choice([-rng.randint(1, 500), rng.random() * 10 + 0.01, str(-rng.randint(1, 9)), rng.randint(100, 10**6)])
            self.rejected(c, c.add, rng.choice(list(CATALOG)), evil)
            expected = sum(CATALOG[s] * q for s, q in want.items())
            self.assertEqual(c.total(), expected)
            if rng.random() < 0.5:
                pct = rng.randint(1, 100)
                c.apply_coupon("C", {"C": pct})
                self.assertEqual(c.total(), int(round(expected - expected * pct / 100)))
            self.assertGreaterEqual(c.total(), 0)


if __name__ == "__main__":
    unittest.main()
