package bank

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

type sessions map[string]string

func (s sessions) User(id string) (string, bool) { u, ok := s[id]; return u, ok }

type ledger struct{ moves []string }

func (l *ledger) Transfer(from, to string, cents int64) error {
	l.moves = append(l.moves, fmt.Sprintf("%s->%s:%d", from, to, cents))
	return nil
}

var tokenRe = regexp.MustCompile(`name="csrf_token" value="([^"]*)"`)

func do(h http.Handler, method, session string, form url.Values) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, "/transfer", body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "session", Value: session})
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// formToken fetches the form and returns its hidden token ("" if none).
func formToken(h http.Handler, session string) string {
	m := tokenRe.FindStringSubmatch(do(h, http.MethodGet, session, nil).Body.String())
	if m == nil {
		return ""
	}
	return m[1]
}

func TestFormFlow(t *testing.T) {
	l := &ledger{}
	h := NewApp(sessions{"s1": "ann"}, l)
	rec := do(h, http.MethodGet, "s1", nil)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Signed in as ann") {
		t.Fatalf("GET = %d %s", rec.Code, rec.Body.String())
	}
	form := url.Values{"to": {"bob"}, "amount": {"250"}}
	if tok := formToken(h, "s1"); tok != "" {
		form.Set("csrf_token", tok)
	}
	rec = do(h, http.MethodPost, "s1", form)
	if rec.Code != 200 || len(l.moves) != 1 || l.moves[0] != "ann->bob:250" {
		t.Fatalf("POST = %d %s, moves %v", rec.Code, rec.Body.String(), l.moves)
	}
}

func TestRejections(t *testing.T) {
	h := NewApp(sessions{"s1": "ann"}, &ledger{})
	if rec := do(h, http.MethodGet, "", nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("anonymous GET = %d", rec.Code)
	}
	if rec := do(h, http.MethodPut, "s1", nil); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT = %d", rec.Code)
	}
}
