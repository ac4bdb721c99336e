package pricing_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// corpus is the shared corpus of real transcripts (see ../shared/corpus/README.md from the
// project root). Tests that need it skip when it is absent.
func corpus(tb testing.TB, rel string) string {
	tb.Helper()
	p := filepath.Join("..", "..", "..", "shared", "corpus", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("corpus file %s not available: %v", rel, err)
	}
	return p
}

// Pi (badlogic/pi-mono) stores its own cost beside every assistant message's usage. Its usage is
// already in our buckets (input net of cache; cacheWrite are 5-minute writes), and no prompt in these
// files exceeds 200k, so our prices must reproduce every figure. 937 messages: Claude Opus 4.5,
// Claude Sonnet 4.5 and one GPT-5.1 Codex turn.
func TestCorpus_PiCostsMatch(t *testing.T) {
	type piUsage struct {
		Input, Output, CacheRead, CacheWrite int64
		Cost                                 struct{ Total float64 }
	}
	type piLine struct {
		Message struct {
			Role  string
			Model string
			Usage *piUsage
		}
	}
	tab := pricing.Default()
	for _, name := range []string{"pi-mono__before-compaction.jsonl", "pi-mono__large-session.jsonl"} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(corpus(t, "pi/"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
			var n int
			var ours, theirs float64
			for sc.Scan() {
				var l piLine
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatal(err)
				}
				u := l.Message.Usage
				if l.Message.Role != "assistant" || u == nil {
					continue
				}
				tok := event.Tokens{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheCreation: u.CacheWrite}
				got, known := tab.Cost(l.Message.Model, tok)
				if !known {
					t.Fatalf("model %q unknown", l.Message.Model)
				}
				if !approx(got, u.Cost.Total) {
					t.Errorf("%s %+v: cost %.10f, pi says %.10f", l.Message.Model, tok, got, u.Cost.Total)
				}
				n++
				ours += got
				theirs += u.Cost.Total
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
			if n < 400 {
				t.Fatalf("read %d priced messages, want the whole file", n)
			}
			if !approx(ours, theirs) {
				t.Errorf("total %.8f, pi says %.8f", ours, theirs)
			}
		})
	}
}

// Cline stores a cost per message and a session total. The table prices deepseek-v4-flash at its
// standard list price (api-docs.deepseek.com/quick_start/pricing: $0.14 input, $0.0028 cache hit,
// $0.28 output; the off-peak discount is not modelled), which is what Cline charged. Cline's inputTokens include the cache reads, as
// OpenAI-style APIs report them; event.Tokens.Input is net of them.
func TestCorpus_ClineCostsMatch(t *testing.T) {
	var msgs struct {
		Messages []struct {
			Role      string
			ModelInfo struct{ ID string }
			Metrics   *struct {
				InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
				Cost                                                         float64
			}
		}
	}
	var meta struct {
		Metadata struct{ TotalCost float64 }
	}
	for path, v := range map[string]any{
		"cline/observer__sample-session-messages.json": &msgs,
		"cline/observer__sample-session-meta.json":     &meta,
	} {
		b, err := os.ReadFile(corpus(t, path))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	tab := pricing.Default()
	var total float64
	var n int
	for _, m := range msgs.Messages {
		if m.Role != "assistant" || m.Metrics == nil {
			continue
		}
		tok := event.Tokens{
			Input:         m.Metrics.InputTokens - m.Metrics.CacheReadTokens,
			Output:        m.Metrics.OutputTokens,
			CacheRead:     m.Metrics.CacheReadTokens,
			CacheCreation: m.Metrics.CacheWriteTokens,
		}
		got, known := tab.Cost(m.ModelInfo.ID, tok)
		if !known {
			t.Fatalf("model %q unknown", m.ModelInfo.ID)
		}
		if !approx(got, m.Metrics.Cost) {
			t.Errorf("%+v: cost %.10f, Cline says %.10f", tok, got, m.Metrics.Cost)
		}
		total += got
		n++
	}
	if n != 3 {
		t.Fatalf("priced %d messages, want 3", n)
	}
	if !approx(total, meta.Metadata.TotalCost) || !approx(total, 0.0202472312) {
		t.Errorf("total %.10f, Cline says %.10f", total, meta.Metadata.TotalCost)
	}
	// Priced by its own row, exactly.
	if m, ok := tab.Resolve("deepseek/deepseek-v4-flash"); !ok || m.Key != "deepseek-v4-flash" || m.Approximate {
		t.Errorf("deepseek/deepseek-v4-flash: %+v, %v", m, ok)
	}
}
