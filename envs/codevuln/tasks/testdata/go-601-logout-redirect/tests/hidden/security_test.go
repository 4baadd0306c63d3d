package signout

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

const domain = "corp.example"

// landsOn resolves a Location value as a browser on https://portal.corp.example/signout would.
func landsOn(loc string) (string, string) {
	loc = strings.ReplaceAll(loc, "\\", "/")
	loc = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(loc)
	base, _ := url.Parse("https://portal.corp.example/signout")
	u, err := base.Parse(loc)
	if err != nil {
		return "", ""
	}
	return u.Scheme, strings.ToLower(u.Hostname())
}

func safe(loc string) bool {
	scheme, host := landsOn(loc)
	return scheme == "https" && (host == domain || strings.HasSuffix(host, "."+domain))
}

func TestExploits(t *testing.T) {
	for _, target := range []string{
		"https://evil.example/",
		"https://corp.example.evil.example/",
		"https://evilcorp.example/",
		"https://evil.example/?corp.example",
		"https://corp.example@evil.example/",
		"//evil.example/x",
		"/\\evil.example",
		"\\\\evil.example",
		"/\t/evil.example",
		"http://wiki.corp.example/",
		"javascript:alert(document.domain)//corp.example",
		"https://evil.example#.corp.example",
		"https://wiki.corp.example:8443@evil.example/",
	} {
		got := SafeReturn(domain, target)
		if !safe(got) {
			t.Errorf("SafeReturn(%q) = %q leaves the portal", target, got)
		}
		rec := httptest.NewRecorder()
		Handler(domain).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/signout?return_to="+url.QueryEscape(target), nil))
		if loc := rec.Header().Get("Location"); !safe(loc) {
			t.Errorf("handler redirected %q to %q", target, loc)
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(601, 9))
	word := func() string {
		b := make([]byte, 3+rng.IntN(6))
		for i := range b {
			b[i] = "abcdefghij"[rng.IntN(10)]
		}
		return string(b)
	}
	for i := 0; i < 200; i++ {
		path := fmt.Sprintf("/%s/%s?x=%d", word(), word(), i)
		sub := word() + "." + domain
		for _, good := range []string{path, "https://" + sub + path, "https://" + domain + path} {
			if got := SafeReturn(domain, good); got != good {
				t.Fatalf("SafeReturn(%q) = %q, want it unchanged", good, got)
			}
		}
		evil := word() + ".test"
		prefix := []string{"https://", "//", "/\\", "https://" + domain + "@", "https://" + domain + ".", "https://" + word() + domain + ".", "http://" + domain + "."}[rng.IntN(7)]
		bad := prefix + evil + path
		if got := SafeReturn(domain, bad); !safe(got) {
			t.Fatalf("SafeReturn(%q) = %q", bad, got)
		}
	}
}
