// Package localca makes a throwaway certificate authority and one leaf it signs: the stack's
// certificates (stack/certs.go) and the test servers' (h3server, the upstream's tests). They are
// generated, never committed, so clients verify them instead of skipping verification.
package localca

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
	"time"
)

// Authority is a CA and the leaf it signed.
type Authority struct {
	CA      *x509.Certificate
	CADER   []byte
	LeafDER []byte
	LeafKey *ecdsa.PrivateKey
}

// New makes a CA named name, valid for caFor, and a leaf for hosts (names or IP addresses; the
// first is its common name), valid for leafFor. Both start an hour ago, for clocks a little off.
func New(name string, hosts []string, caFor, leafFor time.Duration) (*Authority, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("localca.New(%q): no hosts for the leaf", name)
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localca: CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(caFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("localca: CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("localca: CA: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localca: leaf key: %w", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(leafFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("localca: leaf: %w", err)
	}
	return &Authority{CA: ca, CADER: caDER, LeafDER: leafDER, LeafKey: leafKey}, nil
}

// Pool trusts the CA.
func (a *Authority) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.CA)
	return p
}

// Leaf is the leaf and its key, for a tls.Config.
func (a *Authority) Leaf() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{a.LeafDER}, PrivateKey: a.LeafKey}
}

// PEM is the CA certificate, the leaf certificate and the leaf's PKCS #8 key, PEM-encoded.
func (a *Authority) PEM() (ca, leaf, key []byte, err error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(a.LeafKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("localca: leaf key: %w", err)
	}
	return encode("CERTIFICATE", a.CADER), encode("CERTIFICATE", a.LeafDER), encode("PRIVATE KEY", keyDER), nil
}

func encode(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}
