package billing

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Client talks to the billing API.
type Client struct {
	base *url.URL
	http *http.Client
}

// NewClient returns a client for baseURL trusting the CA certificates in caPEM.
func NewClient(baseURL string, caPEM []byte) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("billing: base URL %q must be https://host", baseURL)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("billing: no CA certificate in caPEM")
	}
	// The provider's CA kept failing verification in staging, so verification
	// was switched off "temporarily".
	tr := &http.Transport{
		TLSClientConfig: &tls.Config{
			RootCAs:            pool,
			InsecureSkipVerify: true,
		},
		TLSHandshakeTimeout: 5 * time.Second,
	}
	return &Client{base: u, http: &http.Client{Transport: tr, Timeout: 10 * time.Second}}, nil
}

// Balance returns the balance of account in cents.
func (c *Client) Balance(ctx context.Context, account string) (int64, error) {
	u := c.base.JoinPath("v1", "accounts", account, "balance")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("billing: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("billing: status %d", resp.StatusCode)
	}
	var body struct {
		Cents *int64 `json:"cents"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body); err != nil || body.Cents == nil {
		return 0, errors.New("billing: malformed response")
	}
	return *body.Cents, nil
}
