package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func call(h http.Handler) (int, string, map[string]string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	var m map[string]string
	json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, rec.Body.String(), m
}

var secrets = []string{
	"pq: password authentication failed for user \"orders\" at postgres://orders:Hunter2@db-7.internal:5432/orders",
	"open /srv/app/secrets/jwt-signing.key: permission denied",
	"ERROR: relation \"users_private\" does not exist (SQLSTATE 42P01) in SELECT * FROM users_private",
	"dial tcp 10.20.30.40:6379: connect: connection refused",
}

func TestNoLeaks(t *testing.T) {
	for _, s := range secrets {
		var logBuf bytes.Buffer
		logger := log.New(&logBuf, "", 0)
		for _, h := range []HandlerFunc{
			func(w http.ResponseWriter, r *http.Request) error { return errors.New(s) },
			func(w http.ResponseWriter, r *http.Request) error { return fmt.Errorf("load order: %w", errors.New(s)) },
			func(w http.ResponseWriter, r *http.Request) error { panic(s) },
			func(w http.ResponseWriter, r *http.Request) error { panic(errors.New(s)) },
		} {
			code, raw, m := call(Wrap(h, logger))
			if code != 500 {
				t.Errorf("status %d", code)
			}
			for _, leak := range []string{s, "Hunter2", "db-7.internal", "/srv/app", "users_private", "10.20.30.40", "goroutine", ".go:"} {
				if strings.Contains(raw, leak) {
					t.Errorf("response leaks %q: %s", leak, raw)
				}
			}
			if len(m) != 2 || m["error"] == "" || m["request_id"] == "" {
				t.Errorf("response body %v", m)
			}
			if !strings.Contains(logBuf.String(), m["request_id"]) || !strings.Contains(logBuf.String(), s) {
				t.Errorf("details not logged with request id %s: %q", m["request_id"], logBuf.String())
			}
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(209, 14))
	var logBuf bytes.Buffer
	logger := log.New(&logBuf, "", 0)
	ids := map[string]bool{}
	for i := 0; i < 150; i++ {
		status := []int{400, 403, 404, 409, 422}[rng.IntN(5)]
		msg := fmt.Sprintf("public message %d", rng.IntN(1000))
		internal := fmt.Sprintf("secret-%d at /var/lib/app/%d.db", rng.IntN(1e6), i)
		var h HandlerFunc
		kind := rng.IntN(3)
		switch kind {
		case 0:
			h = func(w http.ResponseWriter, r *http.Request) error { return &APIError{Status: status, Message: msg} }
		case 1:
			h = func(w http.ResponseWriter, r *http.Request) error {
				return fmt.Errorf("wrapped: %w", &APIError{Status: status, Message: msg})
			}
		default:
			h = func(w http.ResponseWriter, r *http.Request) error { return errors.New(internal) }
		}
		code, raw, m := call(Wrap(h, logger))
		ids[m["request_id"]] = true
		if kind < 2 {
			if code != status || m["error"] != msg {
				t.Fatalf("APIError %d %q answered %d %v", status, msg, code, m)
			}
			continue
		}
		if code != 500 || strings.Contains(raw, "secret-") || strings.Contains(raw, "/var/lib") {
			t.Fatalf("internal error leaked: %d %s", code, raw)
		}
	}
	if len(ids) != 150 {
		t.Fatalf("%d distinct request ids for 150 requests", len(ids))
	}
}
