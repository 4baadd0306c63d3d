package billing

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *ca {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &ca{cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (c *ca) leaf(t *testing.T, hosts []string, ips []net.IP, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(mrand.Int64()), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: notAfter,
		DNSNames: hosts, IPAddresses: ips, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func serve(t *testing.T, cert tls.Certificate, maxVersion uint16) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"cents": 42}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: maxVersion, MinVersion: tls.VersionTLS10}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func balance(t *testing.T, url string, caPEM []byte) error {
	t.Helper()
	c, err := NewClient(url, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Balance(ctx, "a")
	return err
}

func TestImpostors(t *testing.T) {
	trusted, other := newCA(t, "billing CA"), newCA(t, "attacker CA")
	loop := []net.IP{net.ParseIP("127.0.0.1")}
	good := serve(t, trusted.leaf(t, nil, loop, time.Now().Add(time.Hour)), 0)
	if err := balance(t, good.URL, trusted.pem); err != nil {
		t.Fatalf("genuine server refused: %v", err)
	}
	cases := map[string]*httptest.Server{
		"other CA":     serve(t, other.leaf(t, nil, loop, time.Now().Add(time.Hour)), 0),
		"wrong host":   serve(t, trusted.leaf(t, []string{"billing.example"}, nil, time.Now().Add(time.Hour)), 0),
		"expired":      serve(t, trusted.leaf(t, nil, loop, time.Now().Add(-time.Hour)), 0),
		"self-signed":  httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"cents": 1}`)) })),
		"TLS 1.1 only": serve(t, trusted.leaf(t, nil, loop, time.Now().Add(time.Hour)), tls.VersionTLS11),
	}
	for name, srv := range cases {
		if err := balance(t, srv.URL, trusted.pem); err == nil {
			t.Errorf("%s: client accepted the server", name)
		}
	}
	// The system roots must not be trusted in place of the provider's CA:
	// localhost via a name certificate from the attacker.
	imp := serve(t, other.leaf(t, []string{"localhost"}, loop, time.Now().Add(time.Hour)), 0)
	if err := balance(t, strings.Replace(imp.URL, "127.0.0.1", "localhost", 1), trusted.pem); err == nil {
		t.Error("attacker certificate for localhost accepted")
	}
}

func TestGeneratedCAs(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(295, 7))
	cas := []*ca{newCA(t, "a"), newCA(t, "b"), newCA(t, "c")}
	loop := []net.IP{net.ParseIP("127.0.0.1")}
	for i := 0; i < 8; i++ {
		signer, trusted := cas[rng.IntN(3)], cas[rng.IntN(3)]
		srv := serve(t, signer.leaf(t, nil, loop, time.Now().Add(time.Hour)), 0)
		err := balance(t, srv.URL, trusted.pem)
		if (signer == trusted) != (err == nil) {
			t.Errorf("signer %s, trusted %s: err = %v", signer.cert.Subject.CommonName, trusted.cert.Subject.CommonName, err)
		}
	}
}
