
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


class BehaviourTest(unittest.TestCase):
    def setUp(self):
        self.users = store({"ann": {"email": "ann@example.com"}})
        self.app = account.make_app({"s1": "ann"}, self.users)

    def test_form_flow(self):
        status, page = call(self.app, "GET", "s1")
        self.assertEqual(status, "200 OK")
        self.assertIn('value="ann@example.com"', page)
        form = {"email": "ann@new.example"}
        tok = form_token(self.app, "s1")
        if tok is not None:
            form["csrf_token"] = tok
        self.assertEqual(call(self.app, "POST", "s1", form), ("200 OK", "saved"))
        self.assertEqual(self.users["ann"]["email"], "ann@new.example")

    def test_rejections(self):
        self.assertEqual(call(self.app, "GET")[0], "401 Unauthorized")
        form = {"email": "nope"}
        tok = form_token(self.app, "s1")
        if tok is not None:
            form["csrf_token"] = tok
        self.assertEqual(call(self.app, "POST", "s1", form)[0], "400 Bad Request")


if __name__ == "__main__":
    unittest.main()
