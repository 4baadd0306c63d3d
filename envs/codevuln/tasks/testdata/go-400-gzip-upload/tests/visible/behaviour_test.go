package ingest

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
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

func TestIngest(t *testing.T) {
	batch := []byte("{\"device\":\"d1\",\"metric\":\"temp\",\"value\":21.5}\n\n{\"device\":\"d2\",\"metric\":\"rh\",\"value\":40}\n")
	for _, gzipped := range []bool{false, true} {
		s := &memSink{}
		body := batch
		if gzipped {
			body = gz(batch)
		}
		rec := post(Handler(s), body, gzipped)
		if rec.Code != http.StatusAccepted || rec.Body.String() != "2\n" || len(s.events) != 2 || s.events[0].Value != 21.5 {
			t.Fatalf("gzip=%v: %d %q %+v", gzipped, rec.Code, rec.Body.String(), s.events)
		}
	}
	if rec := post(Handler(&memSink{}), []byte("{\"device\":\"\"}\n"), false); rec.Code != http.StatusBadRequest {
		t.Fatalf("bad event: %d", rec.Code)
	}
	if rec := post(Handler(&memSink{}), []byte("not gzip"), true); rec.Code != http.StatusBadRequest {
		t.Fatalf("bad gzip: %d", rec.Code)
	}
}
