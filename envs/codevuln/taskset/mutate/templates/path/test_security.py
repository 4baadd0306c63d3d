import os
import random
import tempfile
import unittest

import [[.Module]] as m


class SecurityTest(unittest.TestCase):
    def test_traversal(self):
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "files")
            os.makedirs(os.path.join(base, "x", "y"))
            with open(os.path.join(d, "secret.txt"), "w") as f:
                f.write("SECRET")
            os.makedirs(os.path.join(d, "files-old"))
            with open(os.path.join(d, "files-old", "leak.txt"), "w") as f:
                f.write("SECRET")
            with open(os.path.join(base, "x", "y", "ok.txt"), "w") as f:
                f.write("ok")
            # Links inside the directory that lead out of it: the file a
            # name reaches is what must stay inside, not the name's text.
            os.symlink(os.path.join(d, "secret.txt"), os.path.join(base, "x", "shortcut.txt"))
            os.symlink(d, os.path.join(base, "x", "up"))
            os.symlink("../../../files-old", os.path.join(base, "x", "y", "old"))
            for name in ["../secret.txt", "x/../../secret.txt", os.path.join(d, "secret.txt"), "../files-old/leak.txt", "x/y/../../../secret.txt",
                         "x/shortcut.txt", "x/up/secret.txt", "x/y/old/leak.txt", "x/up/files/x/shortcut.txt"]:
                try:
                    got = m.read_[[.Entity]](base, name)
                except (ValueError, OSError):
                    continue
                self.assertNotIn("SECRET", got, name)
            rng = random.Random([[.Seed]])
            for _ in range(80):
                parts = [rng.choice(["x", "y", "..", "."]) for _ in range(rng.randint(1, 5))]
                depth, escaped = 0, False
                for p in parts:
                    depth += {"..": -1, ".": 0}.get(p, 1)
                    escaped |= depth < 0
                name = "/".join(parts)
                if escaped:
                    try:
                        got = m.read_[[.Entity]](base, name + "/../../../../secret.txt")
                    except (ValueError, OSError):
                        continue
                    self.assertNotIn("SECRET", got, name)
                else:
                    good = name + "/" + "../" * depth + "x/y/ok.txt"
                    if os.path.isfile(os.path.join(base, good)):
                        self.assertEqual(m.read_[[.Entity]](base, good), "ok")


if __name__ == "__main__":
    unittest.main()
