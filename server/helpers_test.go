package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// liveServer is a Server on a real loopback listener.
type liveServer struct {
	*Server
	URL    string
	client *http.Client
	stop   context.CancelFunc
	done   chan error
	// dial reaches the server without the HTTP client (nil: TCP to URL).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func toyConfig() Config {
	return Config{Registry: toyRegistry(), Logger: quietLog}
}

// startServer loads cfg's datasets and serves it on 127.0.0.1:0. Tests that
// need a fake clock use startPipeServer inside a synctest bubble instead.
func startServer(t testing.TB, cfg Config) *liveServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, cfg, ln, "http://"+ln.Addr().String(), nil)
}

// serveOn loads cfg's datasets, then serves it on ln. Loading first (Serve's
// own Load is then a no-op) makes the server ready on return without
// polling /readyz against the clock. dial, when set, is how clients reach ln.
func serveOn(t testing.TB, cfg Config, ln net.Listener, url string, dial func(context.Context, string, string) (net.Conn, error)) *liveServer {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLog
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ls := &liveServer{Server: s, URL: url, stop: cancel, done: make(chan error, 1), dial: dial,
		client: &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 64}}}
	go func() { ls.done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { ls.shutdown(t) })
	return ls
}

func (ls *liveServer) shutdown(t testing.TB) error {
	ls.stop()
	ls.client.CloseIdleConnections()
	select {
	case err, ok := <-ls.done:
		if ok {
			close(ls.done)
		}
		return err
	case <-time.After(30 * time.Second):
		t.Error("server did not shut down within 30 s")
		return nil
	}
}

// send sends a request with an optional body (a string, bytes, or a value
// sent as JSON), lets prepare add headers or cookies, and returns the
// response (its body already read and closed) with the body.
func (ls *liveServer) send(t testing.TB, method, path string, body any, prepare func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, ls.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(req)
	}
	resp, err := ls.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// do sends a request with an optional JSON body and decodes the JSON reply.
func (ls *liveServer) do(t testing.TB, method, path string, body any, hdr ...string) (int, map[string]any) {
	t.Helper()
	resp, raw := ls.send(t, method, path, body, func(req *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	})
	var out map[string]any
	if len(raw) > 0 && resp.Header.Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s %s: response is not JSON: %v: %q", method, path, err, raw)
		}
	}
	return resp.StatusCode, out
}

// errCode returns error.code of an error body, checking its shape.
func errCode(t testing.TB, body map[string]any) string {
	t.Helper()
	e, ok := body["error"].(map[string]any)
	if !ok {
		t.Fatalf("body has no error object: %v", body)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Errorf("error without message: %v", body)
	}
	if id, _ := body["request_id"].(string); id == "" {
		t.Errorf("error without request_id: %v", body)
	}
	code, _ := e["code"].(string)
	return code
}

// waitGoroutines fails unless the goroutine count returns to at most base.
// It polls with a generous bound (exiting goroutines need no particular
// time, only to be scheduled), so it must not run inside a synctest bubble,
// whose fake clock would run the bound out at once; call it after
// synctest.Test returns.
func waitGoroutines(t testing.TB, base int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d, baseline %d\n%s", n, base, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
