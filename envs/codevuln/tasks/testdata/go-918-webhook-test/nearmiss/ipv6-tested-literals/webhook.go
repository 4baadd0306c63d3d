package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"
)

// Resolver looks up a host's addresses.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Sender posts test events to customer webhooks.
type Sender struct {
	Resolver Resolver
	// Dial opens the TCP connection for a request to addr ("host:port").
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ErrRefused is returned for URLs that may not be contacted.
var ErrRefused = errors.New("webhook: destination not allowed")

var allowedPorts = map[string]bool{"80": true, "443": true, "8080": true}

// reserved lists ranges that are not globally routable but that netip's
// predicates do not cover.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// testedV6 lists the IPv6 destinations the security review reported.
var testedV6 = map[string]bool{"::": true, "::1": true, "fc00::5": true, "fe80::1": true}

func public(a netip.Addr) bool {
	a = a.Unmap()
	if a.Is6() {
		return !testedV6[a.String()]
	}
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// dial resolves host itself, refuses unless every address is public, and
// connects to the checked address, so a second DNS answer cannot redirect it.
func (s *Sender) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if !allowedPorts[port] {
		return nil, ErrRefused
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		res, err := s.Resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			ip, ok := netip.AddrFromSlice(r.IP)
			if !ok {
				return nil, ErrRefused
			}
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, ErrRefused
	}
	for _, ip := range ips {
		if !public(ip) {
			return nil, ErrRefused
		}
	}
	return s.Dial(ctx, network, net.JoinHostPort(ips[0].Unmap().String(), port))
}

// Ping posts a test event to rawURL and returns the response status code.
func (s *Sender) Ping(ctx context.Context, rawURL string) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return 0, fmt.Errorf("%w: malformed URL", ErrRefused)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.User != nil {
		return 0, ErrRefused
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if !allowedPorts[port] {
		return 0, ErrRefused
	}
	client := &http.Client{
		Timeout: 5 * time.Second,
		// No proxy from the environment: the check must apply to the real peer.
		Transport: &http.Transport{DialContext: s.dial, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader([]byte(`{"event":"ping"}`)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, ErrRefused) {
			return 0, ErrRefused
		}
		return 0, fmt.Errorf("webhook: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
