import os
import ssl
import subprocess
import tempfile
import unittest

import mailtls

def make_ca(path):
    """Write a self-signed CA with openssl if present; return True on success."""
    try:
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", path + ".key", "-out", path, "-days", "1", "-subj", "/CN=Hidden Test CA"],
                       check=True, capture_output=True, timeout=20)
        return True
    except (OSError, subprocess.SubprocessError):
        return False


class SecurityTest(unittest.TestCase):
    def assertVerifying(self, ctx):
        self.assertEqual(ctx.verify_mode, ssl.CERT_REQUIRED)
        self.assertTrue(ctx.check_hostname)
        self.assertGreaterEqual(ctx.minimum_version, ssl.TLSVersion.TLSv1_2)
        self.assertTrue(ctx.options & ssl.OP_NO_SSLv3 or ctx.minimum_version > ssl.TLSVersion.SSLv3)

    def test_default_store(self):
        ctx = mailtls.tls_context()
        self.assertVerifying(ctx)

    def test_private_ca(self):
        with tempfile.TemporaryDirectory() as d:
            ca = os.path.join(d, "ca.pem")
            if not make_ca(ca):
                self.skipTest("openssl not available to make a test CA")
            ctx = mailtls.tls_context(cafile=ca)
            self.assertVerifying(ctx)
            subjects = [dict(x[0] for x in c["subject"]).get("commonName") for c in ctx.get_ca_certs()]
            self.assertIn("Hidden Test CA", subjects)

    def test_handshake_with_untrusted_server_fails(self):
        # A real handshake over a socket pair against a self-signed server.
        with tempfile.TemporaryDirectory() as d:
            cert = os.path.join(d, "srv.pem")
            if not make_ca(cert):
                self.skipTest("openssl not available")
            import socket
            import threading
            srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            srv_ctx.load_cert_chain(cert, cert + ".key")
            a, b = socket.socketpair()
            a.settimeout(5)
            b.settimeout(5)

            def serve():
                try:
                    with srv_ctx.wrap_socket(a, server_side=True) as s:
                        s.recv(1)
                except (ssl.SSLError, OSError):
                    pass

            t = threading.Thread(target=serve)
            t.start()
            ctx = mailtls.tls_context()
            try:
                with self.assertRaises(ssl.SSLError):
                    with ctx.wrap_socket(b, server_hostname="relay.example") as c:
                        c.sendall(b"x")
            finally:
                b.close()
                t.join(5)

    def test_generated_settings_keep_verification(self):
        import random
        rng = random.Random(295)
        with tempfile.TemporaryDirectory() as d:
            ca = os.path.join(d, "ca.pem")
            have_ca = make_ca(ca)
            for i in range(20):
                env = {"SMTP_HOST": "relay%d.example" % i, "SMTP_PORT": str(rng.choice([25, 465, 587]))}
                if have_ca and rng.random() < 0.5:
                    env["SMTP_CA_FILE"] = ca
                settings = mailtls.relay_settings(env)
                self.assertEqual(settings["port"], int(env["SMTP_PORT"]))
                self.assertVerifying(mailtls.tls_context(cafile=settings["cafile"]))


if __name__ == "__main__":
    unittest.main()
