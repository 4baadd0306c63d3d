import os
import ssl
import subprocess
import tempfile
import unittest

import mailtls
import svbench_trusted

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
        # A real handshake against a self-signed server listening here. The
        # client sends a byte only once it has accepted the server: the
        # server, on this side, sees whether it was trusted.
        with tempfile.TemporaryDirectory() as d:
            cert = os.path.join(d, "srv.pem")
            if not make_ca(cert):
                self.skipTest("openssl not available")
            import socket
            import threading
            srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            srv_ctx.load_cert_chain(cert, cert + ".key")
            lst = socket.create_server(("127.0.0.1", 0))
            lst.settimeout(10)
            port = lst.getsockname()[1]
            got = []

            def serve():
                try:
                    conn, _ = lst.accept()
                    conn.settimeout(5)
                    with srv_ctx.wrap_socket(conn, server_side=True) as s:
                        got.append(s.recv(1))
                except (ssl.SSLError, OSError):
                    pass

            t = threading.Thread(target=serve)
            t.start()
            ctx = mailtls.tls_context()
            try:
                with self.assertRaises(ssl.SSLError):
                    svbench_trusted.call("svbench_fixtures.tls_connect", ctx, "127.0.0.1", port, "relay.example")
            finally:
                t.join(10)
                lst.close()
            self.assertNotIn(b"x", got, "the client completed a handshake with an untrusted server")

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
