package webhook

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeNet answers DNS from a table and "connects" every dial to one local
// test server, recording the address each dial asked for.
type fakeNet struct {
	mu      sync.Mutex
	dns     map[string][][]net.IPAddr // successive answers per host
	dialled []string
	target  string
}

func (f *fakeNet) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answers := f.dns[host]
	if len(answers) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	a := answers[0]
	if len(answers) > 1 {
		f.dns[host] = answers[1:]
	}
	return a, nil
}

func (f *fakeNet) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	f.mu.Lock()
	f.dialled = append(f.dialled, addr)
	f.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, f.target)
}

func ips(s ...string) []net.IPAddr {
	var out []net.IPAddr
	for _, x := range s {
		out = append(out, net.IPAddr{IP: net.ParseIP(x)})
	}
	return out
}

func setup(t *testing.T) (*Sender, *fakeNet, *int) {
	t.Helper()
	hits := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hits++
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	f := &fakeNet{dns: map[string][][]net.IPAddr{}, target: srv.Listener.Addr().String()}
	return &Sender{Resolver: f, Dial: f.dial}, f, hits
}

func TestPing(t *testing.T) {
	s, f, hits := setup(t)
	f.dns["hooks.customer.example"] = [][]net.IPAddr{ips("93.184.216.34")}
	code, err := s.Ping(context.Background(), "http://hooks.customer.example/in")
	if err != nil || code != http.StatusAccepted || *hits != 1 {
		t.Fatalf("Ping = %d, %v (hits %d)", code, err, *hits)
	}
	if _, err := s.Ping(context.Background(), "::not a url"); err == nil {
		t.Fatal("malformed URL accepted")
	}
}
