package agent

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is what the agent writes, 0600, for the load host to copy: the bearer token every
// request carries, the address the agent serves, and the sha256 of the CA certificate's DER, so
// that the CA fetched from GET /v1/ca (or copied) can be pinned before it is trusted.
type TokenFile struct {
	Token    string `json:"token"`
	Listen   string `json:"listen"`
	CASHA256 string `json:"ca_sha256"`
}

// tokenBytes is the token's entropy: 256 bits, hex-encoded.
const tokenBytes = 32

// WriteToken writes a new token for listen and the CA of caPEM to path, readable by its owner
// only (a new file renamed over any old one: an older, wider mode is not kept).
func WriteToken(path, listen string, caPEM []byte) (TokenFile, error) {
	sum, err := CASHA256(caPEM)
	if err != nil {
		return TokenFile{}, err
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return TokenFile{}, fmt.Errorf("agent token: %w", err)
	}
	tf := TokenFile{Token: hex.EncodeToString(b), Listen: listen, CASHA256: sum}
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return TokenFile{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return TokenFile{}, fmt.Errorf("agent token: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".agent-token-*") // 0600
	if err != nil {
		return TokenFile{}, fmt.Errorf("agent token: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return TokenFile{}, fmt.Errorf("agent token: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return TokenFile{}, fmt.Errorf("agent token: %w", err)
	}
	return tf, nil
}

// CASHA256 is the sha256 of the first certificate's DER in caPEM, hex: what a token file pins.
func CASHA256(caPEM []byte) (string, error) {
	b, _ := pem.Decode(caPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", errors.New("agent: the CA file holds no PEM certificate")
	}
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:]), nil
}

// tokenMatches compares an Authorization header with "Bearer <token>" in constant time.
func tokenMatches(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && token != "" && subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}
