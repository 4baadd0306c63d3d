"""Tokens for [[.Entity]] sharing links."""
import random
import string

ALPHABET = string.ascii_letters + string.digits

# A generator of our own: reseeding the random module does not touch it.
_rng = random.Random()


def new_[[.Entity]]_token(length=32):
    return "".join(_rng.choice(ALPHABET) for _ in range(length))
