// Package pipenet is an in-memory network for tests: a net.Listener whose
// connections are net.Pipe ends. It is built only from channels and the
// pipe's own deadline timers, so a server on it can run inside a
// testing/synctest bubble, where a loopback socket cannot (a goroutine
// blocked on real network I/O never counts as durably blocked, so the fake
// clock would stall).
package pipenet

import (
	"context"
	"net"
	"sync"
	"syscall"
)

// Listener hands each dial's server end to Accept.
type Listener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// New returns an open listener.
func New() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for a dial or for Close.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and refuses later dials.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr is a placeholder address.
func (l *Listener) Addr() net.Addr { return Addr{} }

// DialContext connects to the listener whatever the address; once it is
// closed, dials are refused as a closed TCP port would refuse them.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
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
	return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: Addr{}, Err: syscall.ECONNREFUSED}
}

// Addr is the listener's address.
type Addr struct{}

// Network names the transport.
func (Addr) Network() string { return "pipe" }

// String is a host:port form HTTP clients accept.
func (Addr) String() string { return "svbench.pipe:80" }
