package pi

import (
	"fmt"
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

// check validates events and their envelope.
var check = transcripttest.Envelope(Client, Component)

// parseFile parses a whole file in one pass.
func parseFile(tb testing.TB, a *Adapter, src transcript.Source) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, a.newParser, src, check)
}

// parseLines parses lines given as strings.
func parseLines(tb testing.TB, a *Adapter, path string, lines ...string) ([]event.Event, *Parser) {
	tb.Helper()
	return transcripttest.ParseLines(tb, a.newParser, srcOf(path), check, lines...)
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

func (b *bucket) Add(u *event.TokenUsage) {
	b.Messages++
	b.Input += u.Input
	b.CacheRead += u.CacheRead
	b.CacheCreation += u.CacheCreation
	b.Output += u.Output
	b.CostUSD += u.CostUSD
}

func (b *bucket) RoundCost() { b.CostUSD = transcripttest.RoundUSD(b.CostUSD) }

// summary is the per-file figures kept in the golden files.
type summary = transcripttest.Summary[bucket]

func summarize(evs []event.Event, p *Parser) summary {
	return transcripttest.Summarize[bucket](evs, p.Stats(), p.st.ID, transcripttest.Style{Session: sessionLine})
}

// sessionLine writes a session event as the golden files have it: state, model, epoch; title.
func sessionLine(s *event.Session) string {
	if s.Title != "" {
		return fmt.Sprintf("title %q by user %v", s.Title, s.TitleByUser)
	}
	line := s.State + " " + s.Model
	if s.Epoch > 0 {
		line += fmt.Sprintf("epoch %d", s.Epoch)
	}
	return strings.TrimSpace(line)
}
