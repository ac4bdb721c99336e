package claudecode

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// corpusDir holds the shared corpus of real Claude Code transcripts, relative to this package.
const corpusDir = "../../../../shared/corpus/claude-code"

// Corpus files, by the name the corpus gives them.
const (
	fileVCT          = "VibeCodingTracker__claude_code.jsonl"
	fileCodemieMain  = "codemie-code__4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"
	fileCodemieAgent = "codemie-code__agent-36541525.jsonl"
	fileCodemieHaiku = "codemie-code__agent-50243ee8.jsonl"
	fileTurn2        = "codemie-code__incremental-subagents__turn-2.jsonl"
	fileTurn2Agent   = "codemie-code__incremental-subagents__turn-2__subagents__agent-a485154.jsonl"
	fileViewerInline = "claude-code-viewer__fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
	file624          = "codemie-code__session-624a4a58.jsonl"
	file9eda         = "codemie-code__session-9eda1058.jsonl"
)

var snifflyFiles = []string{
	"sniffly__ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl",
	"sniffly__d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl",
	"sniffly__fed8ce56-bc79-401f-a83e-af084253362f.jsonl",
	"sniffly__ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl",
}

var codemieTrio = []string{fileCodemieMain, fileCodemieAgent, fileCodemieHaiku}

// corpus returns the absolute path of a corpus file, skipping the test when the corpus is absent.
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

// corpusNames lists every Claude Code file of the corpus, skipping the test when it is absent.
func corpusNames(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		tb.Skipf("corpus absent: %v", err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	return out
}

// layout copies the corpus into a projects directory the way Claude Code lays it out (and the way
// /work/shared/scripts/gen_history.py small does): every file in one project directory under its
// name without the "<repo>__" prefix, except the 2.1-layout subagent file, which goes to
// <session>/subagents/agent-a485154.jsonl. It returns the projects directory.
func layout(tb testing.TB) string {
	tb.Helper()
	names := corpusNames(tb)
	root := filepath.Join(tb.TempDir(), "projects")
	proj := filepath.Join(root, "-corpus")
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			tb.Fatal(err)
		}
		dst := filepath.Join(proj, strings.SplitN(name, "__", 2)[1])
		if name == fileTurn2Agent {
			dst = filepath.Join(proj, "incremental-subagents__turn-2", "subagents", "agent-a485154.jsonl")
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root
}

// srcOf is the source Discover would give a corpus file laid out beside its session: the session
// is the file name without its "<repo>__" prefix, or for an agent-<id> file the sessionId its
// lines carry.
func srcOf(path string) transcript.Source {
	stem := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if i := strings.Index(stem, "__"); i >= 0 {
		stem = stem[i+2:]
	}
	if agent, ok := strings.CutPrefix(stem, "agent-"); ok {
		sid, _ := peekIDs(path)
		return transcript.Source{Client: Client, Path: path, SessionID: sid, AgentID: agent}
	}
	return transcript.Source{Client: Client, Path: path, SessionID: stem}
}

// run feeds lines to a parser and returns the events, checking that each validates.
func run(tb testing.TB, p *Parser, lines [][]byte) []event.Event {
	tb.Helper()
	return transcripttest.Feed(tb, p, lines, transcripttest.CheckValid)
}

func newTestParser(tb testing.TB, src transcript.Source, state []byte) *Parser {
	tb.Helper()
	p, err := New(nil).newParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// parseFile parses a whole file in one pass.
func parseFile(tb testing.TB, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, New(nil).newParser, src, transcripttest.CheckValid)
}

// merge folds events with the same id the way the writer does (pkg/store/write.go): a token_usage
// row takes the figures of a later event whose output is larger; an action's later events fill in
// what the first lacked (a result's success, error, output and duration; the call's type when the
// result came first).
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
			if e.TokenUsage != nil {
				u := *e.TokenUsage
				cp.TokenUsage = &u
			}
			byID[e.ID] = cp
			continue
		}
		if e.TokenUsage != nil && old.TokenUsage != nil {
			if e.TokenUsage.Output > old.TokenUsage.Output {
				old.TokenUsage.Tokens = e.TokenUsage.Tokens
				old.TokenUsage.CostUSD = e.TokenUsage.CostUSD
			}
			continue
		}
		if e.Action == nil || old.Action == nil {
			continue
		}
		a, n := old.Action, e.Action
		if a.Type == event.ActionUnknown {
			a.Type = n.Type
		}
		if a.Tool == "" {
			a.Tool = n.Tool
		}
		if a.Target == "" {
			a.Target = n.Target
		}
		if n.Success != nil {
			a.Success = n.Success
		}
		if n.Error != "" {
			a.Error = n.Error
		}
		if n.Output != "" {
			a.Output = n.Output
		}
		a.OutputSize = max(a.OutputSize, n.OutputSize)
		a.DurationMs = max(a.DurationMs, n.DurationMs)
	}
	return ids, byID
}

// usageTotals are a session's token figures after the writer's merge.
type usageTotals struct {
	Messages        int      `json:"messages"`
	Input           int64    `json:"input_tokens"`
	Output          int64    `json:"output_tokens"`
	CacheRead       int64    `json:"cache_read_tokens"`
	CacheCreation   int64    `json:"cache_creation_tokens"`
	CacheCreation1h int64    `json:"cache_creation_1h_tokens"`
	CostUSD         float64  `json:"cost_usd"`
	Models          []string `json:"models"`
	Unpriced        []string `json:"unpriced_models,omitempty"`
}

func (u usageTotals) buckets() [4]int64 {
	return [4]int64{u.Input, u.Output, u.CacheCreation, u.CacheRead}
}

// summary is the per-session figures kept in the golden files.
type summary struct {
	SessionID string           `json:"session_id"`
	Files     []string         `json:"files"`
	Projects  []string         `json:"projects"`
	Agents    []string         `json:"agents,omitempty"`
	Lines     int64            `json:"lines"`
	Malformed int64            `json:"malformed"`
	Unknown   map[string]int64 `json:"unknown,omitempty"`
	Events    int              `json:"events"`
	Distinct  int              `json:"distinct_ids"`

	Usage usageTotals `json:"usage"`

	Actions   map[string]int `json:"actions"`   // normalized type -> distinct actions
	Tools     map[string]int `json:"tools"`     // raw tool -> distinct calls
	Failures  map[string]int `json:"failures"`  // raw tool -> calls that failed
	NoResult  map[string]int `json:"no_result"` // raw tool -> calls with no result in the files
	Sidechain int            `json:"sidechain_actions"`
}

// totals merges events and sums their token usage.
func totals(evs []event.Event) usageTotals {
	var u usageTotals
	ids, byID := merge(evs)
	models, unpriced := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		t := byID[id].TokenUsage
		if t == nil {
			continue
		}
		u.Messages++
		u.Input += t.Input
		u.Output += t.Output
		u.CacheRead += t.CacheRead
		u.CacheCreation += t.CacheCreation
		u.CacheCreation1h += t.CacheCreation1h
		u.CostUSD += t.CostUSD
		models[t.Model] = true
		if t.Reliability == event.ReliabilityUnknown {
			unpriced[t.Model] = true
		}
	}
	u.CostUSD = math.Round(u.CostUSD*1e6) / 1e6
	u.Models, u.Unpriced = keys(models), keys(unpriced)
	return u
}

func keys(m map[string]bool) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

func summarize(sid string, files []string, evs []event.Event, stats []transcript.Stats) summary {
	s := summary{SessionID: sid, Files: files, Actions: map[string]int{}, Tools: map[string]int{},
		Failures: map[string]int{}, NoResult: map[string]int{}}
	for _, st := range stats {
		s.Lines += st.Lines
		s.Malformed += st.Malformed
		for k, v := range st.Unknown {
			if s.Unknown == nil {
				s.Unknown = map[string]int64{}
			}
			s.Unknown[k] += v
		}
	}
	s.Events = len(evs)
	s.Usage = totals(evs)
	ids, byID := merge(evs)
	s.Distinct = len(ids)
	projects, agents := map[string]bool{}, map[string]bool{}
	for _, id := range ids {
		e := byID[id]
		projects[e.Project] = true
		a := e.Action
		if a == nil {
			continue
		}
		if a.AgentID != "" {
			agents[a.AgentID] = true
		}
		if a.Sidechain {
			s.Sidechain++
		}
		s.Actions[string(a.Type)]++
		if a.ToolUseID == "" {
			continue
		}
		s.Tools[a.Tool]++
		switch {
		case a.Success == nil:
			s.NoResult[a.Tool]++
		case !*a.Success:
			s.Failures[a.Tool]++
		}
	}
	s.Projects, s.Agents = keys(projects), keys(agents)
	return s
}

// usageIDs returns the ids of the token_usage events.
func usageIDs(evs []event.Event) map[string]bool {
	out := map[string]bool{}
	for _, e := range evs {
		if e.TokenUsage != nil {
			out[e.ID] = true
		}
	}
	return out
}

// lastTime is the last timestamp the parser saw.
func (p *Parser) lastTime() time.Time { return time.Unix(0, p.st.LastTime).UTC() }
