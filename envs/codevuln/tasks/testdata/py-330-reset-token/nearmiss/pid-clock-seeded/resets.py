"""Password-reset tokens and SMS PINs."""
import os
import random
import string
import time

TOKEN_ALPHABET = string.ascii_letters + string.digits + "-_"


_rng = random.Random(os.getpid() ^ time.time_ns())


def new_token(length=32):
    return "".join(_rng.choice(TOKEN_ALPHABET) for _ in range(length))


def new_pin():
    return "%06d" % _rng.randrange(1000000)


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
