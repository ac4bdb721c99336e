package copilot

import (
	"fmt"
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

// checkCLI validates a CLI parser's events and their envelope.
func checkCLI(tb testing.TB, evs []event.Event) {
	tb.Helper()
	check(tb, ClientCLI, evs)
}

// runCLI feeds lines to a CLI parser and returns the events; malformed lines are logged.
func runCLI(tb testing.TB, p *Parser, lines [][]byte) []event.Event {
	tb.Helper()
	return transcripttest.Feed(tb, p, lines, checkCLI)
}

// parseCLIFile parses a whole CLI log in one pass.
func parseCLIFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, a.newParser, src, checkCLI)
}

// parseCLILines parses lines given as strings.
func parseCLILines(tb testing.TB, path string, lines ...string) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseLines(tb, New(nil).newParser, cliSrc(path), checkCLI, lines...)
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

// readVSFile reads the VS Code session file at path whole with a fresh parser, failing the test on
// an error. It returns the events and the file's bytes.
func readVSFile(tb testing.TB, path string) ([]event.Event, []byte) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	evs, _, err := readDoc(tb, vsSrc(path), nil, data)
	if err != nil {
		tb.Fatal(err)
	}
	return evs, data
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

func (b *bucket) Add(u *event.TokenUsage) {
	b.Events++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.CacheCreation += u.CacheCreation
	b.Output += u.Output
	b.Reasoning += u.Reasoning
	b.CostUSD += u.CostUSD
	b.Reliability = string(u.Reliability)
}

func (b *bucket) RoundCost() { b.CostUSD = transcripttest.RoundUSD(b.CostUSD) }

// summary is the per-file figures kept in the golden files, each tool call's target among them.
type summary = transcripttest.Summary[bucket]

func summarize(evs []event.Event, st transcript.Stats, sessionID string) summary {
	return transcripttest.Summarize[bucket](evs, st, sessionID, transcripttest.Style{Session: sessionLine, Targets: true})
}

// sessionLine writes a session event as the golden files have it: state, model, epoch, cwd; title.
func sessionLine(s *event.Session) string {
	if s.Title != "" {
		return fmt.Sprintf("title %q by user %v", s.Title, s.TitleByUser)
	}
	parts := []string{s.State}
	if s.Model != "" {
		parts = append(parts, s.Model)
	}
	if s.Epoch > 0 {
		parts = append(parts, fmt.Sprintf("epoch %d", s.Epoch))
	}
	if s.Cwd != "" {
		parts = append(parts, "cwd "+s.Cwd)
	}
	return strings.Join(parts, " ")
}
