package auditlog

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
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

func TestLogLines(t *testing.T) {
	var buf bytes.Buffer
	h := Middleware(&buf, http.HandlerFunc(login))
	attempt(h, "alice", "wrong", "Mozilla/5.0 (X11; Linux x86_64)")
	attempt(h, "bob", "letmein", "curl/8.5.0")
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines: %q", buf.String())
	}
	if !strings.Contains(lines[0], " status=401 user=alice ip=203.0.113.5:4711 ua=") {
		t.Errorf("line 0 = %q", lines[0])
	}
	f := ParseLine(lines[1])
	if f["status"] != "200" || f["user"] != "bob" || f["ua"] != "curl/8.5.0" || f["ip"] != "203.0.113.5:4711" {
		t.Errorf("parsed %v", f)
	}
	if f := ParseLine(lines[0]); f["ua"] != "Mozilla/5.0 (X11; Linux x86_64)" {
		t.Errorf("ua with spaces = %q", f["ua"])
	}
}
