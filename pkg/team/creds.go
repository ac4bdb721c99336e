package team

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/nats-io/nkeys"
	"github.com/pelletier/go-toml/v2"
)

// Credentials is what a member needs to join a hub, in one file that `observerctl hub
// add-member` writes (mode 0600): its name, the hub's leafnode URLs, its nkey seed and the hub's
// CA. The seed is the member's secret; the hub keeps only its public key.
type Credentials struct {
	Member string   `toml:"member"`
	Hub    []string `toml:"hub" comment:"the hub's leafnode URLs (tls://host:port), any of which will do"`
	Seed   string   `toml:"seed" comment:"this member's nkey seed: the secret that proves it is this member"`
	CA     string   `toml:"ca,multiline" comment:"the hub's certificate authority"`
}

// NewMember makes a member's key pair: the credentials to hand the member, and the public key
// the hub registers.
func NewMember(name string, hub []string, caPEM []byte) (Credentials, string, error) {
	if err := ValidName(name); err != nil {
		return Credentials{}, "", err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return Credentials{}, "", err
	}
	seed, err := kp.Seed()
	if err != nil {
		return Credentials{}, "", err
	}
	pub, err := kp.PublicKey()
	if err != nil {
		return Credentials{}, "", err
	}
	return Credentials{Member: name, Hub: hub, Seed: string(seed), CA: string(caPEM)}, pub, nil
}

// Write saves c to path with mode 0600; an existing file is not replaced.
func (c Credentials) Write(path string) error {
	data, err := c.Marshal()
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Marshal encodes c as the credentials file's text.
func (c Credentials) Marshal() ([]byte, error) {
	body, err := toml.Marshal(c)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# observer team credentials of member %q. Keep this file private (mode 0600):\n# whoever holds it can send events to the hub as this member.\n", c.Member)
	return append([]byte(head), body...), nil
}

// LoadCredentials reads and checks a credentials file. A file others can read is refused.
func LoadCredentials(path string) (Credentials, error) {
	var c Credentials
	fi, err := os.Stat(path)
	if err != nil {
		return c, fmt.Errorf("team credentials: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return c, fmt.Errorf("team credentials %s are readable by others (mode %v): run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := toml.NewDecoder(strings.NewReader(string(data))).DisallowUnknownFields().Decode(&c); err != nil {
		return c, fmt.Errorf("team credentials %s: %w", path, err)
	}
	return c, c.check(path)
}

func (c Credentials) check(path string) error {
	if err := ValidName(c.Member); err != nil {
		return fmt.Errorf("team credentials %s: %w", path, err)
	}
	if len(c.Hub) == 0 {
		return fmt.Errorf("team credentials %s name no hub URL", path)
	}
	for _, h := range c.Hub {
		if _, err := ParseHubURL(h); err != nil {
			return fmt.Errorf("team credentials %s: %w", path, err)
		}
	}
	if _, err := nkeys.FromSeed([]byte(c.Seed)); err != nil {
		return fmt.Errorf("team credentials %s: the seed is not an nkey seed: %w", path, err)
	}
	return nil
}

// PublicKey is the public nkey of the credentials' seed.
func (c Credentials) PublicKey() (string, error) {
	kp, err := nkeys.FromSeed([]byte(c.Seed))
	if err != nil {
		return "", err
	}
	return kp.PublicKey()
}

// ParseHubURL checks a hub URL: tls://host:port (nats:// is accepted for a hub on loopback in
// tests; the leafnode then still negotiates TLS when the hub asks for it).
func ParseHubURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("hub URL %q: %w", s, err)
	}
	if u.Scheme != "tls" && u.Scheme != "nats" {
		return nil, fmt.Errorf("hub URL %q: use tls://host:port", s)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return nil, fmt.Errorf("hub URL %q: name the host and the port (tls://hub.example:7422)", s)
	}
	if u.User != nil {
		return nil, errors.New("hub URL: credentials go in the credentials file, not the URL")
	}
	return u, nil
}
