package copilot

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// Corpus directories and files, by the names the corpus gives them.
const (
	corpusCLISub    = "copilot-cli"
	corpusVSCodeSub = "copilot-vscode"
	fileCLI         = "VibeCodingTracker__copilot.jsonl"
	fileVSCode      = "splitrail__copilot.json"
)

func TestMain(m *testing.M) {
	transcripttest.WarnAbsentCorpus("Copilot CLI", corpusCLISub)
	transcripttest.WarnAbsentCorpus("VS Code Copilot Chat", corpusVSCodeSub)
	os.Exit(m.Run())
}

// cliSrc is the source Discover would give a CLI log.
func cliSrc(path string) transcript.Source {
	return transcript.Source{Client: ClientCLI, Path: path, SessionID: SessionIDFromPath(path)}
}

// vsSrc is the source Discover would give a VS Code session file.
func vsSrc(path string) transcript.Source {
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".jsonl"), ".json")
	return transcript.Source{Client: ClientVSCode, Path: path, SessionID: stem, Document: true}
}

// check validates events and their envelope.
func check(tb testing.TB, client string, evs []event.Event) {
	tb.Helper()
	transcripttest.CheckEvents(tb, evs)
	for i := range evs {
		if e := &evs[i]; e.Client != client || e.Source != Component || e.SessionID == "" {
			tb.Fatalf("envelope %+v", e)
		}
	}
}

// runCLI feeds lines to a CLI parser and returns the events; malformed lines are logged.
func runCLI(tb testing.TB, p *Parser, lines [][]byte) []event.Event {
	tb.Helper()
	var out []event.Event
	var off int64
	for _, l := range lines {
		evs, err := p.Record(off, l)
		off += int64(len(l)) + 1
		if err != nil {
			tb.Logf("line at %d: %v", off, err)
		}
		check(tb, ClientCLI, evs)
		out = append(out, evs...)
	}
	return out
}

// parseCLIFile parses a whole CLI log in one pass.
func parseCLIFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := a.newParser(src, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return runCLI(tb, p, transcripttest.ReadLines(tb, src.Path)), p
}

// parseCLILines parses lines given as strings.
func parseCLILines(tb testing.TB, path string, lines ...string) ([]event.Event, *Parser) {
	tb.Helper()
	p, err := New(nil).newParser(cliSrc(path), nil)
	if err != nil {
		tb.Fatal(err)
	}
	var bs [][]byte
	for _, l := range lines {
		bs = append(bs, []byte(l))
	}
	return runCLI(tb, p, bs), p
}

// readDoc hands a whole document to a fresh VS Code parser resumed from state, as the caller
// does at each change, and returns its events, its new state and its error.
func readDoc(tb testing.TB, src transcript.Source, state, data []byte) ([]event.Event, []byte, error) {
	tb.Helper()
	p, err := NewVSCode(nil).NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	check(tb, ClientVSCode, evs)
	return evs, p.State(), err
}

// bucket is one model's usage.
type bucket struct {
	Events        int     `json:"events"`
	Input         int64   `json:"input_tokens"` // net of cache reads and writes
	CacheRead     int64   `json:"cache_read_tokens"`
	CacheCreation int64   `json:"cache_creation_tokens"`
	Output        int64   `json:"output_tokens"` // reasoning included
	Reasoning     int64   `json:"reasoning_tokens"`
	CostUSD       float64 `json:"cost_usd"`
	Reliability   string  `json:"reliability"`
}

func (b *bucket) add(u *event.TokenUsage) {
	b.Events++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.CacheCreation += u.CacheCreation
	b.Output += u.Output
	b.Reasoning += u.Reasoning
	b.CostUSD += u.CostUSD
	b.Reliability = string(u.Reliability)
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
	Targets  []string         `json:"targets"`   // type tool target, per call in order
	Sessions []string         `json:"sessions"`  // session events: state, model, epoch; title
	Unknown  map[string]int64 `json:"unknown,omitempty"`
}

func summarize(evs []event.Event, st transcript.Stats, sessionID string) summary {
	s := summary{SessionID: sessionID, Records: st.Lines, Malformed: st.Malformed, Events: len(evs),
		ByModel: map[string]*bucket{}, Prompts: []string{}, Actions: map[string]int{}, Tools: map[string]int{},
		Failures: map[string]int{}, NoResult: map[string]int{}, Targets: []string{}, Sessions: []string{},
		Unknown: st.Unknown}
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
			parts := []string{e.Session.State}
			if e.Session.Model != "" {
				parts = append(parts, e.Session.Model)
			}
			if e.Session.Epoch > 0 {
				parts = append(parts, fmt.Sprintf("epoch %d", e.Session.Epoch))
			}
			if e.Session.Cwd != "" {
				parts = append(parts, "cwd "+e.Session.Cwd)
			}
			s.Sessions = append(s.Sessions, strings.Join(parts, " "))
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
			s.Targets = append(s.Targets, fmt.Sprintf("%s %s %s", a.Type, a.Tool, transcript.CutRunes(a.Target, 80)))
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
