package pi

import (
	"encoding/json"
	"flag"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestCorpus_Golden keeps the figures of every Pi file of the corpus in testdata/golden:
// sessions, prompts, tool calls by normalized type, and the token buckets per model.
func TestCorpus_Golden(t *testing.T) {
	names := corpusNames(t)
	dir := filepath.Join("testdata", "golden")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			evs, p := parseFile(t, New(nil), srcOf(corpus(t, name)))
			transcripttest.Golden(t, filepath.Join(dir, name+".golden.json"), summarize(evs, p), *update)
		})
	}
	if !*update {
		transcripttest.GoldenOrphans(t, dir, corpusDir())
	}
}

// piTotals sums what pi itself wrote in a file, read with encoding/json independently of the
// parser: the usage of every assistant message (pi's own footer totals these), its cost, its
// tool calls by name and the user messages.
type piTotals struct {
	Messages                                  int
	Input, Output, CacheRead, CacheWrite, All int64
	Cost                                      float64
	Calls                                     map[string]int
	Users, Compactions, Shell                 int
}

func totalsOf(tb testing.TB, path string) piTotals {
	tb.Helper()
	tot := piTotals{Calls: map[string]int{}}
	for _, l := range transcripttest.ReadLines(tb, path) {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
				Usage   struct {
					Input, Output, CacheRead, CacheWrite, TotalTokens int64
					Cost                                              struct{ Total float64 }
				} `json:"usage"`
			} `json:"message"`
		}
		if err := json.Unmarshal(l, &e); err != nil {
			tb.Fatal(err)
		}
		switch {
		case e.Type == "compaction":
			tot.Compactions++
		case e.Type != "message":
		case e.Message.Role == "user":
			tot.Users++
		case e.Message.Role == "bashExecution":
			tot.Shell++
		case e.Message.Role == "assistant":
			u := e.Message.Usage
			var blocks []struct{ Type, Name string }
			_ = json.Unmarshal(e.Message.Content, &blocks)
			for _, b := range blocks {
				if b.Type == "toolCall" {
					tot.Calls[b.Name]++
				}
			}
			if u.Input+u.Output+u.CacheRead+u.CacheWrite == 0 {
				continue
			}
			tot.Messages++
			tot.Input += u.Input
			tot.Output += u.Output
			tot.CacheRead += u.CacheRead
			tot.CacheWrite += u.CacheWrite
			tot.All += u.TotalTokens
			tot.Cost += u.Cost.Total
		}
	}
	return tot
}

// Both corpus files are pi-mono's own sessions (version 1): Claude through the Anthropic API, so
// pi's input is Anthropic's input_tokens (net of cache) and every bucket maps one to one. Our
// buckets must equal pi's sums, message for message, and our cost (observer's table) pi's own
// (its catalog had the same Anthropic list prices; no request reached a long-context tier).
// pi-mono's compaction test only asserts more than 100 entries and messages (EXPECTED.md F).
func TestCorpus_AgainstPiFigures(t *testing.T) {
	for _, c := range []struct {
		name                    string
		prompts, calls, results int
	}{
		{fileCompaction, 55, 454, 448},
		{fileLarge, 88, 391, 373},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := corpus(t, c.name)
			want := totalsOf(t, path)
			evs, p := parseFile(t, New(nil), srcOf(path))
			s := summarize(evs, p)
			u := s.Usage
			if u.Messages != want.Messages || u.Input != want.Input || u.Output != want.Output ||
				u.CacheRead != want.CacheRead || u.CacheCreation != want.CacheWrite {
				t.Errorf("usage %+v, pi's %+v", u, want)
			}
			if want.All != 0 && u.Input+u.Output+u.CacheRead+u.CacheCreation != want.All {
				t.Errorf("buckets add up to %d, pi's totalTokens to %d", u.Input+u.Output+u.CacheRead+u.CacheCreation, want.All)
			}
			if math.Abs(u.CostUSD-want.Cost) > 1e-5 {
				t.Errorf("cost %.6f, pi's %.6f", u.CostUSD, want.Cost)
			}
			if len(s.Prompts) != c.prompts || want.Users != c.prompts {
				t.Errorf("prompts %d, user messages %d, want %d", len(s.Prompts), want.Users, c.prompts)
			}
			calls, results := 0, 0
			for tool, n := range s.Tools {
				calls += n
				if n != want.Calls[tool] {
					t.Errorf("%s: %d calls, pi wrote %d", tool, n, want.Calls[tool])
				}
			}
			for _, a := range transcripttest.ActionsOf(evs) {
				if a.Success != nil {
					results++
				}
			}
			if calls != c.calls || results != c.results {
				t.Errorf("calls %d results %d, want %d %d", calls, results, c.calls, c.results)
			}
			if s.Actions["context_compacted"] != want.Compactions ||
				s.Actions["run_command"] != want.Calls["bash"]+want.Shell {
				t.Errorf("actions %v; pi wrote %d compactions, %d user shell commands", s.Actions, want.Compactions, want.Shell)
			}
			if s.Records <= 100 || s.Malformed != 0 || s.Project != "/Users/badlogic/workspaces/pi-mono" {
				t.Errorf("records %d malformed %d project %q", s.Records, s.Malformed, s.Project)
			}
			for _, a := range transcripttest.ActionsOf(evs) {
				if (a.Type == event.ActionReadFile || a.Type == event.ActionEditFile) && strings.HasPrefix(a.Target, "/Users/badlogic/workspaces/pi-mono/") {
					t.Errorf("target %q not relative to the project", a.Target)
				}
			}
		})
	}
}

// before-compaction.jsonl is a copy made by version 1's branching (its header names the source
// in branchedFrom), so its session's parent is that file's session.
func TestCorpus_BranchedFrom(t *testing.T) {
	evs, _ := parseFile(t, New(nil), srcOf(corpus(t, fileCompaction)))
	for _, e := range evs {
		if e.Session != nil && e.Session.State == event.SessionStarted {
			if e.Session.ParentSessionID != "d97339c6-6c10-4827-846b-9ff1d9c3dc37" {
				t.Errorf("parent %q", e.Session.ParentSessionID)
			}
			return
		}
	}
	t.Error("no started event")
}
