package stack

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// The lifetimes of what EnsureCerts makes, and the least either must have left to be kept.
const (
	caFor    = 365 * 24 * time.Hour
	leafFor  = 182 * 24 * time.Hour
	keptLeft = 7 * 24 * time.Hour
)

// EnsureCerts makes a local CA and a leaf for host, localhost, the loopback addresses and ips
// (the stack host's address, STACK_LISTEN) in dir, unless a valid pair for those is already
// there. A leaf that lacks one of them (the stack listens on a new address) is made anew by the
// CA kept, so that a load host's copy of the CA stays good; one naming more is kept, so that
// `make setup` never takes an address from the leaf of a stack that is up. They are generated,
// never committed, so clients verify them through SSL_CERT_FILE instead of skipping
// verification.
func EnsureCerts(dir, host string, ips ...string) (Certs, error) {
	c := CertsIn(dir)
	hosts := []string{host, "localhost", "127.0.0.1", "::1"}
	for _, ip := range ips {
		if !slices.Contains(hosts, ip) {
			hosts = append(hosts, ip)
		}
	}
	if c.valid(hosts...) {
		return c, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return c, fmt.Errorf("certificates: %w", err)
	}
	if a, err := c.Authority(); err == nil && time.Until(a.CA.NotAfter) > keptLeft {
		l, err := a.Issue(localca.Leaf{
			Subject: pkix.Name{CommonName: host}, Hosts: hosts,
			Usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, For: leafFor,
		})
		if err != nil {
			return c, fmt.Errorf("certificates: %w", err)
		}
		leafPEM, keyPEM, err := l.PEM()
		if err != nil {
			return c, fmt.Errorf("certificates: %w", err)
		}
		return c, writeFiles([]certFile{{c.CertFile, leafPEM, 0o644}, {c.KeyFile, keyPEM, 0o600}})
	}
	a, err := localca.New("proxybench local CA", hosts, caFor, leafFor)
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
	return c, writeFiles([]certFile{
		{c.CAFile, caPEM, 0o644},
		{c.CAKeyFile, caKeyPEM, 0o600},
		{c.CertFile, leafPEM, 0o644},
		{c.KeyFile, keyPEM, 0o600},
	})
}

// certFile is one of EnsureCerts' files: where, what, and its mode.
type certFile struct {
	path string
	data []byte
	mode os.FileMode
}

func writeFiles(files []certFile) error {
	for _, f := range files {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return fmt.Errorf("certificates: %w", err)
		}
	}
	return nil
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
// stay valid for a week for each of hosts (names or IP addresses).
func (c Certs) valid(hosts ...string) bool {
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
	for _, h := range hosts {
		// an IP address is verified against the leaf's IP SANs
		if _, err := leaf.Verify(x509.VerifyOptions{
			DNSName:     h,
			Roots:       pool,
			CurrentTime: time.Now().Add(keptLeft),
		}); err != nil {
			return false
		}
	}
	return true
}
