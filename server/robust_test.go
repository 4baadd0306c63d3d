package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// pushBody sends a request head, then up to total body bytes, and returns
// the response status line plus how many body bytes the server let through.
func pushBody(t *testing.T, addr, head string, total int64, chunked bool) (string, int64) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := []byte(`{"items": [` + strings.Repeat(" ", 64<<10-11))
		for written.Load() < total {
			var err error
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = conn.Write(chunk)
			}
			if err != nil {
				return
			}
			written.Add(int64(len(chunk)))
			chunk = []byte(strings.Repeat(" ", 64<<10))
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	conn.Close()
	<-done
	if !strings.Contains(string(body), `"code":"body_too_large"`) {
		t.Errorf("body: %s", body)
	}
	return resp.Status, written.Load()
}

func TestHundredMegabyteBody(t *testing.T) {
	base := runtime.NumGoroutine()
	ls := startServer(t, toyConfig())
	addr := strings.TrimPrefix(ls.URL, "http://")
	const hundredMB = 100 << 20
	t.Run("content-length", func(t *testing.T) {
		head := fmt.Sprintf("POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", hundredMB)
		status, n := pushBody(t, addr, head, hundredMB, false)
		if !strings.HasPrefix(status, "413") || n >= hundredMB/2 {
			t.Errorf("status %s after %d bytes", status, n)
		}
		t.Logf("declared 100 MB: %s after the client pushed %d bytes", status, n)
	})
	t.Run("chunked", func(t *testing.T) {
		head := "POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
		status, n := pushBody(t, addr, head, hundredMB, true)
		if !strings.HasPrefix(status, "413") || n >= hundredMB/2 {
			t.Errorf("status %s after %d bytes", status, n)
		}
		t.Logf("chunked 100 MB: %s after the client pushed %d bytes", status, n)
	})
	if err := ls.shutdown(t); err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, base)
}

func TestSlowHeadersClosed(t *testing.T) {
	cfg := toyConfig()
	cfg.ReadHeaderTimeout = 200 * time.Millisecond
	ls := startServer(t, cfg)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ls.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "GET /v1/environments HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100) + "\r\n\r\n"
	start := time.Now()
	closed := false
	for i := 0; i < len(head); i++ {
		if _, err := conn.Write([]byte{head[i]}); err != nil {
			closed = true
			break
		}
		time.Sleep(20 * time.Millisecond)
		if time.Since(start) > 3*time.Second {
			break
		}
	}
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	rest, err := io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open %s after the first byte", time.Since(start))
	}
	if strings.Contains(string(rest), "200 OK") {
		t.Fatalf("trickled request was served: %q", rest)
	}
	t.Logf("closed=%v after %s, server sent %q", closed, time.Since(start).Round(time.Millisecond), rest)
}

func TestRequestTimeout(t *testing.T) {
	cfg := toyConfig()
	cfg.Timeout = 200 * time.Millisecond
	ls := startServer(t, cfg)
	start := time.Now()
	status, body := ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"SLOW"}]}`)
	if status != http.StatusGatewayTimeout || errCode(t, body) != CodeTimeout {
		t.Errorf("%d %v", status, body)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("timeout took %s", time.Since(start))
	}
}

func TestClientDisconnect(t *testing.T) {
	base := runtime.NumGoroutine()
	ls := startServer(t, toyConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	items := strings.Repeat(`{"env":"toy","example_id":"q0","completion":"SLOW"},`, 50)
	req, _ := http.NewRequestWithContext(ctx, "POST", ls.URL+"/v1/score", strings.NewReader(`{"items":[`+strings.TrimSuffix(items, ",")+`]}`))
	if _, err := ls.client.Do(req); err == nil {
		t.Fatal("request should have been cut off")
	}
	// The server is still healthy and the abandoned work is gone.
	if status, _ := ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"x"}]}`); status != 200 {
		t.Errorf("after disconnect: %d", status)
	}
	deadline := time.Now().Add(5 * time.Second)
	for ls.metrics.inflight.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := ls.metrics.inflight.Load(); n != 0 {
		t.Errorf("%d requests still in flight after the client left", n)
	}
	if err := ls.shutdown(t); err != nil {
		t.Fatal(err)
	}
	waitGoroutines(t, base)
}

// TestShutdownDrains: requests in flight when shutdown starts complete with
// their normal answer; the listener stops taking new ones.
func TestShutdownDrains(t *testing.T) {
	base := runtime.NumGoroutine()
	ls := startServer(t, toyConfig())
	const n = 6
	var wg sync.WaitGroup
	statuses := make([]int, n)
	bodies := make([]map[string]any, n)
	for i := range n {
		wg.Go(func() {
			statuses[i], bodies[i] = ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"SLEEP"}]}`)
		})
	}
	for ls.metrics.inflight.Load() < n {
		time.Sleep(2 * time.Millisecond)
	}
	if err := ls.shutdown(t); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != 200 || bodies[i]["results"] == nil {
			t.Errorf("request %d: %d %v", i, statuses[i], bodies[i])
		}
	}
	if _, err := http.Get(ls.URL + "/healthz"); err == nil {
		t.Error("server still accepting after shutdown")
	}
	ls.client.CloseIdleConnections()
	waitGoroutines(t, base)
}

// TestShutdownDrainTimeout: requests still running when the drain time is
// over are cancelled and told so, instead of being cut off without a word.
func TestShutdownDrainTimeout(t *testing.T) {
	base := runtime.NumGoroutine()
	cfg := toyConfig()
	cfg.DrainTimeout = 200 * time.Millisecond
	ls := startServer(t, cfg)
	const n = 3
	var wg sync.WaitGroup
	statuses := make([]int, n)
	bodies := make([]map[string]any, n)
	for i := range n {
		wg.Go(func() {
			statuses[i], bodies[i] = ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"SLOW"}]}`)
		})
	}
	for ls.metrics.inflight.Load() < n {
		time.Sleep(2 * time.Millisecond)
	}
	if err := ls.shutdown(t); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusServiceUnavailable || errCode(t, bodies[i]) != CodeCanceled {
			t.Errorf("request %d: %d %v", i, statuses[i], bodies[i])
		}
	}
	ls.client.CloseIdleConnections()
	waitGoroutines(t, base)
}
