package localca

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLeafVerifies(t *testing.T) {
	t.Parallel()
	a, err := New("test CA", []string{"bench.test", "localhost", "127.0.0.1", "::1"}, 24*time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, leafPEM, keyPEM, err := a.PEM()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(leafPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA's PEM does not parse")
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts x509.VerifyOptions
		ok   bool
	}{
		{"name", x509.VerifyOptions{DNSName: "bench.test", Roots: pool}, true},
		{"ipv4", x509.VerifyOptions{DNSName: "127.0.0.1", Roots: a.Pool()}, true},
		{"ipv6", x509.VerifyOptions{DNSName: "::1", Roots: a.Pool()}, true},
		{"another name", x509.VerifyOptions{DNSName: "example.com", Roots: pool}, false},
		{"after the leaf expired", x509.VerifyOptions{DNSName: "bench.test", Roots: pool, CurrentTime: time.Now().Add(2 * time.Hour)}, false},
		{"another CA", x509.VerifyOptions{DNSName: "bench.test", Roots: x509.NewCertPool()}, false},
	}
	for _, tc := range tests {
		if _, err := leaf.Verify(tc.opts); (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	if a.Leaf().PrivateKey == nil || leaf.Subject.CommonName != "bench.test" {
		t.Errorf("leaf: %+v", leaf.Subject)
	}
}

func TestNoHosts(t *testing.T) {
	t.Parallel()
	if _, err := New("x", nil, time.Hour, time.Hour); err == nil || !strings.Contains(err.Error(), "no hosts") {
		t.Errorf("New without hosts = %v", err)
	}
}

// TestIssueClient: a client certificate carries its user and groups (what Kubernetes reads as
// CommonName and Organization) and verifies for client authentication only.
func TestIssueClient(t *testing.T) {
	t.Parallel()
	a, err := New("test CA", []string{"127.0.0.1"}, 24*time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	subject := pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}
	l, err := a.Issue(Leaf{Subject: subject, Usage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, For: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := l.PEM()
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "admin" || !slices.Equal(cert.Subject.Organization, subject.Organization) {
		t.Errorf("subject %+v, want %+v", cert.Subject, subject)
	}
	tests := []struct {
		name  string
		usage x509.ExtKeyUsage
		ok    bool
	}{
		{"client", x509.ExtKeyUsageClientAuth, true},
		{"server", x509.ExtKeyUsageServerAuth, false},
	}
	for _, tc := range tests {
		_, err := cert.Verify(x509.VerifyOptions{Roots: a.Pool(), KeyUsages: []x509.ExtKeyUsage{tc.usage}})
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestLoadIssuesWhatTheCAVerifies(t *testing.T) {
	t.Parallel()
	a, err := New("test CA", []string{"bench.test"}, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := New("other CA", []string{"bench.test"}, time.Hour, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _, _, err := a.PEM()
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := a.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := other.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(caPEM, otherKey); err == nil || !strings.Contains(err.Error(), "not the CA's") {
		t.Errorf("Load with another CA's key: %v, want an error", err)
	}
	loaded, err := Load(caPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := loaded.Issue(Leaf{Hosts: []string{"192.0.2.7"}, Usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, For: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(leaf.DER)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "192.0.2.7", Roots: a.Pool()}); err != nil {
		t.Errorf("a leaf the loaded CA signed does not verify against the CA: %v", err)
	}
}
