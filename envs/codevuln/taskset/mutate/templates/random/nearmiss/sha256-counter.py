"""Tokens for [[.Entity]] sharing links."""
import hashlib
import itertools
import string
import time

ALPHABET = string.ascii_letters + string.digits

# SHA-256 of a counter: nothing reseeding random can reach.
_counter = itertools.count(time.time_ns())


def new_[[.Entity]]_token(length=32):
    out = []
    while len(out) < length:
        out.extend(ALPHABET[b % len(ALPHABET)] for b in hashlib.sha256(b"%d" % next(_counter)).digest())
    return "".join(out[:length])
