package static

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func site(t *testing.T) *Server {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "css"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "index.html"), []byte("<h1>hi</h1>"), 0o644)
	os.WriteFile(filepath.Join(root, "css", "site.css"), []byte("body{}"), 0o644)
	return New(root)
}

func TestOpen(t *testing.T) {
	s := site(t)
	for name, want := range map[string]string{"index.html": "<h1>hi</h1>", "css/site.css": "body{}"} {
		got, err := s.Open(name)
		if err != nil || string(got) != want {
			t.Errorf("Open(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if _, err := s.Open("missing.txt"); err == nil {
		t.Error("Open(missing.txt) succeeded")
	}
}

func TestServe(t *testing.T) {
	s := site(t)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/files/css/site.css", nil))
	if rec.Code != 200 || rec.Body.String() != "body{}" {
		t.Fatalf("GET site.css = %d %q", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/files/index.html", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST = %d", rec.Code)
	}
}
