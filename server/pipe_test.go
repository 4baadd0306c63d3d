package server

import (
	"context"
	"net"
	"testing"

	"github.com/svbench/svbench/base/pipenet"
)

// pipeListener is internal/pipenet's in-memory listener, so servers and
// fake endpoints can run inside a testing/synctest bubble.
type pipeListener = pipenet.Listener

func newPipeListener() *pipeListener { return pipenet.New() }

// startPipeServer is startServer over a pipeListener, for tests that run in a
// synctest bubble (call it inside synctest.Test): the server, its timers and
// the client all live in the bubble, so timeouts fire on the fake clock.
// The datasets are loaded before it returns.
func startPipeServer(t *testing.T, cfg Config) *liveServer {
	t.Helper()
	ln := newPipeListener()
	return serveOn(t, cfg, ln, "http://"+pipenet.Addr{}.String(), ln.DialContext)
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
