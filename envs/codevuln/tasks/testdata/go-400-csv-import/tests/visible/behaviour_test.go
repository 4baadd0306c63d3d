package importer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type memStore struct{ saved []Contact }

func (m *memStore) Save(cs []Contact) error { m.saved = append(m.saved, cs...); return nil }

func post(h http.Handler, body io.Reader, length int64) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/contacts/import", body)
	req.ContentLength = length
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestImport(t *testing.T) {
	s := &memStore{}
	csv := "name,email,phone\nAnn,ann@example.com,123\nBob,not-an-email,1\n,x@example.com,2\n\"Cy, Jr\",cy@example.com,\n"
	rec := post(Handler(s), strings.NewReader(csv), int64(len(csv)))
	if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != `{"imported":2,"rejected":2}` {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if len(s.saved) != 2 || s.saved[1].Name != "Cy, Jr" {
		t.Fatalf("saved %+v", s.saved)
	}
}

func TestBadInput(t *testing.T) {
	for _, body := range []string{"", "a,b,c\n", "name,email,phone\n\"unterminated\n"} {
		if rec := post(Handler(&memStore{}), strings.NewReader(body), int64(len(body))); rec.Code != http.StatusBadRequest {
			t.Errorf("%q: %d", body, rec.Code)
		}
	}
}
