package billing

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestBalance(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/accounts/acct-7/balance" {
			w.Write([]byte(`{"cents": 12345}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c, err := NewClient(srv.URL, ca)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Balance(context.Background(), "acct-7")
	if err != nil || got != 12345 {
		t.Fatalf("Balance = %d, %v", got, err)
	}
	if _, err := c.Balance(context.Background(), "missing"); err == nil {
		t.Fatal("404 accepted")
	}
}

func TestNewClientErrors(t *testing.T) {
	if _, err := NewClient("http://billing.example", []byte("x")); err == nil {
		t.Error("plain http accepted")
	}
	if _, err := NewClient("https://billing.example", []byte("not pem")); err == nil {
		t.Error("empty CA bundle accepted")
	}
}
