package gemini

import (
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
	return transcripttest.Feed(tb, p, recs, transcripttest.CheckEvents)
}

// parseFile parses a whole file in one pass: a .json as one document, a .jsonl by line.
func parseFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, a.newParser, src, transcripttest.CheckEvents)
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

func (b *bucket) Add(u *event.TokenUsage) {
	b.Messages++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.Output += u.Output
	b.Reasoning += u.Reasoning
	b.CostUSD += u.CostUSD
}

func (b *bucket) RoundCost() { b.CostUSD = transcripttest.RoundUSD(b.CostUSD) }

// summary is the per-file figures kept in the golden files.
type summary = transcripttest.Summary[bucket]

func summarize(evs []event.Event, p *Parser) summary {
	return transcripttest.Summarize[bucket](evs, p.Stats(), p.st.SessionID, transcripttest.Style{Session: sessionLine})
}

// sessionLine writes a session event as the golden files have it: state, model; title.
func sessionLine(s *event.Session) string {
	if s.Title != "" {
		return "title " + s.Title
	}
	return strings.TrimSpace(s.State + " " + s.Model)
}
