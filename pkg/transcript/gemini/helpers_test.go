package gemini

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// corpusDir holds the Gemini CLI files of the corpus.
func corpusDir() string { return transcripttest.CorpusDir("gemini-cli") }

// Corpus files, by the name the corpus gives them.
const (
	fileVCTJSONL  = "VibeCodingTracker__gemini.jsonl"
	fileVCTLegacy = "VibeCodingTracker__test_conversation_gemini.json"
	fileCodemieA  = "codemie-code__session-2025-12-01T21-45-5b959dae.json"
	fileCodemieB  = "codemie-code__session-2026-01-16T11-01-file-ops-37b7abef.json"
	fileLive      = "observer__session-live-toolcalls.jsonl"
)

func TestMain(m *testing.M) {
	transcripttest.WarnAbsentCorpus("Gemini CLI", "gemini-cli")
	os.Exit(m.Run())
}

// corpus returns the absolute path of a corpus file, skipping the test when it is absent.
func corpus(tb testing.TB, name string) string {
	tb.Helper()
	return transcripttest.CorpusFile(tb, corpusDir(), name)
}

// corpusNames lists the Gemini CLI files of the corpus, skipping the test when it is absent.
func corpusNames(tb testing.TB) []string {
	tb.Helper()
	return transcripttest.CorpusNames(tb, "Gemini CLI", corpusDir(), ".json", ".jsonl")
}

// srcOf is the source Discover would give a file: a document when it ends in .json.
func srcOf(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Document: strings.HasSuffix(path, ".json")}
}

// run feeds records to a parser and returns the events.
func run(tb testing.TB, p *Parser, recs [][]byte) []event.Event {
	tb.Helper()
	var out []event.Event
	var off int64
	for _, rec := range recs {
		evs, err := p.Record(off, rec)
		off += int64(len(rec)) + 1
		if err != nil {
			tb.Logf("record at %d: %v", off, err)
		}
		transcripttest.CheckEvents(tb, evs)
		out = append(out, evs...)
	}
	return out
}

// parseFile parses a whole file in one pass: a .json as one document, a .jsonl by line.
func parseFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := a.newParser(src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	if src.Document {
		data, err := os.ReadFile(src.Path)
		if err != nil {
			tb.Fatal(err)
		}
		return run(tb, p, [][]byte{data}), p
	}
	return run(tb, p, transcripttest.ReadLines(tb, src.Path)), p
}

// bucket is one model's usage.
type bucket struct {
	Messages  int     `json:"messages"`
	Input     int64   `json:"input_tokens"` // net of cache reads
	CacheRead int64   `json:"cache_read_tokens"`
	Output    int64   `json:"output_tokens"` // thoughts included
	Reasoning int64   `json:"reasoning_tokens"`
	CostUSD   float64 `json:"cost_usd"`
}

func (b *bucket) add(u *event.TokenUsage) {
	b.Messages++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.Output += u.Output
	b.Reasoning += u.Reasoning
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
	Sessions []string         `json:"sessions"`  // session events: state, model; title
	Unknown  map[string]int64 `json:"unknown,omitempty"`
}

func summarize(evs []event.Event, p *Parser) summary {
	st := p.Stats()
	s := summary{SessionID: p.st.SessionID, Records: st.Lines, Malformed: st.Malformed, Events: len(evs),
		ByModel: map[string]*bucket{}, Prompts: []string{}, Actions: map[string]int{}, Tools: map[string]int{},
		Failures: map[string]int{}, NoResult: map[string]int{}, Sessions: []string{}, Unknown: st.Unknown}
	ids, byID := transcripttest.Merge(evs)
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
		case e.Session != nil && e.Session.Title != "":
			s.Sessions = append(s.Sessions, "title "+e.Session.Title)
		case e.Session != nil:
			s.Sessions = append(s.Sessions, strings.TrimSpace(e.Session.State+" "+e.Session.Model))
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
