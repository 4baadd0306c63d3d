package apierr

import (
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
)

func get(h http.Handler) (int, map[string]string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	var m map[string]string
	json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, m
}

func TestWrap(t *testing.T) {
	logger := log.New(io.Discard, "", 0)
	code, m := get(Wrap(func(w http.ResponseWriter, r *http.Request) error {
		return &APIError{Status: http.StatusNotFound, Message: "no such order"}
	}, logger))
	if code != 404 || m["error"] != "no such order" || len(m["request_id"]) != 16 {
		t.Fatalf("%d %v", code, m)
	}
	code, _ = get(Wrap(func(w http.ResponseWriter, r *http.Request) error {
		w.Write([]byte("ok"))
		return nil
	}, logger))
	if code != 200 {
		t.Fatalf("success = %d", code)
	}
	code, m = get(Wrap(func(w http.ResponseWriter, r *http.Request) error { return io.ErrUnexpectedEOF }, logger))
	if code != 500 || m["error"] != "internal error" {
		t.Fatalf("%d %v", code, m)
	}
}
