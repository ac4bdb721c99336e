package cline

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func corpusDir() string { return transcripttest.CorpusDir("cline") }

// The corpus's Cline CLI session: its messages and its metadata file.
const (
	fileMessages = "observer__sample-session-messages.json"
	fileMeta     = "observer__sample-session-meta.json"
)

func TestMain(m *testing.M) {
	transcripttest.WarnAbsentCorpus("Cline", "cline")
	os.Exit(m.Run())
}

// corpusSession lays the corpus session out as the CLI does, in a temporary sessions directory
// (<id>/<id>.messages.json beside <id>.json), and returns that directory. It skips the test when
// the corpus is absent.
func corpusSession(tb testing.TB) string {
	tb.Helper()
	msgs, err := os.ReadFile(filepath.Join(corpusDir(), fileMessages))
	if err != nil {
		tb.Skipf("SKIPPED: corpus file %s absent (%v); set OBSERVER_CORPUS to the corpus directory", fileMessages, err)
	}
	meta, err := os.ReadFile(filepath.Join(corpusDir(), fileMeta))
	if err != nil {
		tb.Skipf("SKIPPED: corpus file %s absent (%v)", fileMeta, err)
	}
	root := tb.TempDir()
	const id = "1780701711502_0v8d2"
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for name, data := range map[string][]byte{id + ".messages.json": msgs, id + ".json": meta} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// parseAll discovers every source of a and reads each once, as a Document.
func parseAll(tb testing.TB, a *Adapter) ([]event.Event, transcript.Stats) {
	tb.Helper()
	srcs, err := a.Discover()
	if err != nil {
		tb.Fatal(err)
	}
	if len(srcs) == 0 {
		tb.Fatalf("%s: no source under %v", a.Client(), a.Roots)
	}
	var evs []event.Event
	var st transcript.Stats
	for _, src := range srcs {
		if !src.Document {
			tb.Fatalf("%s is not a document", src.Path)
		}
		e, p := parseSource(tb, a, src, nil)
		evs = append(evs, e...)
		s := p.Stats()
		st.Lines += s.Lines
		st.Malformed += s.Malformed
		st.Events += s.Events
	}
	return evs, st
}

func parseSource(tb testing.TB, a *Adapter, src transcript.Source, state []byte) ([]event.Event, transcript.Parser) {
	tb.Helper()
	data, err := os.ReadFile(src.Path)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := a.NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		tb.Fatalf("%s: %v", src.Path, err)
	}
	for i := range evs {
		if err := evs[i].Validate(); err != nil {
			tb.Fatalf("invalid event %+v: %v", evs[i], err)
		}
	}
	return evs, p
}

// bucket sums the usage of one model.
type bucket struct {
	Messages      int     `json:"messages"`
	Input         int64   `json:"input"`
	CacheRead     int64   `json:"cache_read"`
	CacheCreation int64   `json:"cache_creation"`
	Output        int64   `json:"output"`
	CostUSD       float64 `json:"cost_usd"`
	Reliability   string  `json:"reliability"`
}

// summary is what the golden files keep.
type summary struct {
	Sessions []string           `json:"sessions"`
	Projects []string           `json:"projects"`
	Prompts  []string           `json:"prompts"`
	Actions  map[string]int     `json:"actions"` // by type
	Tools    []string           `json:"tools"`   // type tool target success, in order
	ByModel  map[string]*bucket `json:"by_model"`
	Events   int                `json:"events"`
}

func summarize(evs []event.Event) summary {
	s := summary{Actions: map[string]int{}, ByModel: map[string]*bucket{}, Events: len(evs)}
	sessions, projects := map[string]bool{}, map[string]bool{}
	for _, e := range evs {
		sessions[e.SessionID] = true
		if e.Project != "" {
			projects[e.Project] = true
		}
		if a := e.Action; a != nil {
			if a.Type == event.ActionUserPrompt {
				s.Prompts = append(s.Prompts, a.Target)
				continue
			}
			s.Actions[string(a.Type)]++
			ok := "?"
			if a.Success != nil {
				ok = fmt.Sprint(*a.Success)
			}
			s.Tools = append(s.Tools, fmt.Sprintf("%s %s %q %s", a.Type, a.Tool, a.Target, ok))
		}
		if u := e.TokenUsage; u != nil {
			b := s.ByModel[u.Model]
			if b == nil {
				b = &bucket{}
				s.ByModel[u.Model] = b
			}
			b.Messages++
			b.Input += u.Input
			b.CacheRead += u.CacheRead
			b.CacheCreation += u.CacheCreation
			b.Output += u.Output
			b.CostUSD = math.Round((b.CostUSD+u.CostUSD)*1e9) / 1e9
			b.Reliability = string(u.Reliability)
		}
	}
	for k := range sessions {
		s.Sessions = append(s.Sessions, k)
	}
	for k := range projects {
		s.Projects = append(s.Projects, k)
	}
	sort.Strings(s.Sessions)
	sort.Strings(s.Projects)
	return s
}
