"""Authentication audit trail, one event per line."""
import datetime
import re
from urllib.parse import quote, unquote

EVENTS = {"login_ok", "login_failed", "logout", "password_reset"}
FIELD = re.compile(r"(\w+)=(\S*)")
# Percent-encoding leaves ordinary values readable but turns every space,
# control character, "=" and "%" into an escape, so a value can neither end
# the line nor start a new field.
SAFE = "@.-_:/+,[]()!*'~#$&;?"


def _enc(value):
    return quote(str(value), safe=SAFE)


def record(stream, event, user, ip, detail="", now=None):
    if event not in EVENTS:
        raise ValueError("unknown event %r" % (event,))
    ts = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stream.write("ts=%s event=%s user=%s ip=%s detail=%s\n" % (ts, event, _enc(user), _enc(ip), _enc(detail)))


def parse_line(line):
    """Fields of one audit line."""
    return {k: unquote(v) for k, v in FIELD.findall(line.rstrip("\n"))}
