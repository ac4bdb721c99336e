package pi

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// corpusDir holds the Pi files of the corpus.
func corpusDir() string { return transcripttest.CorpusDir("pi") }

// Corpus files, by the name the corpus gives them.
const (
	fileCompaction = "pi-mono__before-compaction.jsonl"
	fileLarge      = "pi-mono__large-session.jsonl"
)

func TestMain(m *testing.M) {
	transcripttest.WarnAbsentCorpus("Pi", "pi")
	os.Exit(m.Run())
}

// corpus returns the absolute path of a corpus file, skipping the test when it is absent.
func corpus(tb testing.TB, name string) string {
	tb.Helper()
	return transcripttest.CorpusFile(tb, corpusDir(), name)
}

// corpusNames lists the Pi files of the corpus, skipping the test when it is absent.
func corpusNames(tb testing.TB) []string {
	tb.Helper()
	return transcripttest.CorpusNames(tb, "Pi", corpusDir(), ".jsonl")
}

// srcOf is the source Discover would give a file.
func srcOf(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, SessionID: SessionIDFromPath(path)}
}

// check validates events.
func check(tb testing.TB, evs []event.Event) {
	tb.Helper()
	transcripttest.CheckEvents(tb, evs)
	for i := range evs {
		if e := &evs[i]; e.Client != Client || e.Source != Component {
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
	return run(tb, p, transcripttest.ReadLines(tb, src.Path)), p
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
	Sessions []string         `json:"sessions"`  // session events: state, model, epoch; title
	Unknown  map[string]int64 `json:"unknown,omitempty"`
}

func summarize(evs []event.Event, p *Parser) summary {
	st := p.Stats()
	s := summary{SessionID: p.st.ID, Records: st.Lines, Malformed: st.Malformed, Events: len(evs),
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
			s.Sessions = append(s.Sessions, fmt.Sprintf("title %q by user %v", e.Session.Title, e.Session.TitleByUser))
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
