package stack

import (
	"crypto/tls"
	"crypto/x509"
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
