// Package transcripttest holds the helpers the transcript adapters' tests share: finding the
// shared corpus of real transcripts (skipping loudly when it is absent), reading a file's lines
// and feeding them to a parser (in one pass or resumed at every line), folding events the way
// the writer does, summaries and views of events for golden files, a read's conversation (its
// message events in order) and its golden lines, the checks of a fuzzed parser, and polling a
// database reader's parsers. Only tests import it. It imports nothing outside pkg: a scan
// through internal/ingest is internal/ingest/ingesttest.
package transcripttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// CorpusRoot is the shared corpus of real transcripts: $OBSERVER_CORPUS, else the corpus beside
// the repository (seen from an adapter's package directory, pkg/transcript/<adapter>).
func CorpusRoot() string {
	if d := os.Getenv("OBSERVER_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "corpus")
}

// CorpusDir is the directory of the corpus that holds one client's files.
func CorpusDir(sub string) string { return filepath.Join(CorpusRoot(), sub) }

// WarnAbsentCorpus warns on stderr, for a TestMain, when a client's corpus directory (sub, named
// what) is absent: every corpus test then skips, and a run that passes says so.
func WarnAbsentCorpus(what, sub string) {
	if _, err := os.Stat(CorpusDir(sub)); err != nil {
		fmt.Fprintf(os.Stderr, "WARNING: the %s corpus is absent (%v): every corpus test SKIPS. "+
			"Set OBSERVER_CORPUS to the corpus directory (the one holding %s/).\n", what, err, sub)
	}
}

// CorpusFile returns the absolute path of a corpus file of dir, skipping the test when it is
// absent.
func CorpusFile(tb testing.TB, dir, name string) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("SKIPPED: corpus file %s absent (%v); set OBSERVER_CORPUS to the corpus directory", name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

// CorpusNames lists the files of a client's corpus directory (dir, named what) whose names end in
// one of exts, skipping the test when the directory is absent.
func CorpusNames(tb testing.TB, what, dir string, exts ...string) []string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Skipf("SKIPPED: the %s corpus is absent (%v); set OBSERVER_CORPUS to the corpus directory", what, err)
	}
	var out []string
	for _, e := range entries {
		for _, ext := range exts {
			if strings.HasSuffix(e.Name(), ext) {
				out = append(out, e.Name())
				break
			}
		}
	}
	return out
}

// WriteFile writes data to the file at path, making its directory.
func WriteFile(tb testing.TB, path, data string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// ReadLines returns a file's non-empty lines without their newlines.
func ReadLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if len(line) > 0 {
			out = append(out, line)
		}
	}
	return out
}

// CheckValid fails the test on an event that does not validate.
func CheckValid(tb testing.TB, evs []event.Event) {
	tb.Helper()
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("invalid event %+v: %v", evs[i], err)
		}
	}
}

// CheckEvents fails the test on an event that does not validate or an action of an unknown type.
func CheckEvents(tb testing.TB, evs []event.Event) {
	tb.Helper()
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("invalid event %+v: %v", evs[i], err)
		}
		if a := evs[i].Action; a != nil && !a.Type.Valid() {
			tb.Fatalf("action type %q", a.Type)
		}
	}
}

// Merge folds events with the same id the way the writer does: an action's later event fills in
// what the first lacked; a usage keeps the figures with the largest output. ids are in the order
// first seen.
func Merge(evs []event.Event) (ids []string, byID map[string]event.Event) {
	byID = map[string]event.Event{}
	for _, e := range evs {
		old, ok := byID[e.ID]
		if !ok {
			ids = append(ids, e.ID)
			cp := e
			if e.Action != nil {
				a := *e.Action
				cp.Action = &a
			}
			byID[e.ID] = cp
			continue
		}
		switch {
		case e.TokenUsage != nil && old.TokenUsage != nil:
			if e.TokenUsage.Output > old.TokenUsage.Output {
				byID[e.ID] = e
			}
		case e.Action != nil && old.Action != nil:
			a, n := old.Action, e.Action
			if a.Type == event.ActionUnknown {
				a.Type = n.Type
			}
			if a.Target == "" {
				a.Target = n.Target
			}
			if n.Success != nil {
				a.Success = n.Success
				a.Error = n.Error
			}
			if n.Output != "" {
				a.Output, a.OutputSize = n.Output, n.OutputSize
			}
			if n.DurationMs != 0 {
				a.DurationMs = n.DurationMs
			}
		}
	}
	return ids, byID
}

// ActionsOf returns the merged tool-call actions (those with a tool use id) in the order they were
// first seen.
func ActionsOf(evs []event.Event) []*event.Action {
	ids, byID := Merge(evs)
	var out []*event.Action
	for _, id := range ids {
		if a := byID[id].Action; a != nil && a.ToolUseID != "" {
			out = append(out, a)
		}
	}
	return out
}

// MustJSON returns v as indented JSON, the form of the golden files.
func MustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Golden compares v, as indented JSON, with the golden file at path, or writes it there when
// update is set (go test -update).
func Golden(tb testing.TB, path string, v any, update bool) {
	tb.Helper()
	got := append(MustJSON(tb, v), '\n')
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		tb.Errorf("differs from %s:\n%s", path, got)
	}
}

// GoldenOrphans fails for each NAME.golden.json in dir (but fixture-*) with no corpus file NAME
// in any of corpusDirs. Without the corpus it checks nothing: the corpus tests skipped.
func GoldenOrphans(tb testing.TB, dir string, corpusDirs ...string) {
	tb.Helper()
	if _, err := os.Stat(CorpusRoot()); err != nil {
		return
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".golden.json") || strings.HasPrefix(e.Name(), "fixture-") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".golden.json")
		if !slices.ContainsFunc(corpusDirs, func(d string) bool {
			_, err := os.Stat(filepath.Join(d, name))
			return err == nil
		}) {
			tb.Errorf("golden file %s has no corpus file", e.Name())
		}
	}
}
