import ssl
import unittest

import mailtls


class BehaviourTest(unittest.TestCase):
    def test_context_is_client(self):
        ctx = mailtls.tls_context()
        self.assertIsInstance(ctx, ssl.SSLContext)
        self.assertEqual(ctx.protocol, ssl.PROTOCOL_TLS_CLIENT)

    def test_settings(self):
        self.assertEqual(mailtls.relay_settings({}), {"host": "localhost", "port": 465, "cafile": None})
        s = mailtls.relay_settings({"SMTP_HOST": "relay.example", "SMTP_PORT": "587", "SMTP_CA_FILE": "/etc/ca.pem"})
        self.assertEqual(s, {"host": "relay.example", "port": 587, "cafile": "/etc/ca.pem"})
        with self.assertRaises(ValueError):
            mailtls.relay_settings({"SMTP_PORT": "x"})


if __name__ == "__main__":
    unittest.main()
