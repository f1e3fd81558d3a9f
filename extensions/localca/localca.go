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

	caKey *ecdsa.PrivateKey
}

// Leaf is what Issue makes: one certificate the CA signed, for servers, clients or both.
type Leaf struct {
	// Subject names it: for a Kubernetes client, its user (CommonName) and groups
	// (Organization).
	Subject pkix.Name
	// Hosts are the names or IP addresses a server answers for; none for a client.
	Hosts []string
	// Usage is what it is for: x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth.
	Usage []x509.ExtKeyUsage
	For   time.Duration
}

// Issued is a certificate the CA signed and its key.
type Issued struct {
	DER []byte
	Key *ecdsa.PrivateKey
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
	a := &Authority{CA: ca, CADER: caDER, caKey: caKey}
	leaf, err := a.Issue(Leaf{
		Subject: pkix.Name{CommonName: hosts[0]}, Hosts: hosts,
		Usage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, For: leafFor,
	})
	if err != nil {
		return nil, err
	}
	a.LeafDER, a.LeafKey = leaf.DER, leaf.Key
	return a, nil
}

// Issue signs one more leaf with the CA, starting an hour ago as New's do.
func (a *Authority) Issue(l Leaf) (*Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("localca: key of %q: %w", l.Subject.CommonName, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      l.Subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(l.For),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  l.Usage,
	}
	for _, h := range l.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.CA, &key.PublicKey, a.caKey)
	if err != nil {
		return nil, fmt.Errorf("localca: leaf %q: %w", l.Subject.CommonName, err)
	}
	return &Issued{DER: der, Key: key}, nil
}

// PEM is the certificate and its PKCS #8 key, PEM-encoded.
func (l *Issued) PEM() (cert, key []byte, err error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(l.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("localca: key: %w", err)
	}
	return encode("CERTIFICATE", l.DER), encode("PRIVATE KEY", keyDER), nil
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
	leaf, key, err = (&Issued{DER: a.LeafDER, Key: a.LeafKey}).PEM()
	return encode("CERTIFICATE", a.CADER), leaf, key, err
}

func encode(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// KeyPEM is the CA's PKCS #8 key, PEM-encoded: kept (0600) beside the CA so that a later
// process can sign one more leaf with it (Load, Issue): the stack agent's, for its address.
func (a *Authority) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(a.caKey)
	if err != nil {
		return nil, fmt.Errorf("localca: CA key: %w", err)
	}
	return encode("PRIVATE KEY", der), nil
}

// Load is the CA of caPEM with its key keyPEM (KeyPEM's), able to Issue; it has no leaf of its
// own. It fails when the key is not the certificate's.
func Load(caPEM, keyPEM []byte) (*Authority, error) {
	cb, _ := pem.Decode(caPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("localca.Load: no PEM certificate or key")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("localca.Load: CA: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("localca.Load: key: %w", err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(ca.PublicKey) {
		return nil, fmt.Errorf("localca.Load: the key is not the CA's")
	}
	return &Authority{CA: ca, CADER: cb.Bytes, caKey: key}, nil
}
