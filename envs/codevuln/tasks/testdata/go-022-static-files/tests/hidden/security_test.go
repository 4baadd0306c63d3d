package static

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "TOP-SECRET-CONTENT"

// layout: base/secret.txt, base/www/ (root), base/www-old/leak.txt (prefix sibling).
func fixture(t *testing.T) (*Server, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "www")
	for _, d := range []string{root, filepath.Join(root, "a", "b"), filepath.Join(base, "www-old")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(base, "secret.txt"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(base, "www-old", "leak.txt"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(root, "a", "b", "page.txt"), []byte("page"), 0o644)
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(root, "a", "link.txt")); err != nil {
		t.Fatal(err)
	}
	return New(root), base
}

func TestOpenTraversal(t *testing.T) {
	s, base := fixture(t)
	names := []string{
		"../secret.txt",
		"a/../../secret.txt",
		"a/b/../../../secret.txt",
		"..\\secret.txt",
		"a\\..\\..\\secret.txt",
		filepath.Join(base, "secret.txt"),
		"../www-old/leak.txt",
		"a/link.txt",
		"./../secret.txt",
	}
	for _, n := range names {
		if body, err := s.Open(n); err == nil || strings.Contains(string(body), secret) {
			t.Errorf("Open(%q) escaped the root: %q", n, body)
		}
	}
}

func TestHTTPTraversal(t *testing.T) {
	s, _ := fixture(t)
	paths := []string{
		"/files/..%2fsecret.txt",
		"/files/a%2f..%2f..%2fsecret.txt",
		"/files/%2e%2e%2fsecret.txt",
		"/files/%2e%2e/secret.txt",
		"/files/..%5csecret.txt",
		"/files/%252e%252e%252fsecret.txt",
		"/files/..%2fwww-old%2fleak.txt",
		"/files/a/link.txt",
	}
	for _, p := range paths {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.RawPath = p
		req.URL.Path = p
		if dec, err := unescape(p); err == nil {
			req.URL.Path = dec
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code == 200 || strings.Contains(rec.Body.String(), secret) {
			t.Errorf("GET %s = %d %q", p, rec.Code, rec.Body.String())
		}
	}
}

func unescape(p string) (string, error) {
	u, err := http.NewRequest("GET", "http://x"+p, nil)
	if err != nil {
		return "", err
	}
	return u.URL.Path, nil
}

// Random names: those that stay inside the root must still be served; those
// that climb out must be refused.
func TestGeneratedNames(t *testing.T) {
	s, _ := fixture(t)
	rng := rand.New(rand.NewPCG(22, 7))
	segs := []string{"a", "b", "..", ".", "x", "a/b"}
	for i := 0; i < 200; i++ {
		var parts []string
		depth := 0
		escaped := false
		for j := 0; j < 1+rng.IntN(6); j++ {
			seg := segs[rng.IntN(len(segs))]
			parts = append(parts, seg)
			switch seg {
			case "..":
				depth--
			case ".":
			case "a/b":
				depth += 2
			default:
				depth++
			}
			if depth < 0 {
				escaped = true
			}
		}
		name := strings.Join(parts, "/")
		// Benign control: a path that climbs back into a/b/page.txt from a valid spot.
		good := name + "/" + strings.Repeat("../", max(depth, 0)) + "a/b/page.txt"
		body, err := s.Open(good)
		if !escaped {
			if _, statErr := os.Stat(filepath.Join(s.Root, filepath.FromSlash(good))); statErr == nil && (err != nil || string(body) != "page") {
				t.Errorf("Open(%q) = %q, %v; want page", good, body, err)
			}
		}
		if escaped {
			evil := name + strings.Repeat("/..", 4) + "/secret.txt"
			if body, err := s.Open(evil); err == nil || strings.Contains(string(body), secret) {
				t.Errorf("Open(%q) escaped: %q", evil, body)
			}
		}
		_ = fmt.Sprint(i)
	}
}
