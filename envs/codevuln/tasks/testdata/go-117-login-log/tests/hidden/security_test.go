package auditlog

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"unicode"
)

func login(w http.ResponseWriter, r *http.Request) {
	if r.FormValue("password") == "letmein" {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusUnauthorized)
}

func attempt(h http.Handler, user, password, ua string) {
	form := url.Values{"username": {user}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("User-Agent", ua)
	req.RemoteAddr = "203.0.113.5:4711"
	h.ServeHTTP(httptest.NewRecorder(), req)
}

func oneLine(t *testing.T, user, ua string) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	attempt(Middleware(&buf, http.HandlerFunc(login)), user, "wrong", ua)
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("user %q ua %q produced %q", user, ua, out)
	}
	for _, r := range strings.TrimSuffix(out, "\n") {
		if !unicode.IsPrint(r) {
			t.Fatalf("control character %U in log line %q", r, out)
		}
	}
	return ParseLine(out)
}

func TestForgery(t *testing.T) {
	forged := []string{
		"eve\ntime=2024-01-01T00:00:00Z status=200 user=admin ip=10.0.0.1 ua=x",
		"eve\r\ntime=x status=200 user=admin",
		"eve\rstatus=200",
		"eve status=200 user=admin",
		"eve\u2028status=200",
		"eve\x1b[1A\x1b[2Kstatus=200 user=admin",
		"eve\x00",
		"eve\"quote",
	}
	for _, s := range forged {
		f := oneLine(t, s, "ua")
		if f["status"] != "401" || f["user"] != s {
			t.Errorf("user %q parsed as %v", s, f)
		}
		f = oneLine(t, "eve", s)
		if f["status"] != "401" || f["user"] != "eve" || f["ua"] != s {
			t.Errorf("ua %q parsed as %v", s, f)
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(117, 13))
	alphabet := []rune("abcXYZ09 =\"\\\n\r\t\x1b\u2028\u0085é/.;()")
	word := func(n int) string {
		r := make([]rune, n)
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	for i := 0; i < 200; i++ {
		user, ua := word(1+rng.IntN(12)), word(rng.IntN(30))
		f := oneLine(t, user, ua)
		if f["user"] != user || f["ua"] != ua || f["status"] != "401" || f["ip"] != "203.0.113.5:4711" {
			t.Fatalf("user %q ua %q parsed as %q", user, ua, f)
		}
	}
	for _, plain := range []string{"alice", "bob.smith", "carol-9"} {
		var buf bytes.Buffer
		attempt(Middleware(&buf, http.HandlerFunc(login)), plain, "x", "curl/8")
		if !strings.Contains(buf.String(), " user="+plain+" ") {
			t.Errorf("plain user %q not logged verbatim: %q", plain, buf.String())
		}
	}
}
