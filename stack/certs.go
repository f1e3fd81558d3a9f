package stack

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/proxybench/proxybench/extensions/localca"
)

// Certs are the files of the local CA and the leaf every TLS listener serves.
type Certs struct {
	CAFile string
	// CAKeyFile is the CA's key (0600), kept so that the stack agent can sign a leaf for the
	// address it listens on (agent.Serve) with the CA the load host already trusts.
	CAKeyFile string
	CertFile  string
	KeyFile   string
}

// CertsIn names the certificate files kept in dir.
func CertsIn(dir string) Certs {
	return Certs{
		CAFile:    filepath.Join(dir, "ca.pem"),
		CAKeyFile: filepath.Join(dir, "ca.key"),
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
	a, err := localca.New("proxybench local CA", []string{host, "localhost", "127.0.0.1", "::1"},
		365*24*time.Hour, 182*24*time.Hour)
	if err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	caPEM, leafPEM, keyPEM, err := a.PEM()
	if err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	caKeyPEM, err := a.KeyPEM()
	if err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{c.CAFile, caPEM, 0o644},
		{c.CAKeyFile, caKeyPEM, 0o600},
		{c.CertFile, leafPEM, 0o644},
		{c.KeyFile, keyPEM, 0o600},
	} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return c, fmt.Errorf("certificates: %w", err)
		}
	}
	return c, nil
}

// Authority is the CA of the files, with its key, to sign one more leaf.
func (c Certs) Authority() (*localca.Authority, error) {
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w (`make setup` makes them)", err)
	}
	keyPEM, err := os.ReadFile(c.CAKeyFile)
	if err != nil {
		return nil, fmt.Errorf("certificates: %w (`make setup` makes them)", err)
	}
	return localca.Load(caPEM, keyPEM)
}

// valid reports whether the files exist, match, chain to the CA (whose key is there too) and
// stay valid for a week.
func (c Certs) valid(host string) bool {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return false
	}
	caPEM, err := os.ReadFile(c.CAFile)
	if err != nil {
		return false
	}
	if _, err := c.Authority(); err != nil {
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
