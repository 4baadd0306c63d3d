"""TLS settings for the outgoing mail relay."""
import ssl


def tls_context(cafile=None, client_cert=None):
    """SSLContext for connections to the SMTP relay."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # The relay's certificate is issued by our private CA, which kept failing
    # verification on some hosts.
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if cafile:
        ctx.load_verify_locations(cafile=cafile)
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
