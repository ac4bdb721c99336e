package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// corpusDir holds the shared corpus of real transcripts, relative to this package.
const corpusDir = "../../../../shared/corpus/codex"

const (
	fileCodemie  = "codemie-code__rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
	fileHandmade = "codemie-code__rollout-2026-01-02T19-00-00-019b7f95-0000-7000-0000-000000000001.jsonl"
	fileVCT      = "VibeCodingTracker__codex.jsonl"
	fileTUI      = "codemie-code__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
	fileDesktop  = "codemie-code__rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
)

var corpusFiles = []string{fileCodemie, fileHandmade, fileVCT, fileTUI, fileDesktop}

// corpus returns the path of a corpus file, skipping the test when the corpus is absent.
func corpus(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(corpusDir, name)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("corpus file %s absent: %v", name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

func srcOf(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, SessionID: SessionIDFromPath(path)}
}

// testAdapter prices Azure's aide-gpt-5 deployment as gpt-5, as a user's config would.
func testAdapter(tb testing.TB, home string) *Adapter {
	tb.Helper()
	prices, err := pricing.Default().WithAliases(map[string]string{"aide-gpt-5": "gpt-5"})
	if err != nil {
		tb.Fatal(err)
	}
	return &Adapter{Home: home, Prices: prices}
}

// run feeds lines to a parser and returns the events, checking that each validates.
func run(tb testing.TB, p *Parser, lines [][]byte) []event.Event {
	tb.Helper()
	return transcripttest.Feed(tb, p, lines, transcripttest.CheckValid)
}

// parseFile parses a whole file in one pass.
func parseFile(tb testing.TB, a *Adapter, path string) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, a.newParser, srcOf(path), transcripttest.CheckValid)
}

// summary is the per-session figures kept in the golden files.
type summary struct {
	SessionID  string `json:"session_id"`
	Root       string `json:"root"`
	Originator string `json:"originator"`
	CLIVersion string `json:"cli_version"`
	Project    string `json:"project"`
	Lines      int64  `json:"lines"`
	Malformed  int64  `json:"malformed"`
	Events     int    `json:"events"`
	Distinct   int    `json:"distinct_ids"`

	Usage struct {
		Deltas    int      `json:"deltas"`
		Input     int64    `json:"input_tokens"` // net of cache reads
		CacheRead int64    `json:"cache_read_tokens"`
		Output    int64    `json:"output_tokens"` // reasoning included
		Reasoning int64    `json:"reasoning_tokens"`
		CostUSD   float64  `json:"cost_usd"`
		Models    []string `json:"models"`
	} `json:"usage"`

	Actions  map[string]int `json:"actions"`   // normalized type -> distinct actions
	Tools    map[string]int `json:"tools"`     // raw tool -> distinct calls
	Failures map[string]int `json:"failures"`  // normalized type -> calls that failed
	NoResult map[string]int `json:"no_result"` // normalized type -> calls with no success/failure known
}

func summarize(evs []event.Event, p *Parser) summary {
	var s summary
	m := p.Meta()
	st := p.Stats()
	s.SessionID, s.Root, s.Originator, s.CLIVersion = m.SessionID, m.Root, m.Originator, m.CLIVersion
	s.Lines, s.Malformed, s.Events = st.Lines, st.Malformed, len(evs)
	s.Actions, s.Tools, s.Failures, s.NoResult = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	ids, byID := transcripttest.Merge(evs)
	s.Distinct = len(ids)
	models := map[string]bool{}
	for _, id := range ids {
		e := byID[id]
		if s.Project == "" {
			s.Project = e.Project
		}
		switch {
		case e.TokenUsage != nil:
			u := e.TokenUsage
			s.Usage.Deltas++
			s.Usage.Input += u.Input
			s.Usage.CacheRead += u.CacheRead
			s.Usage.Output += u.Output
			s.Usage.Reasoning += u.Reasoning
			s.Usage.CostUSD += u.CostUSD
			models[u.Model] = true
		case e.Action != nil:
			a := e.Action
			s.Actions[string(a.Type)]++
			if a.Tool != "" && a.ToolUseID != "" {
				s.Tools[a.Tool]++
			}
			if a.ToolUseID == "" {
				continue
			}
			switch {
			case a.Success == nil:
				s.NoResult[string(a.Type)]++
			case !*a.Success:
				s.Failures[string(a.Type)]++
			}
		}
	}
	s.Usage.CostUSD = math.Round(s.Usage.CostUSD*1e6) / 1e6
	for k := range models {
		s.Usage.Models = append(s.Usage.Models, k)
	}
	sort.Strings(s.Usage.Models)
	return s
}

// withDuplicatedTokenCounts returns the lines with every token_count line written twice.
func withDuplicatedTokenCounts(lines [][]byte) [][]byte {
	var out [][]byte
	for _, l := range lines {
		out = append(out, l)
		if bytes.Contains(l, []byte(`"type":"token_count"`)) {
			out = append(out, l)
		}
	}
	return out
}

// restamp returns line with its timestamp replaced.
func restamp(tb testing.TB, line []byte, ts string) []byte {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		tb.Fatal(err)
	}
	m["timestamp"], _ = json.Marshal(ts)
	out, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func writeLines(tb testing.TB, path string, lines [][]byte) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// eventsJSON renders events for comparison.
func eventsJSON(tb testing.TB, evs []event.Event) string {
	tb.Helper()
	var b strings.Builder
	w := bufio.NewWriter(&b)
	for i := range evs {
		w.Write(mustJSON(tb, evs[i]))
		w.WriteByte('\n')
	}
	w.Flush()
	return b.String()
}

// withoutSeq returns evs with the messages' Seq cleared.
func withoutSeq(evs []event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		if e.Message != nil {
			m := *e.Message
			m.Seq = 0
			e.Message = &m
		}
		out[i] = e
	}
	return out
}
