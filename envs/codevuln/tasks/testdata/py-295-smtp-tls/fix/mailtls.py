"""TLS settings for the outgoing mail relay."""
import ssl


def tls_context(cafile=None, client_cert=None):
    """SSLContext for connections to the SMTP relay."""
    # create_default_context verifies the chain and the host name; with a
    # cafile only our private CA is trusted, otherwise the system store.
    ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl.create_default_context()
    ctx.check_hostname = True
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if client_cert:
        certfile, keyfile = client_cert
        ctx.load_cert_chain(certfile, keyfile)
    return ctx


def relay_settings(env):
    """Host, port and CA file of the relay from an environment mapping."""
    host = env.get("SMTP_HOST", "localhost")
    try:
        port = int(env.get("SMTP_PORT", "465"))
    except ValueError:
        raise ValueError("SMTP_PORT must be an integer")
    return {"host": host, "port": port, "cafile": env.get("SMTP_CA_FILE") or None}
