package bus

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LoadOrCreateToken reads the bus token from path, creating it with a fresh random token and
// mode 0600 when it does not exist. A token file readable by others is refused.
func LoadOrCreateToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		fi, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return "", fmt.Errorf("bus token %s is readable by others (mode %v): run chmod 600 %s", path, fi.Mode().Perm(), path)
		}
		tok := strings.TrimSpace(string(data))
		if tok == "" {
			return "", fmt.Errorf("bus token %s is empty: delete it and restart observer to make a new one", path)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read bus token: %w", err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	tok := hex.EncodeToString(b[:])
	// The token is written to a private temp file first and linked into place whole, so a reader
	// (another process starting at the same time) never sees the file empty.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("create bus token: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("create bus token: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("create bus token: %w", err)
	}
	if err := os.Link(f.Name(), path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return LoadOrCreateToken(path) // another process made it first
		}
		return "", fmt.Errorf("create bus token: %w", err)
	}
	return tok, nil
}

// ReadToken reads an existing token without creating one.
func ReadToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%w: no bus token at %s (start observer with `observerctl up`)", ErrUnavailable, path)
		}
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}
