
import random
import re
import unittest
from urllib.parse import urlencode

import account
import svbench_trusted

TOKEN = re.compile(r"name=\"csrf_token\" value=\"([^\"]*)\"")


def call(app, method, sid=None, form=None, query=""):
    body = urlencode(form or {}).encode()
    environ = {"REQUEST_METHOD": method, "PATH_INFO": "/settings/email", "QUERY_STRING": query,
               "CONTENT_LENGTH": str(len(body))}
    if sid:
        environ["HTTP_COOKIE"] = "sid=" + sid
    r = svbench_trusted.call("svbench_fixtures.wsgi", app, environ, body)
    return r["status"], r["body"].decode()


def store(content):
    """A dict the app keeps and changes, held on the candidate's side."""
    return svbench_trusted.build("builtins.dict", content)


def form_token(app, sid):
    m = TOKEN.search(call(app, "GET", sid)[1])
    return m.group(1) if m else None


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.users = store({"ann": {"email": "ann@example.com"}, "mal": {"email": "mal@evil.example"}})
        self.app = account.make_app({"victim": "ann", "attacker": "mal"}, self.users)

    def test_forged(self):
        good = form_token(self.app, "victim")
        self.assertTrue(good, "the form has no csrf_token field")
        theirs = form_token(self.app, "attacker")
        for tok in [None, "", "0" * len(good), theirs, good[:-1], good + "a", good.upper() if good.upper() != good else good[::-1]]:
            form = {"email": "mal@evil.example"}
            if tok is not None:
                form["csrf_token"] = tok
            status, _ = call(self.app, "POST", "victim", form)
            self.assertEqual(status, "403 Forbidden", tok)
        status, _ = call(self.app, "POST", "victim", {"email": "mal@evil.example"}, query="csrf_token=" + good)
        self.assertEqual(status, "403 Forbidden", "token accepted from the URL")
        other = account.make_app({"victim": "ann"}, self.users)
        self.assertEqual(call(other, "POST", "victim", {"email": "x@evil.example", "csrf_token": good})[0], "403 Forbidden")
        self.assertEqual(self.users["ann"]["email"], "ann@example.com")

    def test_generated(self):
        rng = random.Random(352)
        sessions = {"sid%d_%d" % (i, rng.randint(0, 10**6)): "u%d" % i for i in range(25)}
        users = store({u: {"email": u + "@example.com"} for u in sessions.values()})
        app = account.make_app(sessions, users)
        sids = list(sessions)
        for sid in sids:
            tok = form_token(app, sid)
            new = "%s+%d@example.org" % (sessions[sid], rng.randint(0, 999))
            self.assertEqual(call(app, "POST", sid, {"email": new, "csrf_token": tok}), ("200 OK", "saved"))
            self.assertEqual(users[sessions[sid]]["email"], new)
            other = rng.choice([s for s in sids if s != sid])
            before = users[sessions[other]]["email"]
            self.assertEqual(call(app, "POST", other, {"email": "evil@x.example", "csrf_token": tok})[0], "403 Forbidden")
            self.assertEqual(users[sessions[other]]["email"], before)


if __name__ == "__main__":
    unittest.main()
