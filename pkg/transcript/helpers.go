package transcript

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
)

// The helpers below are the parts every adapter's parser and discovery share.

// Malformed returns an error wrapping ErrMalformed: "<ErrMalformed>: <client>: <message>", or
// without the client when it is "".
func Malformed(client, format string, args ...any) error {
	if client == "" {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: %s: %s", ErrMalformed, client, fmt.Sprintf(format, args...))
}

// MarshalState returns a parser's state as JSON, or nil when it does not marshal.
func MarshalState(st any) []byte {
	b, err := json.Marshal(st)
	if err != nil {
		return nil
	}
	return b
}

// Clone returns a copy of s that shares nothing with it, for a parser's Stats.
func (s Stats) Clone() Stats {
	if len(s.Unknown) > 0 {
		u := make(map[string]int64, len(s.Unknown))
		for k, v := range s.Unknown {
			u[k] = v
		}
		s.Unknown = u
	}
	return s
}

// MaxUnknownKind bounds the length in bytes of a record type counted by CountUnknown.
const MaxUnknownKind = 64

// CountUnknown counts one record of a type the parser does not know, the type cut to
// MaxUnknownKind bytes (not splitting a UTF-8 sequence).
func (s *Stats) CountUnknown(kind string) {
	if s.Unknown == nil {
		s.Unknown = map[string]int64{}
	}
	s.Unknown[CutBytes(kind, MaxUnknownKind)]++
}

// ExpandHome replaces a leading ~ of dir with the user's home directory.
func ExpandHome(dir string) string {
	if dir == "~" || strings.HasPrefix(dir, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, dir[1:])
		}
	}
	return dir
}

// DedupePaths cleans paths and drops the repeats, keeping the first of each in order. It reuses
// the backing array of paths.
func DedupePaths(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// IsDir reports whether a directory entry at path is a directory, following a symbolic link.
func IsDir(d fs.DirEntry, path string) bool {
	if d.IsDir() {
		return true
	}
	if d.Type()&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		return err == nil && fi.IsDir()
	}
	return false
}

// IsFile reports whether a directory entry at path is a regular file, following a symbolic link.
func IsFile(d fs.DirEntry, path string) bool {
	if d.Type().IsRegular() {
		return true
	}
	if d.Type()&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		return err == nil && fi.Mode().IsRegular()
	}
	return false
}

// ReadDir lists a directory; a missing one is empty, not an error.
func ReadDir(dir string) ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return entries, err
}

// PriceTable is the table a reader prices a usage with now: what current returns when current is
// set and returns a table (one that follows config.toml, internal/prices.Follower.Table), else
// fixed when not nil, else pricing.Default(). Unlike pricing.Source, a current that returns nil
// falls back to fixed.
func PriceTable(fixed *pricing.Table, current func() *pricing.Table) *pricing.Table {
	if current != nil {
		if t := current(); t != nil {
			return t
		}
	}
	if fixed != nil {
		return fixed
	}
	return pricing.Default()
}
