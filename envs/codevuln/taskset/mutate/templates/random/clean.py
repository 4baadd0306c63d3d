"""Tokens for [[.Entity]] sharing links."""
import secrets
import string

ALPHABET = string.ascii_letters + string.digits


def new_[[.Entity]]_token(length=32):
    return "".join(secrets.choice(ALPHABET) for _ in range(length))
