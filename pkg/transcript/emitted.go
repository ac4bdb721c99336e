package transcript

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// Emitted is what a reader of documents (files its client rewrites whole, read whole at each
// change) emitted lately: the fingerprints of its events, kept in the parser's State (Seen) so
// that a re-read emits only the events that are new or changed.
type Emitted struct {
	set map[string]bool
}

// Keep drops from evs the events emitted before exactly as they are (same id, same content),
// remembers the others in *seen (at most max, the newest), and returns what is left, in order.
func (m *Emitted) Keep(evs []event.Event, seen *[]string, max int) []event.Event {
	if m.set == nil {
		m.set = make(map[string]bool, len(*seen))
		for _, f := range *seen {
			m.set[f] = true
		}
	}
	out := evs[:0]
	for i := range evs {
		f := Fingerprint(&evs[i])
		if f != "" && m.set[f] {
			continue
		}
		out = append(out, evs[i])
		if f == "" {
			continue
		}
		m.set[f] = true
		*seen = append(*seen, f)
		if n := len(*seen); n > max {
			for _, old := range (*seen)[:n-max] {
				delete(m.set, old)
			}
			*seen = slices.Clone((*seen)[n-max:])
		}
	}
	return out
}

// Fingerprint hashes an event whole: the same fingerprint is the same id with the same content.
func Fingerprint(e *event.Event) string {
	b, err := json.Marshal(e)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

// RelPath makes a file path relative to the project root when it lies inside it; a relative path
// is taken from cwd (the directory the client ran in) when that is absolute.
func RelPath(file, cwd, root string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if cwd == "" || !filepath.IsAbs(cwd) {
			return filepath.Clean(file)
		}
		file = filepath.Join(cwd, file)
	}
	file = filepath.Clean(file)
	if root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}
