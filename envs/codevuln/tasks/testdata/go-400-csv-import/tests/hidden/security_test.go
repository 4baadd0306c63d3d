package importer

import (
	"fmt"
	"io"
	"math/rand/v2"
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

// endless yields a valid CSV that never ends (or ends after n bytes), and
// counts how much the handler pulled.
type endless struct {
	read, limit int64
	row         []byte
	off         int
	header      bool
}

func newEndless(limit int64, row string) *endless {
	return &endless{limit: limit, row: []byte(row)}
}

func (e *endless) Read(p []byte) (int, error) {
	if e.limit > 0 && e.read >= e.limit {
		return 0, io.EOF
	}
	if !e.header {
		e.header = true
		n := copy(p, "name,email,phone\n")
		e.read += int64(n)
		return n, nil
	}
	n := 0
	for n < len(p) {
		c := copy(p[n:], e.row[e.off:])
		n += c
		e.off = (e.off + c) % len(e.row)
	}
	if e.limit > 0 && e.read+int64(n) > e.limit {
		n = int(e.limit - e.read)
	}
	e.read += int64(n)
	return n, nil
}

func TestOversizedBodies(t *testing.T) {
	cases := []struct {
		name   string
		length int64
		limit  int64
		row    string
	}{
		{"endless, unknown length", -1, 64 << 20, "Ann,ann@example.com,1\n"},
		{"endless, lying length", 100, 64 << 20, "Ann,ann@example.com,1\n"},
		{"one giant field", -1, 64 << 20, "x"},
		{"declared huge", 1 << 30, 64 << 20, "Bob,bob@example.com,2\n"},
	}
	for _, c := range cases {
		body := newEndless(c.limit, c.row)
		s := &memStore{}
		rec := post(Handler(s), body, c.length)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d", c.name, rec.Code)
		}
		if body.read > MaxBodyBytes+64<<10 {
			t.Errorf("%s: handler read %d bytes, limit is %d", c.name, body.read, MaxBodyBytes)
		}
		if len(s.saved) != 0 {
			t.Errorf("%s: saved %d contacts", c.name, len(s.saved))
		}
	}
}

func TestTooManyRows(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("name,email,phone\n")
	for i := 0; i <= MaxRows; i++ {
		sb.WriteString("a,a@b.co,1\n")
	}
	if rec := post(Handler(&memStore{}), strings.NewReader(sb.String()), int64(sb.Len())); rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("%d rows: status %d", MaxRows+1, rec.Code)
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(400, 11))
	for i := 0; i < 40; i++ {
		var sb strings.Builder
		sb.WriteString("name,email,phone\n")
		n := rng.IntN(MaxRows + 1)
		if rng.IntN(4) > 0 {
			n = rng.IntN(300)
		}
		good := 0
		for j := 0; j < n; j++ {
			if rng.IntN(5) == 0 {
				fmt.Fprintf(&sb, "p%d,bad-email,%d\n", j, j)
				continue
			}
			fmt.Fprintf(&sb, "p%d,p%d@example.com,%d\n", j, j, j)
			good++
		}
		s := &memStore{}
		rec := post(Handler(s), strings.NewReader(sb.String()), int64(sb.Len()))
		want := fmt.Sprintf(`{"imported":%d,"rejected":%d}`, good, n-good)
		if rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != want || len(s.saved) != good {
			t.Fatalf("%d rows: %d %s, want %s", n, rec.Code, rec.Body.String(), want)
		}
	}
}
