package gemini

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestCorpus_Golden keeps the figures of every Gemini CLI file of the corpus in testdata/golden:
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

// VibeCodingTracker's golden output for its JSONL fixture (EXPECTED.md B): per model, input is
// promptTokenCount − cached after deduplicating by message id with the last write winning (five
// model messages are written twice), output excludes thoughts. Our Input is the same net figure;
// our Output adds the thoughts (reasoning inside output), which Reasoning repeats. Tools: Read 7,
// Edit 1, Write 1 (update_topic, which it does not count, is our unknown).
func TestCorpus_VCTJSONL(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(corpus(t, fileVCTJSONL)))
	s := summarize(evs, p)
	want := map[string]bucket{
		"gemini-3-flash-preview": {Messages: 5, Input: 113397, CacheRead: 48951, Output: 1886 + 1689, Reasoning: 1689},
		"gemini-3.1-pro-preview": {Messages: 1, Input: 40238, CacheRead: 0, Output: 266 + 452, Reasoning: 452},
	}
	if len(s.ByModel) != len(want) {
		t.Fatalf("models = %v", transcripttest.SortedKeys(s.ByModel))
	}
	for m, w := range want {
		g := *s.ByModel[m]
		g.CostUSD = 0
		if g != w {
			t.Errorf("%s = %+v, want %+v", m, g, w)
		}
		// total = input + output + thoughts + tool, as the file's own total says.
		if m == "gemini-3-flash-preview" && g.Input+g.CacheRead+g.Output != 165923-1689+1689 {
			t.Errorf("%s total = %d, want 165923", m, g.Input+g.CacheRead+g.Output)
		}
	}
	if s.Tools["read_file"] != 7 || s.Tools["replace"] != 1 || s.Tools["write_file"] != 1 {
		t.Errorf("tools = %v", s.Tools)
	}
	if s.Actions["read_file"] != 7 || s.Actions["edit_file"] != 1 || s.Actions["write_file"] != 1 {
		t.Errorf("actions = %v", s.Actions)
	}
	// Each usage event once: a message rewritten with its tool calls emits the calls, not the usage
	// again.
	n := 0
	for _, e := range evs {
		if e.TokenUsage != nil {
			n++
		}
	}
	if n != 6 {
		t.Errorf("usage events = %d, want one per model message (6)", n)
	}
	if s.Project != "/home/wei/repo/discordbot" {
		t.Errorf("project = %q (verified against the header's projectHash)", s.Project)
	}
}

// VibeCodingTracker's legacy expectation (EXPECTED.md B, from before it subtracted cached tokens):
// input 76348, cache_read 39826, output 9325, thoughts 11616, total 97289; Read 3, Write 4. Ours:
// input net of cache, output with thoughts.
func TestCorpus_VCTLegacy(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(corpus(t, fileVCTLegacy)))
	s := summarize(evs, p)
	u := s.Usage
	if u.Input != 76348-39826 || u.CacheRead != 39826 || u.Output != 9325+11616 || u.Reasoning != 11616 {
		t.Errorf("usage = %+v", u)
	}
	if u.Input+u.CacheRead+u.Output != 97289 {
		t.Errorf("input + cache + output = %d, want the total 97289", u.Input+u.CacheRead+u.Output)
	}
	if s.Tools["read_file"] != 3 || s.Tools["write_file"] != 4 || len(s.Tools) != 2 {
		t.Errorf("tools = %v", s.Tools)
	}
	if s.Project != "/home/wei/repo/VibeCodingTracker" {
		t.Errorf("project = %q", s.Project)
	}
	for _, a := range transcripttest.ActionsOf(evs) {
		if strings.HasPrefix(a.Target, "/") {
			t.Errorf("target %q not relative to the project", a.Target)
		}
	}
}

// codemie-code's file-ops session (EXPECTED.md C.3): three writes to hello.md, six reads of which
// two of hello.md, model gemini-3-pro, no tool failure. Its 14 tool calls include write_todos,
// delegate_to_agent and search_file_content.
func TestCorpus_CodemieFileOps(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(corpus(t, fileCodemieB)))
	s := summarize(evs, p)
	var writes, reads, helloReads int
	for _, a := range transcripttest.ActionsOf(evs) {
		if a.Success == nil || !*a.Success {
			t.Errorf("%s %s: success %v", a.Tool, a.Target, a.Success)
		}
		switch a.Type {
		case event.ActionWriteFile:
			writes++
			if a.Target != "hello.md" {
				t.Errorf("write target %q", a.Target)
			}
		case event.ActionReadFile:
			reads++
			if a.Target == "hello.md" {
				helloReads++
			}
		}
	}
	if writes != 3 || reads != 6 || helloReads != 2 {
		t.Errorf("writes %d reads %d (hello.md %d), want 3, 6 (2)", writes, reads, helloReads)
	}
	if len(s.ByModel) != 1 || s.ByModel["gemini-3-pro"] == nil {
		t.Errorf("models = %v", transcripttest.SortedKeys(s.ByModel))
	}
	total := 0
	for _, n := range s.Tools {
		total += n
	}
	if total != 14 || s.Actions["spawn_subagent"] != 1 || s.Actions["todo_update"] != 3 || s.Actions["search_text"] != 1 {
		t.Errorf("tools = %v (%d), actions = %v", s.Tools, total, s.Actions)
	}
}

// The other codemie-code session: 3 user and 11 model messages, 10 tool calls (read_file 7,
// list_directory, write_file, replace), all successful. Its paths were pseudonymised, so no path
// hashes to its projectHash: the project stays unknown and targets absolute.
func TestCorpus_CodemieImage(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(corpus(t, fileCodemieA)))
	s := summarize(evs, p)
	if len(s.Prompts) != 3 || s.Usage.Messages != 11 {
		t.Errorf("prompts %d, model messages %d", len(s.Prompts), s.Usage.Messages)
	}
	if s.Tools["read_file"] != 7 || s.Tools["list_directory"] != 1 || s.Tools["write_file"] != 1 || s.Tools["replace"] != 1 {
		t.Errorf("tools = %v", s.Tools)
	}
	if len(s.Failures) != 0 || len(s.NoResult) != 0 || s.Project != "" {
		t.Errorf("failures %v no result %v project %q", s.Failures, s.NoResult, s.Project)
	}
}

// observer's live probe (EXPECTED.md E): one prompt; tool calls in order update_topic, read_file
// hello.txt, write_file probe_out.txt, run_shell_command "echo probe-marker-gemini", update_topic;
// every model message is written twice (first without its tool calls), and is counted once.
func TestCorpus_LiveProbe(t *testing.T) {
	evs, p := parseFile(t, New(nil), srcOf(corpus(t, fileLive)))
	s := summarize(evs, p)
	if len(s.Prompts) != 1 {
		t.Errorf("prompts = %q", s.Prompts)
	}
	var got []string
	for _, a := range transcripttest.ActionsOf(evs) {
		got = append(got, a.Tool+"("+a.Target+")")
		if a.Success == nil || !*a.Success || a.Output == "" {
			t.Errorf("%s: success %v output %q", a.Tool, a.Success, a.Output)
		}
	}
	want := []string{"update_topic(File Operations and Verification)", "read_file(hello.txt)",
		"write_file(probe_out.txt)", "run_shell_command(echo probe-marker-gemini)", "update_topic(Task Completed)"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("calls = %v, want %v", got, want)
	}
	if s.Usage.Messages != 3 || s.Events != s.Distinct {
		t.Errorf("usage messages %d; events %d for %d ids: a rewrite emitted unchanged events", s.Usage.Messages, s.Events, s.Distinct)
	}
	// The projectHash is zeroed: the project is the workspace the <session_context> names.
	if s.Project != "/tmp/wpt6/gemini" {
		t.Errorf("project = %q", s.Project)
	}
}
