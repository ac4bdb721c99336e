package copilot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client names.
const (
	ClientCLI    = client.CopilotCLI
	ClientVSCode = client.CopilotVSCode
)

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Environment variables the Copilot CLI reads for its directories.
const (
	EnvCopilotHome = "COPILOT_HOME"   // the state directory, default ~/.copilot
	EnvXDGState    = "XDG_STATE_HOME" // where versions before 1.0.34 kept .copilot
)

// Adapter finds and reads the Copilot CLI's session event logs.
type Adapter struct {
	// Roots are session-state directories: <state>/session-state.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a shutdown
	// is priced (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given session-state directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// Client returns "copilot-cli".
func (a *Adapter) Client() string { return ClientCLI }

// DefaultRoots returns the session-state directories the Copilot CLI writes to (see the package
// doc): $COPILOT_HOME/session-state when set, ~/.copilot/session-state, and
// $XDG_STATE_HOME/.copilot/session-state when set.
func DefaultRoots() []string {
	var roots []string
	if d := strings.TrimSpace(os.Getenv(EnvCopilotHome)); d != "" {
		roots = append(roots, filepath.Join(transcript.ExpandHome(d), "session-state"))
	}
	if h, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(h, ".copilot", "session-state"))
	}
	if d := strings.TrimSpace(os.Getenv(EnvXDGState)); d != "" && filepath.IsAbs(d) {
		roots = append(roots, filepath.Join(d, ".copilot", "session-state"))
	}
	return transcript.DedupePaths(roots)
}

// WatchDirs lists the directories a watcher should watch for new sessions: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// SessionIDFromPath returns the session id a log's path names (the directory of an events.jsonl,
// else the name of a legacy <id>.jsonl) when it is a uuid, as the CLI's are; else "".
func SessionIDFromPath(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if name == "events" {
		name = filepath.Base(filepath.Dir(path))
	}
	if !uuidRe.MatchString(name) {
		return ""
	}
	return strings.ToLower(name)
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Discover lists every root's <id>/events.jsonl and legacy <id>.jsonl, sorted by path. A missing
// root is not an error; a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seenRoot := map[string]bool{}
	seen := map[string]bool{}
	add := func(path string) {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, transcript.Source{Client: ClientCLI, Path: abs, SessionID: SessionIDFromPath(abs)})
		}
	}
	for _, root := range a.Roots {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			if seenRoot[real] {
				continue
			}
			seenRoot[real] = true
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			path := filepath.Join(root, e.Name())
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			switch {
			case strings.HasSuffix(e.Name(), ".jsonl") && transcript.IsFile(e, path):
				add(path)
			case transcript.IsDir(e, path):
				log := filepath.Join(path, "events.jsonl")
				if fi, err := os.Stat(log); err == nil && fi.Mode().IsRegular() {
					add(log)
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one event log, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}
