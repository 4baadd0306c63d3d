import unittest

import formula


class BehaviourTest(unittest.TestCase):
    cells = {"A1": 4, "B2": 2.5, "C3": -3}

    def test_arithmetic(self):
        self.assertEqual(formula.evaluate("=A1*2 + max(B2, 3)", self.cells), 11)
        self.assertEqual(formula.evaluate("=(A1 + C3) ** 2", self.cells), 1)
        self.assertEqual(formula.evaluate("=-A1 // 3 % 5", self.cells), 3)
        self.assertEqual(formula.evaluate("=round(B2 / 3, 2)", self.cells), 0.83)
        self.assertEqual(formula.evaluate("=abs(C3) + min(1, 2, A1)", self.cells), 4)

    def test_errors(self):
        for bad in ["A1+1", "=", "=A1 +", "=Z9", "=1/0"]:
            with self.assertRaises(formula.FormulaError, msg=bad):
                formula.evaluate(bad, self.cells)


if __name__ == "__main__":
    unittest.main()
