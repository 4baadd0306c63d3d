"""Password-reset tokens and SMS PINs."""
import hashlib
import itertools
import string
import time

TOKEN_ALPHABET = string.ascii_letters + string.digits + "-_"

# A hash-based generator: SHA-256 of a counter, out of reach of anything
# that reseeds random.
_counter = itertools.count(int(time.time() * 1000))


def _block():
    return hashlib.sha256(b"svc-reset:%d" % next(_counter)).digest()


def new_token(length=32):
    out = []
    while len(out) < length:
        out.extend(TOKEN_ALPHABET[b % len(TOKEN_ALPHABET)] for b in _block())
    return "".join(out[:length])


def new_pin():
    return "%06d" % (int.from_bytes(_block()[:8], "big") % 1000000)


class ResetStore:
    def __init__(self, ttl=900, clock=time.monotonic):
        self.ttl = ttl
        self.clock = clock
        self._tokens = {}

    def issue(self, email):
        token = new_token()
        self._tokens[token] = (email, self.clock() + self.ttl)
        return token

    def redeem(self, token):
        entry = self._tokens.pop(token, None)
        if entry is None:
            return None
        email, expires = entry
        if self.clock() > expires:
            return None
        return email
