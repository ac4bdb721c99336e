package team

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The hub's TLS files, in its directory: a private CA made at `observerctl hub init` and the
// leafnode listener's certificate, signed by it. Members trust the CA (it travels in their
// credentials file).
const (
	caFile      = "ca.pem"
	caKeyFile   = "ca-key.pem"
	certFile    = "server.pem"
	certKeyFile = "server-key.pem"
)

// EnsureTLS makes the hub's CA and server certificate in dir when they do not exist yet. The
// certificate names hostnames (DNS names or IP addresses) plus localhost and 127.0.0.1; it is
// made again, by the same CA, when a name is missing from it. It returns the CA in PEM.
func EnsureTLS(dir string, hostnames []string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caPEM, caKey, err := loadOrMakeCA(dir)
	if err != nil {
		return nil, err
	}
	names := append([]string{"localhost", "127.0.0.1"}, hostnames...)
	if certCovers(filepath.Join(dir, certFile), names) {
		return caPEM, nil
	}
	ca, err := parseCert(caPEM)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "observer hub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(10, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if n != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, certKeyFile), "EC PRIVATE KEY", mustEC(key)); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, certFile), "CERTIFICATE", der); err != nil {
		return nil, err
	}
	return caPEM, nil
}

func loadOrMakeCA(dir string) ([]byte, *ecdsa.PrivateKey, error) {
	caPEM, err1 := os.ReadFile(filepath.Join(dir, caFile))
	keyPEM, err2 := os.ReadFile(filepath.Join(dir, caKeyFile))
	if err1 == nil && err2 == nil {
		b, _ := pem.Decode(keyPEM)
		if b == nil {
			return nil, nil, fmt.Errorf("%s is not a PEM key", filepath.Join(dir, caKeyFile))
		}
		key, err := x509.ParseECPrivateKey(b.Bytes)
		return caPEM, key, err
	}
	// Only when neither exists is a new CA made: a new one would invalidate every member's
	// credentials.
	if !errors.Is(err1, os.ErrNotExist) || !errors.Is(err2, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("the hub's CA is incomplete in %s (%v; %v): restore ca.pem and ca-key.pem, or remove both to make a new CA (every member then needs new credentials)", dir, err1, err2)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "observer hub CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(20, 0, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(filepath.Join(dir, caKeyFile), "EC PRIVATE KEY", mustEC(key)); err != nil {
		return nil, nil, err
	}
	if err := writePEM(filepath.Join(dir, caFile), "CERTIFICATE", der); err != nil {
		return nil, nil, err
	}
	// A new CA invalidates an older server certificate.
	os.Remove(filepath.Join(dir, certFile))
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key, nil
}

// ServerTLS is the leafnode listener's TLS configuration, from the files EnsureTLS made, or from
// certFile and keyFile when the user brings a certificate of their own.
func ServerTLS(dir, cert, key string) (*tls.Config, error) {
	if cert == "" {
		cert, key = filepath.Join(dir, certFile), filepath.Join(dir, certKeyFile)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, fmt.Errorf("hub TLS certificate: %w (run `observerctl hub init`)", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// ClientTLS is a member's TLS configuration towards the hub: the hub's CA from its credentials,
// or the system's roots when it carries none.
func ClientTLS(caPEM []byte) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(caPEM) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("the credentials' CA is not a PEM certificate")
		}
		c.RootCAs = pool
	}
	return c, nil
}

// Fingerprint is the SHA-256 of a PEM certificate's DER, in hex ("" for none).
func Fingerprint(certPEM []byte) string {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return ""
	}
	sum := sha256.Sum256(b.Bytes)
	return hex.EncodeToString(sum[:])
}

func certCovers(path string, names []string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	c, err := parseCert(data)
	if err != nil || time.Now().After(c.NotAfter) {
		return false
	}
	for _, n := range names {
		if n != "" && c.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}

func parseCert(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(b.Bytes)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func mustEC(k *ecdsa.PrivateKey) []byte {
	b, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return b
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
