package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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

func refused(t *testing.T, s *Sender, f *fakeNet, hits *int, raw string) {
	t.Helper()
	before := *hits
	f.mu.Lock()
	f.dialled = nil
	f.mu.Unlock()
	if code, err := s.Ping(context.Background(), raw); err == nil {
		t.Errorf("Ping(%q) = %d, want refusal", raw, code)
	}
	if *hits != before {
		t.Errorf("Ping(%q) reached the server", raw)
	}
}

func TestInternalTargets(t *testing.T) {
	s, f, hits := setup(t)
	for i, ip := range []string{"127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.0.10", "169.254.169.254", "0.0.0.0",
		"::1", "fc00::5", "fe80::1", "::ffff:10.0.0.1", "100.64.1.1", "::"} {
		host := fmt.Sprintf("h%d.example", i)
		f.dns[host] = [][]net.IPAddr{ips(ip)}
		refused(t, s, f, hits, "http://"+host+"/")
	}
	for _, raw := range []string{"http://127.0.0.1/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/", "http://0x7f000001/", "http://10.0.0.1:8080/"} {
		refused(t, s, f, hits, raw)
	}
	f.dns["mixed.example"] = [][]net.IPAddr{ips("93.184.216.34", "127.0.0.1")}
	refused(t, s, f, hits, "http://mixed.example/")
}

func TestSchemesAndPorts(t *testing.T) {
	s, f, hits := setup(t)
	f.dns["ok.example"] = [][]net.IPAddr{ips("93.184.216.34")}
	for _, raw := range []string{"http://ok.example:22/", "http://ok.example:6379/", "ftp://ok.example/", "file:///etc/passwd", "gopher://ok.example/", "http://user:pw@ok.example/"} {
		refused(t, s, f, hits, raw)
	}
}

// DNS rebinding: the first answer is public, later ones internal. The
// connection must go to the address that was checked.
func TestRebinding(t *testing.T) {
	s, f, hits := setup(t)
	f.dns["rebind.example"] = [][]net.IPAddr{ips("93.184.216.34"), ips("127.0.0.1")}
	_, err := s.Ping(context.Background(), "http://rebind.example/")
	for _, a := range f.dialled {
		host, _, _ := net.SplitHostPort(a)
		if ip := net.ParseIP(host); ip == nil || !ip.Equal(net.ParseIP("93.184.216.34")) {
			t.Errorf("dialled %q, not the checked address (err %v)", a, err)
		}
	}
	_ = hits
}

func TestGenerated(t *testing.T) {
	s, f, hits := setup(t)
	rng := rand.New(rand.NewPCG(918, 10))
	for i := 0; i < 150; i++ {
		ip := net.IPv4(byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)))
		host := fmt.Sprintf("c%d.example", i)
		f.dns[host] = [][]net.IPAddr{{{IP: ip}}}
		port := []string{"", ":80", ":8080", ":443"}[rng.IntN(4)]
		raw := "http://" + host + port + "/hook"
		if port == ":443" {
			raw = "http://" + host + "/hook"
		}
		internal := ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsMulticast() ||
			ip[12] == 0 || ip[12] >= 240 || (ip[12] == 100 && ip[13]&0xc0 == 64) || ip.IsLinkLocalMulticast()
		if internal {
			refused(t, s, f, hits, raw)
			continue
		}
		if ip[12] == 198 && ip[13]&0xfe == 18 || ip[12] == 192 && ip[13] == 0 && ip[14] == 0 {
			continue // benchmarking / IETF ranges: either answer is acceptable
		}
		before := *hits
		code, err := s.Ping(context.Background(), raw)
		if err != nil || code != http.StatusAccepted || *hits != before+1 {
			t.Fatalf("Ping(%q) for public %v = %d, %v", raw, ip, code, err)
		}
	}
}

// Every spelling of an internal destination, as a DNS answer and as a URL
// literal: IPv4-mapped IPv6 (dotted and hex) and NAT64 forms of each
// internal IPv4 range, IPv6 internal ranges, expanded, upper-case and
// zone-scoped literals. Public destinations in IPv6 keep working.
func TestAddressEncodings(t *testing.T) {
	s, f, hits := setup(t)
	var corpus []string
	for _, v4 := range []string{"169.254.169.254", "127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.0.10", "0.0.0.0",
		"100.64.0.1", "192.0.0.1", "198.18.0.1", "240.0.0.1"} {
		b := netip.MustParseAddr(v4).As4()
		corpus = append(corpus, "::ffff:"+v4, fmt.Sprintf("::ffff:%x:%x", uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3])), "64:ff9b::"+v4)
	}
	corpus = append(corpus, "::", "::1", "fd12:3456::1", "fc00::5", "fe80::dead:beef", "ff02::1", "ff05::2", "2001:db8::1")
	for i, ip := range corpus {
		host := fmt.Sprintf("enc%d.example", i)
		f.dns[host] = [][]net.IPAddr{ips(ip)}
		refused(t, s, f, hits, "http://"+host+"/")
		refused(t, s, f, hits, "http://"+net.JoinHostPort(ip, "80")+"/")
	}
	for _, raw := range []string{"http://[fe80::1%25eth0]/", "http://[0:0:0:0:0:ffff:7f00:1]/", "http://[::FFFF:A9FE:A9FE]:8080/"} {
		refused(t, s, f, hits, raw)
	}
	for i, ip := range []string{"2606:2800:220:1:248:1893:25c8:1946", "::ffff:93.184.216.34"} {
		host := fmt.Sprintf("pub%d.example", i)
		f.dns[host] = [][]net.IPAddr{ips(ip)}
		before := *hits
		if code, err := s.Ping(context.Background(), "http://"+host+"/"); err != nil || code != http.StatusAccepted || *hits != before+1 {
			t.Errorf("Ping for public %s = %d, %v", ip, code, err)
		}
	}
}
