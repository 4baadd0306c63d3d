package signout

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestSafeReturn(t *testing.T) {
	for target, want := range map[string]string{
		"":                                "/",
		"/apps?tab=2":                     "/apps?tab=2",
		"https://wiki.corp.example/start": "https://wiki.corp.example/start",
		"https://corp.example/":           "https://corp.example/",
	} {
		if got := SafeReturn("corp.example", target); got != want {
			t.Errorf("SafeReturn(%q) = %q, want %q", target, got, want)
		}
	}
}

func TestHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler("corp.example").ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/signout?return_to="+url.QueryEscape("https://mail.corp.example/"), nil))
	if rec.Code != http.StatusFound || rec.Header().Get("Location") != "https://mail.corp.example/" {
		t.Fatalf("%d %q", rec.Code, rec.Header().Get("Location"))
	}
	if c := rec.Header().Get("Set-Cookie"); !strings.Contains(c, "sso=") || !strings.Contains(c, "Max-Age=0") {
		t.Errorf("cookie not cleared: %q", c)
	}
}
