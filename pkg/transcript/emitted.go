package transcript

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
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

// DecodeDocument decodes a whole JSON object document into v (a reader of documents' Record):
// an empty document, one that is not UTF-8, not an object or that does not parse (caught while
// its client rewrote it) is ErrMalformed.
func DecodeDocument(raw []byte, v any) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return Malformed("", "document is empty (being written?)")
	case !utf8.Valid(raw):
		return Malformed("", "document is not UTF-8")
	case raw[0] != '{':
		return Malformed("", "document is not a JSON object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return Malformed("", "document does not parse (written while read, or damaged): %v", err)
	}
	return nil
}

// Count adds one read of a record to s: its events, and whether it was malformed.
func (s *Stats) Count(events int, err error) {
	s.Lines++
	if err != nil {
		s.Malformed++
	}
	s.Events += int64(events)
}

// DiscoverDocuments lists, sorted by path, the files directly in roots whose name match accepts
// (it returns the session the file holds), as Document sources of client. A missing root is not
// an error.
func DiscoverDocuments(client string, roots []string, match func(name string) (session string, ok bool)) ([]Source, error) {
	var out []Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		ents, err := ReadDir(abs)
		if err != nil {
			errs = append(errs, err)
		}
		for _, e := range ents {
			p := filepath.Join(abs, e.Name())
			session, ok := match(e.Name())
			if !ok || seen[p] || !IsFile(e, p) {
				continue
			}
			seen[p] = true
			out = append(out, Source{Client: client, Path: p, SessionID: session, Document: true})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// PricedUsage is a transcript's token usage of model, priced from table at t: "approximate" when
// the table prices the model, else at the client's own cost clientUSD (when it is positive and
// sane), still "approximate", else "unknown" at cost 0. It is nil when tok counts nothing.
func PricedUsage(table *pricing.Table, model, msgID string, tok event.Tokens, clientUSD float64, t time.Time) *event.TokenUsage {
	if tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation == 0 {
		return nil
	}
	u := &event.TokenUsage{Tokens: tok, MessageID: msgID, Model: model, Origin: "transcript", Reliability: event.ReliabilityApproximate}
	cost, known := 0.0, false
	if model != "" {
		cost, known = table.CostAt(model, tok, t)
	}
	switch {
	case known:
		u.CostUSD = cost
	case clientUSD > 0 && clientUSD < 1e6:
		u.CostUSD = clientUSD
	default:
		u.Reliability = event.ReliabilityUnknown
	}
	return u
}

// NewModel records model among *models (the newest max) and reports whether it was not there:
// a document reader reports each model of a session once. An empty model is never new.
func NewModel(models *[]string, model string, max int) bool {
	if model == "" || slices.Contains(*models, model) {
		return false
	}
	*models = append(*models, model)
	if n := len(*models); n > max {
		*models = slices.Clone((*models)[n-max:])
	}
	return true
}

// FirstNonEmpty returns the first of ss that is not blank, trimmed ("" when all are).
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// InputHash hashes a tool call's arguments as a reader found them (JSON), so that repeated calls
// can be told: "" for none or null.
func InputHash(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	h := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

// Arg returns the first of keys whose value in a tool call's decoded arguments is a non-blank
// string, trimmed ("" when none is).
func Arg(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}
