package copilot

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

func cliCorpus(tb testing.TB) string {
	tb.Helper()
	return transcripttest.CorpusFile(tb, transcripttest.CorpusDir(corpusCLISub), fileCLI)
}

func vscodeCorpus(tb testing.TB) string {
	tb.Helper()
	return transcripttest.CorpusFile(tb, transcripttest.CorpusDir(corpusVSCodeSub), fileVSCode)
}

// TestCorpus_Golden keeps the figures of every Copilot file of the corpus in testdata/golden:
// sessions, prompts, tool calls by normalized type with their targets, and the token buckets per
// model (none for VS Code).
func TestCorpus_Golden(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	t.Run("cli", func(t *testing.T) {
		names := transcripttest.CorpusNames(t, "Copilot CLI", transcripttest.CorpusDir(corpusCLISub), ".jsonl")
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				path := transcripttest.CorpusFile(t, transcripttest.CorpusDir(corpusCLISub), name)
				evs, p := parseCLIFile(t, New(nil), cliSrc(path))
				transcripttest.Golden(t, filepath.Join(dir, name+".golden.json"), summarize(evs, p.Stats(), p.st.SessionID), *update)
			})
		}
	})
	t.Run("vscode", func(t *testing.T) {
		names := transcripttest.CorpusNames(t, "VS Code Copilot Chat", transcripttest.CorpusDir(corpusVSCodeSub), ".json", ".jsonl")
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				path := transcripttest.CorpusFile(t, transcripttest.CorpusDir(corpusVSCodeSub), name)
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				p, _ := newVSCodeParser(vsSrc(path), nil)
				evs, err := p.Record(0, data)
				if err != nil {
					t.Fatal(err)
				}
				check(t, ClientVSCode, evs)
				transcripttest.Golden(t, filepath.Join(dir, name+".golden.json"), summarize(evs, p.Stats(), p.st.SessionID), *update)
			})
		}
	})
	if !*update {
		transcripttest.GoldenOrphans(t, dir, transcripttest.CorpusDir(corpusCLISub), transcripttest.CorpusDir(corpusVSCodeSub))
	}
}

// The corpus's CLI session, against the figures of MANIFEST.tsv and EXPECTED.md (the
// session.shutdown's modelMetrics: input 186809, output 2848, cacheRead 151738, cacheWrite 0,
// reasoning 0; the per-message outputTokens add up to 2848 too) and VibeCodingTracker's own
// report of the same file (tools Bash 2, Read 4; 4 files read; 2 commands). The figures are
// recomputed here from the file with encoding/json, independently of the parser.
func TestCorpus_CLIAgainstManifest(t *testing.T) {
	path := cliCorpus(t)
	var metrics struct {
		Input, Output, CacheRead, CacheWrite, Reasoning int64
	}
	var msgOutput int64
	var requests, results int
	names := map[string]int{}
	for _, l := range transcripttest.ReadLines(t, path) {
		var r struct {
			Type string `json:"type"`
			Data struct {
				ModelMetrics map[string]struct {
					Usage struct {
						InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens, ReasoningTokens int64
					}
				} `json:"modelMetrics"`
				OutputTokens int64 `json:"outputTokens"`
				ToolRequests []struct {
					Name string `json:"name"`
				} `json:"toolRequests"`
			} `json:"data"`
		}
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		switch r.Type {
		case "session.shutdown":
			for _, m := range r.Data.ModelMetrics {
				metrics.Input += m.Usage.InputTokens
				metrics.Output += m.Usage.OutputTokens
				metrics.CacheRead += m.Usage.CacheReadTokens
				metrics.CacheWrite += m.Usage.CacheWriteTokens
				metrics.Reasoning += m.Usage.ReasoningTokens
			}
		case "assistant.message":
			msgOutput += r.Data.OutputTokens
			for _, tr := range r.Data.ToolRequests {
				requests++
				names[tr.Name]++
			}
		case "tool.execution_complete":
			results++
		}
	}
	if metrics.Input != 186809 || metrics.Output != 2848 || metrics.CacheRead != 151738 || metrics.CacheWrite != 0 ||
		metrics.Reasoning != 0 || msgOutput != 2848 {
		t.Fatalf("the corpus file is not the one MANIFEST.tsv describes: %+v, message output %d", metrics, msgOutput)
	}

	evs, p := parseCLIFile(t, New(nil), cliSrc(path))
	s := summarize(evs, p.Stats(), p.st.SessionID)
	u := s.Usage
	if u.Events != 1 || u.Input != metrics.Input-metrics.CacheRead-metrics.CacheWrite || u.CacheRead != metrics.CacheRead ||
		u.CacheCreation != metrics.CacheWrite || u.Output != metrics.Output || u.Reasoning != metrics.Reasoning {
		t.Errorf("usage %+v, the shutdown's %+v (input net of cache = %d)", u, metrics, metrics.Input-metrics.CacheRead)
	}
	if u.Input+u.CacheRead+u.CacheCreation != 186809 {
		t.Errorf("the prompt's tokens add up to %d, Copilot's inputTokens 186809", u.Input+u.CacheRead+u.CacheCreation)
	}
	if u.Reliability != string(event.ReliabilityApproximate) || u.CostUSD <= 0 {
		t.Errorf("claude-sonnet-4.6 unpriced: %+v", u)
	}
	if s.ByModel["claude-sonnet-4.6"] == nil {
		t.Errorf("models %v", transcripttest.SortedKeys(s.ByModel))
	}
	if requests != 11 || results != 11 || s.Tools["bash"] != 2 || s.Tools["view"] != 4 ||
		s.Actions["run_command"] != 2 || s.Actions["read_file"] != 4 {
		t.Errorf("%d requests %d results; tools %v actions %v (VibeCodingTracker: Bash 2, Read 4)", requests, results, s.Tools, s.Actions)
	}
	for tool, n := range names {
		if s.Tools[tool] != n {
			t.Errorf("%s: %d calls, the file has %d", tool, s.Tools[tool], n)
		}
	}
	if len(s.NoResult) != 0 || len(s.Failures) != 0 || s.Malformed != 0 || len(s.Unknown) != 0 {
		t.Errorf("no result %v failures %v malformed %d unknown %v", s.NoResult, s.Failures, s.Malformed, s.Unknown)
	}
	if len(s.Prompts) != 1 || s.SessionID != "96ef38f0-9d09-45c3-8124-6448c36090ed" ||
		s.Project != "/home/wei/repo/VibeCodingTracker" {
		t.Errorf("prompts %q session %s project %s", s.Prompts, s.SessionID, s.Project)
	}
	// VibeCodingTracker's readFileDetails: the project, Cargo.toml, src and .github.
	var reads []string
	for _, a := range transcripttest.ActionsOf(evs) {
		if a.Type == event.ActionReadFile {
			reads = append(reads, a.Target)
		}
		if a.Success == nil || !*a.Success || a.Model != "claude-sonnet-4.6" || a.Transcript != path {
			t.Errorf("action %+v", a)
		}
	}
	if !slices.Equal(reads, []string{".", "Cargo.toml", "src", ".github"}) {
		t.Errorf("reads %q", reads)
	}
}

// The corpus's VS Code session, against EXPECTED.md (3 requests; the peer's token figures are
// tokenizer estimates, so this reader has none) and the file itself: 13 tool invocations, each
// complete, paired with the model's calls (grep_search and read_file).
func TestCorpus_VSCodeFigures(t *testing.T) {
	path := vscodeCorpus(t)
	evs, _ := readVSFile(t, path)
	s := summarize(evs, transcript.Stats{}, "")
	if s.Usage.Events != 0 {
		t.Errorf("copilot-vscode emitted token usage: %+v", s.Usage)
	}
	for _, e := range evs {
		if e.TokenUsage != nil || e.APITurn != nil {
			t.Fatalf("usage event %+v", e)
		}
	}
	if len(s.Prompts) != 3 || s.Actions["read_file"] != 8 || s.Actions["search_text"] != 5 ||
		s.Tools["copilot_readFile"] != 8 || s.Tools["copilot_findTextInFiles"] != 5 {
		t.Errorf("prompts %d actions %v tools %v", len(s.Prompts), s.Actions, s.Tools)
	}
	if len(s.NoResult) != 0 || len(s.Failures) != 0 {
		t.Errorf("no result %v failures %v", s.NoResult, s.Failures)
	}
	if s.Project != "/home/sample/workspace/splitrail" {
		t.Errorf("project %q", s.Project)
	}
	outputs := 0
	for _, a := range transcripttest.ActionsOf(evs) {
		if a.OutputSize > 0 && a.Output != "" {
			outputs++
		}
		if a.Model != "generic-copilot/litellm/anthropic/claude-haiku-4.5" || a.RequestID == "" || a.InputHash == "" {
			t.Errorf("action %+v", a)
		}
	}
	if outputs != 13 {
		t.Errorf("%d of 13 invocations have their output", outputs)
	}
	if !slices.Contains(s.Sessions, `title "Adding a debug option to the application" by user false`) {
		t.Errorf("sessions %q", s.Sessions)
	}
}
