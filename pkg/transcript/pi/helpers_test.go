package pi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// corpusRoot is the shared corpus of real transcripts: $OBSERVER_CORPUS, else the corpus beside
// the repository.
func corpusRoot() string {
	if d := os.Getenv("OBSERVER_CORPUS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "..", "shared", "corpus")
}

// corpusDir holds the Pi files of the corpus.
func corpusDir() string { return filepath.Join(corpusRoot(), "pi") }

// Corpus files, by the name the corpus gives them.
const (
	fileCompaction = "pi-mono__before-compaction.jsonl"
	fileLarge      = "pi-mono__large-session.jsonl"
)

func TestMain(m *testing.M) {
	if _, err := os.Stat(corpusDir()); err != nil {
		fmt.Fprintf(os.Stderr, "WARNING: the Pi corpus is absent (%v): every corpus test SKIPS. "+
			"Set OBSERVER_CORPUS to the corpus directory (the one holding pi/).\n", err)
	}
	os.Exit(m.Run())
}

// corpus returns the absolute path of a corpus file, skipping the test when it is absent.
func corpus(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(corpusDir(), name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("SKIPPED: corpus file %s absent (%v); set OBSERVER_CORPUS to the corpus directory", name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

// corpusNames lists the Pi files of the corpus, skipping the test when it is absent.
func corpusNames(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(corpusDir())
	if err != nil {
		tb.Skipf("SKIPPED: the Pi corpus is absent (%v); set OBSERVER_CORPUS to the corpus directory", err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	return out
}

// srcOf is the source Discover would give a file.
func srcOf(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, SessionID: SessionIDFromPath(path)}
}

// readLines returns a file's lines without their newlines.
func readLines(tb testing.TB, path string) [][]byte {
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

// check validates events.
func check(tb testing.TB, evs []event.Event) {
	tb.Helper()
	for i := range evs {
		e := &evs[i]
		if err := e.Validate(); err != nil {
			tb.Fatalf("invalid event %+v: %v", e, err)
		}
		if a := e.Action; a != nil && !a.Type.Valid() {
			tb.Fatalf("action type %q", a.Type)
		}
		if e.Client != Client || e.Source != Component {
			tb.Fatalf("envelope %+v", e)
		}
	}
}

// run feeds lines to a parser and returns the events.
func run(tb testing.TB, p *Parser, lines [][]byte) []event.Event {
	tb.Helper()
	var out []event.Event
	var off int64
	for _, l := range lines {
		evs, err := p.Record(off, l)
		off += int64(len(l)) + 1
		if err != nil {
			tb.Logf("line at %d: %v", off, err)
		}
		check(tb, evs)
		out = append(out, evs...)
	}
	return out
}

// parseFile parses a whole file in one pass.
func parseFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := a.newParser(src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return run(tb, p, readLines(tb, src.Path)), p
}

// parseLines parses lines given as strings.
func parseLines(tb testing.TB, a *Adapter, path string, lines ...string) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := a.newParser(srcOf(path), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var bs [][]byte
	for _, l := range lines {
		bs = append(bs, []byte(l))
	}
	return run(tb, p, bs), p
}

// merge folds events with the same id the way the writer does: an action's later event fills in
// what the first lacked; a usage keeps the figures with the largest output.
func merge(evs []event.Event) (ids []string, byID map[string]event.Event) {
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

// bucket is one model's usage.
type bucket struct {
	Messages      int     `json:"messages"`
	Input         int64   `json:"input_tokens"` // net of cache reads and writes
	CacheRead     int64   `json:"cache_read_tokens"`
	CacheCreation int64   `json:"cache_creation_tokens"`
	Output        int64   `json:"output_tokens"` // reasoning included
	CostUSD       float64 `json:"cost_usd"`
}

func (b *bucket) add(u *event.TokenUsage) {
	b.Messages++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.CacheCreation += u.CacheCreation
	b.Output += u.Output
	b.CostUSD += u.CostUSD
}

// summary is the per-file figures kept in the golden files.
type summary struct {
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	Records   int64  `json:"records"`
	Malformed int64  `json:"malformed"`
	Events    int    `json:"events"`
	Distinct  int    `json:"distinct_ids"`

	Usage   bucket             `json:"usage"`
	ByModel map[string]*bucket `json:"by_model"`

	Prompts  []string         `json:"prompts"`
	Actions  map[string]int   `json:"actions"`   // normalized type -> distinct actions
	Tools    map[string]int   `json:"tools"`     // raw tool -> distinct calls
	Failures map[string]int   `json:"failures"`  // normalized type -> calls that failed
	NoResult map[string]int   `json:"no_result"` // normalized type -> calls with no outcome
	Sessions []string         `json:"sessions"`  // session events: state, model, epoch
	Unknown  map[string]int64 `json:"unknown,omitempty"`
}

func summarize(evs []event.Event, p *Parser) summary {
	st := p.Stats()
	s := summary{SessionID: p.st.SessionID, Records: st.Lines, Malformed: st.Malformed, Events: len(evs),
		ByModel: map[string]*bucket{}, Prompts: []string{}, Actions: map[string]int{}, Tools: map[string]int{},
		Failures: map[string]int{}, NoResult: map[string]int{}, Sessions: []string{}, Unknown: st.Unknown}
	ids, byID := merge(evs)
	s.Distinct = len(ids)
	for _, id := range ids {
		e := byID[id]
		if s.Project == "" {
			s.Project = e.Project
		}
		switch {
		case e.TokenUsage != nil:
			u := e.TokenUsage
			s.Usage.add(u)
			if s.ByModel[u.Model] == nil {
				s.ByModel[u.Model] = &bucket{}
			}
			s.ByModel[u.Model].add(u)
		case e.Session != nil:
			line := e.Session.State + " " + e.Session.Model
			if e.Session.Epoch > 0 {
				line += fmt.Sprintf("epoch %d", e.Session.Epoch)
			}
			s.Sessions = append(s.Sessions, strings.TrimSpace(line))
		case e.Action != nil:
			a := e.Action
			s.Actions[string(a.Type)]++
			if a.Type == event.ActionUserPrompt {
				s.Prompts = append(s.Prompts, transcript.CutRunes(a.Target, 60))
			}
			if a.ToolUseID == "" {
				continue
			}
			s.Tools[a.Tool]++
			switch {
			case a.Success == nil:
				s.NoResult[string(a.Type)]++
			case !*a.Success:
				s.Failures[string(a.Type)]++
			}
		}
	}
	round := func(b *bucket) { b.CostUSD = math.Round(b.CostUSD*1e6) / 1e6 }
	round(&s.Usage)
	for _, b := range s.ByModel {
		round(b)
	}
	return s
}

// actionsOf returns the merged tool-call actions in the order they were first seen.
func actionsOf(evs []event.Event) []*event.Action {
	ids, byID := merge(evs)
	var out []*event.Action
	for _, id := range ids {
		if a := byID[id].Action; a != nil && a.ToolUseID != "" {
			out = append(out, a)
		}
	}
	return out
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
