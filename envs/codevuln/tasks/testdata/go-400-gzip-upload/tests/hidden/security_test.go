package ingest

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
)

type memSink struct{ events []Event }

func (m *memSink) Write(e []Event) error { m.events = append(m.events, e...); return nil }

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func post(h http.Handler, body []byte, gzipped bool) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/ingest", bytes.NewReader(body))
	if gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// bomb compresses n bytes of one repeated line (or zeros).
func bomb(n int, unit string) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	chunk := []byte(strings.Repeat(unit, 64<<10/len(unit)))
	for written := 0; written < n; written += len(chunk) {
		zw.Write(chunk)
	}
	zw.Close()
	return buf.Bytes()
}

func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestBombs(t *testing.T) {
	line := "{\"device\":\"d\",\"metric\":\"m\",\"value\":1}\n"
	cases := map[string][]byte{
		"zeros 24 MiB":       bomb(24<<20, "\x00"),
		"valid lines 16 MiB": bomb(16<<20, line),
		"spaces 24 MiB":      bomb(24<<20, " "),
		"one long line":      bomb(16<<20, "a"),
	}
	for name, body := range cases {
		if len(body) > MaxCompressed {
			t.Fatalf("%s: test bomb is %d bytes compressed", name, len(body))
		}
		s := &memSink{}
		var rec *httptest.ResponseRecorder
		alloc := allocatedDuring(func() { rec = post(Handler(s), body, true) })
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("%s: status %d", name, rec.Code)
		}
		if len(s.events) != 0 {
			t.Errorf("%s: %d events written for a rejected batch", name, len(s.events))
		}
		if alloc > 20<<20 {
			t.Errorf("%s: handler allocated %d MiB", name, alloc>>20)
		}
		if testing.Verbose() {
			t.Logf("%s: handler allocated %d KiB", name, alloc>>10)
		}
	}
	var many strings.Builder
	for i := 0; i <= MaxEvents; i++ {
		many.WriteString(line)
	}
	s := &memSink{}
	if rec := post(Handler(s), gz([]byte(many.String())), true); rec.Code != http.StatusRequestEntityTooLarge || len(s.events) != 0 {
		t.Errorf("%d events: %d, %d written", MaxEvents+1, rec.Code, len(s.events))
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(400, 20))
	for i := 0; i < 60; i++ {
		n := rng.IntN(400)
		var b strings.Builder
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "{\"device\":\"dev-%d\",\"metric\":\"m%d\",\"value\":%d}\n", rng.IntN(50), rng.IntN(5), rng.IntN(1000))
		}
		gzipped := rng.IntN(2) == 0
		body := []byte(b.String())
		if gzipped {
			body = gz(body)
		}
		s := &memSink{}
		rec := post(Handler(s), body, gzipped)
		if rec.Code != http.StatusAccepted || rec.Body.String() != fmt.Sprintf("%d\n", n) || len(s.events) != n {
			t.Fatalf("batch of %d (gzip=%v): %d %q", n, gzipped, rec.Code, rec.Body.String())
		}
	}
}
