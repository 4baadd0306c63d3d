package apikeys

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAuthenticate(t *testing.T) {
	s := NewStore()
	s.Add("k1", "s3cr3t-value", "acme")
	if o, ok := s.Authenticate("Bearer k1.s3cr3t-value"); !ok || o != "acme" {
		t.Fatalf("valid key: %q %v", o, ok)
	}
	for _, h := range []string{"", "Bearer k1.wrong", "Bearer k2.s3cr3t-value", "Basic k1.s3cr3t-value", "Bearer k1s3cr3t-value"} {
		if _, ok := s.Authenticate(h); ok {
			t.Errorf("%q accepted", h)
		}
	}
}

func TestMiddleware(t *testing.T) {
	s := NewStore()
	s.Add("k1", "abc", "acme")
	h := Middleware(s, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(Owner(r.Context()))) }))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Authorization", "Bearer k1.abc")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "acme" {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != 401 {
		t.Fatalf("anonymous: %d", rec.Code)
	}
}
