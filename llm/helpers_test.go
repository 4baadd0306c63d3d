package llm

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// okBody is a minimal chat completion.
const okBody = `{"id":"c","object":"chat.completion","created":0,"model":"m",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

func newTestClient(t *testing.T, cfg Config) *OpenAI {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	c, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawServer answers every request with one fixed response and counts them.
func rawServer(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// n counts chat attempts: the /models look-up after a 404 is not one.
		if !strings.HasSuffix(r.URL.Path, "/models") {
			n.Add(1)
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// step is one scripted answer of a script transport: a response, or err.
type step struct {
	status int
	header http.Header
	body   string
	err    error
}

// script is an in-memory http.RoundTripper playing steps in order (the last
// one repeats) and recording when each request arrived. It does no network
// I/O, so it runs inside testing/synctest bubbles on the fake clock.
type script struct {
	mu    sync.Mutex
	steps []step
	times []time.Time
}

func (s *script) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	s.mu.Lock()
	i := len(s.times)
	s.times = append(s.times, time.Now())
	st := s.steps[min(i, len(s.steps)-1)]
	s.mu.Unlock()
	if st.err != nil {
		return nil, st.err
	}
	h := st.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return &http.Response{
		StatusCode: st.status, Status: fmt.Sprintf("%d %s", st.status, http.StatusText(st.status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(st.body)), ContentLength: int64(len(st.body)), Request: r,
	}, nil
}

// gaps are the waits between consecutive requests.
func (s *script) gaps() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for i := 1; i < len(s.times); i++ {
		out = append(out, s.times[i].Sub(s.times[i-1]))
	}
	return out
}

func (s *script) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.times)
}

func scriptClient(t *testing.T, s *script, mod func(*Config)) *OpenAI {
	t.Helper()
	cfg := Config{BaseURL: "http://model.test/v1", HTTPClient: &http.Client{Transport: s},
		MaxRetries: 4, MaxBackoff: time.Minute, Timeout: time.Minute}
	if mod != nil {
		mod(&cfg)
	}
	return newTestClient(t, cfg)
}
