import base64
import os
import pickle
import random
import tempfile
import unittest

import [[.Module]] as m


class Gadget:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


class SecurityTest(unittest.TestCase):
    def test_gadgets(self):
        with tempfile.TemporaryDirectory() as d:
            marker = os.path.join(d, "pwned")
            for obj in [Gadget(marker), {"k": Gadget(marker)}]:
                for proto in (0, 2, 5):
                    self.assertIsNone(m.load_[[.Entity]](base64.b64encode(pickle.dumps(obj, protocol=proto)).decode()))
                    self.assertFalse(os.path.exists(marker))

    def test_generated(self):
        rng = random.Random([[.Seed]])
        for _ in range(80):
            d = {"k%d" % i: rng.choice([rng.randint(-9, 9), "s%d" % i, None, True, [1, 2]]) for i in range(rng.randint(0, 6))}
            self.assertEqual(m.load_[[.Entity]](m.dump_[[.Entity]](d)), d)


if __name__ == "__main__":
    unittest.main()
