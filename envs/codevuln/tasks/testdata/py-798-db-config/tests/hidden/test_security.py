import os
import random
import re
import string
import tempfile
import unittest

import dbconfig


class SecurityTest(unittest.TestCase):
    def test_no_password_without_configuration(self):
        for env in [{}, {"APP_DB_HOST": "db"}, {"APP_DB_PASSWORD": ""}, {"APP_DB_PASSWORD_FILE": ""}]:
            with self.assertRaises(dbconfig.ConfigError, msg=env):
                dbconfig.load_settings(env)

    def test_no_credential_literals_in_source(self):
        src = open(dbconfig.__file__, encoding="utf-8").read()
        self.assertNotIn("Orders#Prod!2024", src)
        # No other password-looking literal assigned to a password-ish name.
        for m in re.finditer(r"(?i)(passw\w*|secret\w*)\s*[=:]\s*['\"]([^'\"]{6,})['\"]", src):
            self.fail("credential literal in source: %s" % m.group(0))

    def test_password_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "pw")
            with open(p, "w") as f:
                f.write("from-file-secret\n")
            s = dbconfig.load_settings({"APP_DB_PASSWORD_FILE": p})
            self.assertEqual(s.password, "from-file-secret")
            with self.assertRaises(dbconfig.ConfigError):
                dbconfig.load_settings({"APP_DB_PASSWORD_FILE": os.path.join(d, "missing")})

    def test_generated(self):
        rng = random.Random(798)
        for _ in range(100):
            pw = "".join(rng.choice(string.ascii_letters + string.digits + "@:/#!%") for _ in range(rng.randint(1, 24)))
            user = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 10)))
            s = dbconfig.load_settings({"APP_DB_PASSWORD": pw, "APP_DB_USER": user})
            self.assertEqual((s.password, s.user), (pw, user))
            self.assertTrue(dbconfig.dsn(s).startswith("postgresql://%s:" % user))


if __name__ == "__main__":
    unittest.main()
