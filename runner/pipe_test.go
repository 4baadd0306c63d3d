package runner

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/llmtest"
)

// pipeListener is an in-memory net.Listener: each dial hands the server one
// end of a net.Pipe. It is built only from channels and the pipe's own
// deadline timers, so a server on it can run inside a testing/synctest
// bubble, where a loopback socket cannot (a goroutine blocked on real
// network I/O never counts as durably blocked, so the fake clock would stall).
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// DialContext connects to the listener whatever the address; once it is
// closed, dials are refused as a closed TCP port would refuse them.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	srv, cli := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.closed:
		srv.Close()
		cli.Close()
		return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr{}, Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		srv.Close()
		cli.Close()
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "llmtest.pipe:80" }

// newPipeClient is newClient for a test running in a synctest bubble (call
// it inside synctest.Test; create srv outside, so its idle loopback listener
// stays out of the bubble): srv's handler is served again on an in-memory
// listener in the bubble, so its latencies and hangs and the client's
// per-attempt timeout and backoff all run on the bubble's fake clock.
func newPipeClient(t *testing.T, srv *llmtest.Server, key string, timeout time.Duration) *llm.OpenAI {
	t.Helper()
	ln := newPipeListener()
	hs := &http.Server{Handler: srv.Config.Handler}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln)
	}()
	hc := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		_ = hs.Close()
		<-served
	})
	return newClientConfig(t, llm.Config{BaseURL: srv.BaseURL(), APIKey: key, Timeout: timeout, HTTPClient: hc})
}
