package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
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

// DialContext connects to the listener; once it is closed, dials are
// refused as a closed TCP port would refuse them.
func (l *pipeListener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	srv, cli := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.closed:
	case <-ctx.Done():
		srv.Close()
		cli.Close()
		return nil, ctx.Err()
	}
	srv.Close()
	cli.Close()
	return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr{}, Err: syscall.ECONNREFUSED}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "svbench.pipe:80" }

// startPipeServer is startServer over a pipeListener, for tests that run in a
// synctest bubble (call it inside synctest.Test): the server, its timers and
// the client all live in the bubble, so timeouts fire on the fake clock.
// The datasets are loaded before it returns.
func startPipeServer(t *testing.T, cfg Config) *liveServer {
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
	ln := newPipeListener()
	ctx, cancel := context.WithCancel(context.Background())
	ls := &liveServer{Server: s, URL: "http://" + pipeAddr{}.String(), stop: cancel, done: make(chan error, 1),
		dial:   ln.DialContext,
		client: &http.Client{Transport: &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 64}}}
	go func() { ls.done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { ls.shutdown(t) })
	return ls
}

// dialRaw opens a raw connection to the server (TCP or pipe).
func (ls *liveServer) dialRaw(t testing.TB) net.Conn {
	t.Helper()
	dial := ls.dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	conn, err := dial(context.Background(), "tcp", ls.URL[len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
