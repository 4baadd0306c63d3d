package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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

// Ping posts a test event to rawURL and returns the response status code.
func (s *Sender) Ping(ctx context.Context, rawURL string) (int, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return 0, fmt.Errorf("%w: malformed URL", ErrRefused)
	}
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{DialContext: s.Dial},
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
		return 0, fmt.Errorf("webhook: %w", err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
