"""Authentication audit trail, one event per line."""
import datetime
import re

EVENTS = {"login_ok", "login_failed", "logout", "password_reset"}
FIELD = re.compile(r"(\w+)=(\S*)")


def record(stream, event, user, ip, detail="", now=None):
    if event not in EVENTS:
        raise ValueError("unknown event %r" % (event,))
    ts = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stream.write("ts=%s event=%s user=%s ip=%s detail=%s\n" % (ts, event, user, ip, detail.replace(" ", "_")))


def parse_line(line):
    """Fields of one audit line."""
    fields = dict(FIELD.findall(line.rstrip("\n")))
    if "detail" in fields:
        fields["detail"] = fields["detail"].replace("_", " ")
    return fields
