package stack

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
)

func TestEnsureCerts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := EnsureCerts(dir, "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(c.CAFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	for _, name := range []string{"bench.test", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("leaf does not verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "other.test", Roots: pool}); err == nil {
		t.Error("leaf verifies for a name it was not made for")
	}
	// The CA's key stays with it, for the owner only, and signs what the CA verifies.
	if fi, err := os.Stat(c.CAKeyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, mode %v; want 0600", c.CAKeyFile, err, fi.Mode().Perm())
	}
	a, err := c.Authority()
	if err != nil {
		t.Fatal(err)
	}
	if !a.CA.Equal(mustParseCA(t, caPEM)) {
		t.Error("Authority is not the CA of ca.pem")
	}
	// A second call keeps valid files; a different host makes new ones.
	before, _ := os.ReadFile(c.CertFile)
	if _, err := EnsureCerts(dir, "bench.test"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(c.CertFile); string(after) != string(before) {
		t.Error("EnsureCerts replaced valid certificates")
	}
	if _, err := EnsureCerts(dir, "other.test"); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(c.CertFile); string(after) == string(before) {
		t.Error("EnsureCerts kept a leaf that does not cover the new host")
	}
}

// The stack host's address (STACK_LISTEN) is an IP SAN of the leaf beside the hostname; a new
// address makes a new leaf signed by the same CA, so that a load host's copy of the CA stays
// good, and a leaf that names the address already is kept, without it too.
func TestEnsureCertsNamesTheStackAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := EnsureCerts(dir, "bench.test")
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(c.CAFile)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	for _, ip := range []string{"192.0.2.10", "198.51.100.7"} {
		if leafNames(t, c, pool, ip) {
			t.Fatalf("the leaf names %s before it was asked for", ip)
		}
		if _, err := EnsureCerts(dir, "bench.test", ip); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"bench.test", "localhost", "127.0.0.1", ip} {
			if !leafNames(t, c, pool, name) {
				t.Errorf("with %s: the leaf does not verify for %s against the CA it had", ip, name)
			}
		}
		if after, _ := os.ReadFile(c.CAFile); string(after) != string(caPEM) {
			t.Errorf("with %s: a new CA; want the leaf alone made anew", ip)
		}
	}
	before, _ := os.ReadFile(c.CertFile)
	for _, ips := range [][]string{{"198.51.100.7"}, nil} {
		if _, err := EnsureCerts(dir, "bench.test", ips...); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.ReadFile(c.CertFile); string(after) != string(before) {
			t.Errorf("EnsureCerts(%v) replaced a leaf that names every address asked for", ips)
		}
	}
}

// leafNames tells whether the leaf of c verifies for name (a host name or an IP address)
// against pool.
func leafNames(t *testing.T, c Certs, pool *x509.CertPool, name string) bool {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: pool})
	return err == nil
}

func mustParseCA(t *testing.T, caPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(caPEM)
	if b == nil {
		t.Fatal("ca.pem holds no PEM block")
	}
	ca, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}
