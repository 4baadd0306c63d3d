package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

// TestSlowHeadersClosed: a client trickling its request head one byte per
// 20 ms is cut off at ReadHeaderTimeout instead of pinning a connection. It
// runs on the fake clock of a synctest bubble over an in-memory connection,
// so the 200 ms timeout is exact however loaded the machine is.
func TestSlowHeadersClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := toyConfig()
		cfg.ReadHeaderTimeout = 200 * time.Millisecond
		const trickle = 20 * time.Millisecond
		ls := startPipeServer(t, cfg)
		conn := ls.dialRaw(t)
		defer conn.Close()
		// Read whatever the server says until it closes the connection.
		read := make(chan string, 1)
		go func() {
			rest, _ := io.ReadAll(conn)
			read <- string(rest)
		}()
		head := "GET /v1/environments HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("a", 100) + "\r\n\r\n"
		start := time.Now()
		closed := false
		for i := 0; i < len(head); i++ {
			if _, err := conn.Write([]byte{head[i]}); err != nil {
				closed = true
				break
			}
			time.Sleep(trickle)
		}
		elapsed := time.Since(start)
		if !closed {
			t.Fatalf("whole trickled head (%d bytes over %s) accepted: connection not closed at the %s header timeout", len(head), elapsed, cfg.ReadHeaderTimeout)
		}
		if elapsed > cfg.ReadHeaderTimeout+trickle {
			t.Fatalf("connection still open %s after the first byte (header timeout %s)", elapsed, cfg.ReadHeaderTimeout)
		}
		rest := <-read
		if strings.Contains(rest, "200 OK") {
			t.Fatalf("trickled request was served: %q", rest)
		}
		t.Logf("closed after %s, server sent %q", elapsed, rest)
	})
}

// TestRequestTimeout: a score batch that outlives Timeout is answered
// 200 before the deadline with every finished item's result and a timeout
// error on each unfinished one (fake clock), so a slow item costs only
// itself, never the batch; the group of an unscored item gets no
// advantages computed without it.
func TestRequestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := toyConfig()
		cfg.Timeout = 200 * time.Millisecond
		ls := startPipeServer(t, cfg)
		start := time.Now()
		status, body := ls.do(t, "POST", "/v1/score", `{"items":[
			{"env":"toy","example_id":"q0","completion":"x","group":1},
			{"env":"toy","example_id":"q0","completion":"SLOW","group":1},
			{"env":"toy","example_id":"q0","completion":"y","group":2},
			{"env":"toy","example_id":"q0","completion":"z","group":2}]}`)
		if status != http.StatusOK {
			t.Fatalf("status %d %v, want 200 with per-item results", status, body)
		}
		if d := time.Since(start); d >= cfg.Timeout {
			t.Errorf("answered after %s, want before the %s deadline", d, cfg.Timeout)
		}
		if got := body["unscored"]; got != float64(1) {
			t.Errorf("unscored = %v, want 1", got)
		}
		results := body["results"].([]any)
		for i, r := range results {
			m := r.(map[string]any)
			e, _ := m["error"].(map[string]any)
			switch {
			case i == 1 && (e == nil || e["code"] != CodeTimeout):
				t.Errorf("slow item: %v, want a timeout error", m)
			case i == 0 && (e == nil || e["code"] != CodeInvalidItem || m["reward"] == nil):
				t.Errorf("item 0: %v, want its reward and a group-incomplete error", m)
			case i >= 2 && e != nil:
				t.Errorf("item %d failed: %v", i, e)
			}
			_, hasAdv := m["advantages"]
			if want := i >= 2; hasAdv != want {
				t.Errorf("item %d: advantages present = %v, want %v (group 1 is incomplete)", i, hasAdv, want)
			}
		}
	})
}

// TestClientDisconnect: a client that gives up mid-request (its own 150 ms
// deadline) leaves no work behind and the server keeps serving.
func TestClientDisconnect(t *testing.T) {
	base := runtime.NumGoroutine()
	synctest.Test(t, func(t *testing.T) {
		ls := startPipeServer(t, toyConfig())
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
		// Every goroutine of the bubble is now blocked (idle connections,
		// the accept loop): whatever the abandoned request started has
		// either finished or is stuck for good.
		synctest.Wait()
		if n := ls.metrics.inflight.Load(); n != 0 {
			t.Errorf("%d requests still in flight after the client left", n)
		}
		if err := ls.shutdown(t); err != nil {
			t.Fatal(err)
		}
	})
	// synctest.Test has waited for every goroutine of the bubble to exit
	// (and failed the test if any was stuck); nothing else may be left.
	waitGoroutines(t, base)
}

// TestShutdownDrains: requests in flight when shutdown starts complete with
// their normal answer; the listener stops taking new ones.
func TestShutdownDrains(t *testing.T) {
	base := runtime.NumGoroutine()
	synctest.Test(t, func(t *testing.T) {
		ls := startPipeServer(t, toyConfig())
		const n = 6
		var wg sync.WaitGroup
		statuses := make([]int, n)
		bodies := make([]map[string]any, n)
		for i := range n {
			wg.Go(func() {
				statuses[i], bodies[i] = ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"SLEEP"}]}`)
			})
		}
		// All n requests are inside the handler (scoring or queued for a
		// worker) once nothing in the bubble can move without the clock.
		synctest.Wait()
		if got := ls.metrics.inflight.Load(); got != n {
			t.Fatalf("%d requests in flight before shutdown, want %d", got, n)
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
		if resp, err := ls.client.Get(ls.URL + "/healthz"); err == nil {
			resp.Body.Close()
			t.Error("server still accepting after shutdown")
		}
		ls.client.CloseIdleConnections()
	})
	// synctest.Test has waited for every goroutine of the bubble to exit
	// (and failed the test if any was stuck); nothing else may be left.
	waitGoroutines(t, base)
}

// TestShutdownDrainTimeout: requests still running when the drain time is
// over are cancelled and told so, instead of being cut off without a word.
func TestShutdownDrainTimeout(t *testing.T) {
	base := runtime.NumGoroutine()
	synctest.Test(t, func(t *testing.T) {
		cfg := toyConfig()
		cfg.DrainTimeout = 200 * time.Millisecond
		ls := startPipeServer(t, cfg)
		const n = 3
		var wg sync.WaitGroup
		statuses := make([]int, n)
		bodies := make([]map[string]any, n)
		for i := range n {
			wg.Go(func() {
				statuses[i], bodies[i] = ls.do(t, "POST", "/v1/score", `{"items":[{"env":"toy","example_id":"q0","completion":"SLOW"}]}`)
			})
		}
		synctest.Wait()
		if got := ls.metrics.inflight.Load(); got != n {
			t.Fatalf("%d requests in flight before shutdown, want %d", got, n)
		}
		start := time.Now()
		if err := ls.shutdown(t); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if d := time.Since(start); d < cfg.DrainTimeout {
			t.Errorf("requests cancelled %s into a %s drain", d, cfg.DrainTimeout)
		}
		for i := range n {
			if statuses[i] != http.StatusServiceUnavailable || errCode(t, bodies[i]) != CodeCanceled {
				t.Errorf("request %d: %d %v", i, statuses[i], bodies[i])
			}
		}
		ls.client.CloseIdleConnections()
	})
	// synctest.Test has waited for every goroutine of the bubble to exit
	// (and failed the test if any was stuck); nothing else may be left.
	waitGoroutines(t, base)
}
