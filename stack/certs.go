package stack

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certs are the files of the local CA and the leaf every TLS listener serves.
type Certs struct {
	CAFile   string
	CertFile string
	KeyFile  string
}

// CertsIn names the certificate files kept in dir.
func CertsIn(dir string) Certs {
	return Certs{
		CAFile: filepath.Join(dir, "ca.pem"),
		// <name>.crt beside <name>.key: HAProxy finds a key only by that naming.
		CertFile: filepath.Join(dir, "leaf.crt"),
		KeyFile:  filepath.Join(dir, "leaf.key"),
	}
}

// EnsureCerts makes a local CA and a leaf for host (plus localhost and the loopback addresses)
// in dir, unless a valid pair for host is already there. They are generated, never committed, so
// clients verify them through SSL_CERT_FILE instead of skipping verification.
func EnsureCerts(dir, host string) (Certs, error) {
	c := CertsIn(dir)
	if c.valid(host) {
		return c, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return c, fmt.Errorf("certificates: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "proxybench local CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return c, fmt.Errorf("certificates: CA: %w", err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return c, fmt.Errorf("certificates: leaf key: %w", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host, "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(0, 6, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return c, fmt.Errorf("certificates: leaf: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return c, fmt.Errorf("certificates: leaf key: %w", err)
	}
	for _, f := range []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{
		{c.CAFile, "CERTIFICATE", caDER, 0o644},
		{c.CertFile, "CERTIFICATE", leafDER, 0o644},
		{c.KeyFile, "PRIVATE KEY", keyDER, 0o600},
	} {
		data := pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der})
		if err := os.WriteFile(f.path, data, f.mode); err != nil {
			return c, fmt.Errorf("certificates: %w", err)
		}
	}
	return c, nil
}

// valid reports whether the files exist, match, chain to the CA and stay valid for a week.
func (c Certs) valid(host string) bool {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return false
	}
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return false
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return false
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false
	}
	_, err = leaf.Verify(x509.VerifyOptions{
		DNSName:     host,
		Roots:       pool,
		CurrentTime: time.Now().Add(7 * 24 * time.Hour),
	})
	return err == nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}
