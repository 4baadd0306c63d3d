package bank

import (
	"fmt"
	"io"
	"math/rand/v2"
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

func TestForgedPosts(t *testing.T) {
	l := &ledger{}
	h := NewApp(sessions{"victim": "ann", "attacker": "mallory"}, l)
	good := formToken(h, "victim")
	if good == "" {
		t.Fatal("the form carries no csrf_token field")
	}
	attackerTok := formToken(h, "attacker")
	forged := []url.Values{
		{"to": {"mallory"}, "amount": {"100000"}},
		{"to": {"mallory"}, "amount": {"100000"}, "csrf_token": {""}},
		{"to": {"mallory"}, "amount": {"100000"}, "csrf_token": {"0000"}},
		{"to": {"mallory"}, "amount": {"100000"}, "csrf_token": {attackerTok}},
		{"to": {"mallory"}, "amount": {"100000"}, "csrf_token": {good[:len(good)-1]}},
		{"to": {"mallory"}, "amount": {"100000"}, "csrf_token": {good + "0"}},
	}
	for _, f := range forged {
		if rec := do(h, http.MethodPost, "victim", f); rec.Code != http.StatusForbidden {
			t.Errorf("forged POST %v = %d", f, rec.Code)
		}
	}
	// Token in the query string instead of the body.
	req := httptest.NewRequest(http.MethodPost, "/transfer?csrf_token="+url.QueryEscape(good), strings.NewReader("to=mallory&amount=5"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "session", Value: "victim"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("token in URL accepted: %d", rec.Code)
	}
	if len(l.moves) != 0 {
		t.Fatalf("forged transfers executed: %v", l.moves)
	}
	// Another instance (another server key) does not accept this one's tokens.
	h2 := NewApp(sessions{"victim": "ann"}, l)
	if rec := do(h2, http.MethodPost, "victim", url.Values{"to": {"x"}, "amount": {"1"}, "csrf_token": {good}}); rec.Code != http.StatusForbidden {
		t.Errorf("token accepted by another app instance: %d", rec.Code)
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(352, 8))
	s := sessions{}
	for i := 0; i < 30; i++ {
		s[fmt.Sprintf("sess-%d-%d", i, rng.IntN(1e6))] = fmt.Sprintf("user%d", i)
	}
	l := &ledger{}
	h := NewApp(s, l)
	want := 0
	for id, user := range s {
		tok := formToken(h, id)
		amount := 1 + rng.IntN(1000)
		f := url.Values{"to": {"shop"}, "amount": {fmt.Sprint(amount)}, "csrf_token": {tok}}
		if rec := do(h, http.MethodPost, id, f); rec.Code != 200 {
			t.Fatalf("legit POST for %s = %d %s", user, rec.Code, rec.Body.String())
		}
		want++
		if l.moves[len(l.moves)-1] != fmt.Sprintf("%s->shop:%d", user, amount) {
			t.Fatalf("moves %v", l.moves)
		}
		// The same token replayed with another session is refused.
		for other := range s {
			if other != id && formToken(h, other) != tok {
				if rec := do(h, http.MethodPost, other, f); rec.Code != http.StatusForbidden {
					t.Fatalf("token of %s accepted for another session: %d", id, rec.Code)
				}
				break
			}
		}
		// A random token is refused.
		b := []byte(tok)
		if len(b) > 0 {
			b[rng.IntN(len(b))] ^= 1
		}
		f.Set("csrf_token", string(b))
		if rec := do(h, http.MethodPost, id, f); rec.Code != http.StatusForbidden {
			t.Fatalf("mutated token accepted: %d", rec.Code)
		}
	}
	if len(l.moves) != want {
		t.Fatalf("%d transfers, want %d", len(l.moves), want)
	}
}
