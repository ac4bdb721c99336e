package codex

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// The codemie-code rollout (Codex 0.77.0). Its six token_count events hold three distinct totals,
// each written twice (one is info:null): 7266/0/115/64, 14812/7296/175/64, 22474/14848/300/128
// (input/cached/output/reasoning). codemie-code's test asserts input 22474, output 428 and
// cacheRead 14848 (codex-metrics.test.ts l.136-149): its input is Codex's input_tokens, which
// includes the 14848 cached tokens (each last_token_usage has cached <= input, and total_tokens
// 22774 = 22474 + 300, so cached is not added on top), and its output adds reasoning to output
// although output_tokens already contains it. Its "6 deltas" (l.190) are 3 token increments plus
// 3 tool calls. Its "4 model calls" count turn_context lines; the fourth request has no
// token_count in the file.
func TestCorpus_CodemieTokens(t *testing.T) {
	path := corpus(t, fileCodemie)
	evs, p := parseFile(t, testAdapter(t, ""), path)
	s := summarize(evs, p)

	if s.SessionID != "019b7f94-51b4-7593-922e-ba12b5b73b52" || s.Root != s.SessionID {
		t.Errorf("session %q root %q", s.SessionID, s.Root)
	}
	u := s.Usage
	if u.Deltas != 3 {
		t.Errorf("deltas = %d, want 3 (one per distinct cumulative total)", u.Deltas)
	}
	if u.Input != 22474-14848 || u.CacheRead != 14848 || u.Output != 300 || u.Reasoning != 128 {
		t.Errorf("tokens = input %d cache %d output %d reasoning %d, want 7626 14848 300 128",
			u.Input, u.CacheRead, u.Output, u.Reasoning)
	}
	if len(u.Models) != 1 || u.Models[0] != "gpt-5-1-codex-2025-11-13" {
		t.Errorf("models = %v", u.Models)
	}
	// gpt-5.1-codex: $1.25 input, $0.125 cached, $10 output per million.
	want := (7626*1.25 + 14848*0.125 + 300*10) / 1e6
	if diff := u.CostUSD - want; diff > 1e-6 || diff < -1e-6 {
		t.Errorf("cost = %v, want %v", u.CostUSD, want)
	}
	var deltas []event.Tokens
	for _, e := range evs {
		if e.TokenUsage != nil {
			deltas = append(deltas, e.TokenUsage.Tokens)
			if e.TokenUsage.Reliability != event.ReliabilityApproximate || e.TokenUsage.Origin != "transcript" {
				t.Errorf("usage %+v", e.TokenUsage)
			}
		}
	}
	wantDeltas := []event.Tokens{
		{Input: 7266, Output: 115, Reasoning: 64},
		{Input: 7546 - 7296, CacheRead: 7296, Output: 60},
		{Input: 7662 - 7552, CacheRead: 7552, Output: 125, Reasoning: 64},
	}
	if len(deltas) != len(wantDeltas) {
		t.Fatalf("deltas = %+v", deltas)
	}
	for i := range deltas {
		if deltas[i] != wantDeltas[i] {
			t.Errorf("delta %d = %+v, want %+v (the file's last_token_usage)", i, deltas[i], wantDeltas[i])
		}
	}

	// Three shell calls, all successful: ls, rg, and sed -n on README.md (a read).
	if s.Tools["shell"] != 3 || len(s.Failures) != 0 || len(s.NoResult) != 0 {
		t.Errorf("tools %v failures %v no result %v", s.Tools, s.Failures, s.NoResult)
	}
	if s.Actions["run_command"] != 2 || s.Actions["read_file"] != 1 || s.Actions["user_prompt"] != 1 {
		t.Errorf("actions = %v", s.Actions)
	}
	for _, e := range evs {
		if e.Session != nil && e.Session.State == event.SessionStarted && e.Session.GitBranch != "codex" {
			t.Errorf("git branch = %q", e.Session.GitBranch)
		}
	}
	if m := p.Meta(); m.Originator != "codex_exec" || m.CLIVersion != "0.77.0" {
		t.Errorf("meta = %+v", m)
	}
}

// The hand-made error fixture: three shell calls, the second fails with exit code 1. codemie-code
// reports input 5300 and output 180 (codex-metrics.test.ts l.457-504); nothing is cached, so our
// net input is the same 5300, in three deltas 5000 + 100 + 200 (output 100 + 20 + 60).
func TestCorpus_ErrorFixture(t *testing.T) {
	path := corpus(t, fileHandmade)
	evs, p := parseFile(t, testAdapter(t, ""), path)
	s := summarize(evs, p)
	if s.Usage.Deltas != 3 || s.Usage.Input != 5300 || s.Usage.Output != 180 || s.Usage.CacheRead != 0 {
		t.Errorf("usage = %+v", s.Usage)
	}
	if s.Tools["shell"] != 3 {
		t.Errorf("tools = %v", s.Tools)
	}
	ids, byID := transcripttest.Merge(evs)
	var ok, failed int
	for _, id := range ids {
		a := byID[id].Action
		if a == nil || a.ToolUseID == "" {
			continue
		}
		switch {
		case a.Success == nil:
			t.Errorf("%s has no result", a.ToolUseID)
		case *a.Success:
			ok++
		default:
			failed++
			if a.ToolUseID != "call_failure_1" || !strings.Contains(a.Error, "No such file or directory") {
				t.Errorf("failure %+v", a)
			}
			// `cat nonexistent.txt` is a plain file read.
			if a.Type != event.ActionReadFile || a.Target != "nonexistent.txt" {
				t.Errorf("failed call = %s %q", a.Type, a.Target)
			}
		}
	}
	if ok != 2 || failed != 1 {
		t.Errorf("succeeded %d failed %d, want 2 and 1", ok, failed)
	}
}

// VibeCodingTracker's golden output keeps the last token_count's totals (input 270530, cached
// 136832, output 12551, reasoning 9536) and counts Bash 5, Edit 2, Read 4, Write 2. Our deltas must
// add up to the same totals, input net of cache. Its tool names map to ours as follows:
//   - Read 4 = our 3 read_file (sed -n on go.mod and the two READMEs) + `cat .python-version ||
//     true && echo '---' && rg ...`, which is a chain of commands and so our run_command;
//   - Bash 5 = our other 5 run_command (ls, the curl/rg script, two rg searches, rm);
//   - Edit 2 + Write 2 = our 4 successful apply_patch runs through the shell, all edit_file
//     (they update existing files; VibeCodingTracker calls the two that only add lines Write);
//   - the empty patch Codex rejected ("patch rejected: empty patch") is our failed edit_file,
//     which VibeCodingTracker drops; update_plan (4) is our todo_update, which it does not count.
func TestCorpus_VibeCodingTracker(t *testing.T) {
	path := corpus(t, fileVCT)
	evs, p := parseFile(t, testAdapter(t, ""), path)
	s := summarize(evs, p)
	if s.SessionID != "01996135-afde-7911-97f0-d863511eca56" {
		t.Errorf("session id %q (from session_meta: the file name has none)", s.SessionID)
	}
	u := s.Usage
	if u.Input != 270530-136832 || u.CacheRead != 136832 || u.Output != 12551 || u.Reasoning != 9536 {
		t.Errorf("tokens = %+v", u)
	}
	if u.Input+u.CacheRead+u.Output != 283081 {
		t.Errorf("total = %d, want 283081", u.Input+u.CacheRead+u.Output)
	}
	if u.Deltas != 19 || len(u.Models) != 1 || u.Models[0] != "aide-gpt-5" {
		t.Errorf("deltas %d models %v", u.Deltas, u.Models)
	}
	if u.CostUSD <= 0 {
		t.Errorf("cost = %v: aide-gpt-5 is priced through the alias to gpt-5", u.CostUSD)
	}
	want := map[string]int{"run_command": 6, "read_file": 3, "edit_file": 5, "todo_update": 4, "user_prompt": 1}
	for k, v := range want {
		if s.Actions[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, s.Actions[k], v, s.Actions)
		}
	}
	if s.Failures["edit_file"] != 1 || len(s.Failures) != 1 {
		t.Errorf("failures = %v, want the one rejected empty patch", s.Failures)
	}
	// Peer view: Bash+Read+Edit+Write = 13 = our run_command + read_file + successful edit_file.
	if got := s.Actions["run_command"] + s.Actions["read_file"] + s.Actions["edit_file"] - s.Failures["edit_file"]; got != 5+4+2+2 {
		t.Errorf("peer-comparable calls = %d, want 13", got)
	}

	// Without the alias the family fallback prices the deployment as gpt-5, approximately.
	evs, _ = parseFile(t, New(""), path)
	for _, e := range evs {
		if e.TokenUsage != nil && (e.TokenUsage.CostUSD <= 0 || e.TokenUsage.Reliability != event.ReliabilityApproximate) {
			t.Fatalf("usage without the alias = %+v", e.TokenUsage)
		}
	}
}

// The two May 2026 rollouts (Codex TUI 0.125.0 with unified exec, apply_patch as a freeform tool
// and web search; Codex Desktop 0.128.0-alpha, filtered to have no token_count) against golden
// per-session figures. Run with -update to rewrite them.
func TestCorpus_Golden(t *testing.T) {
	for _, name := range []string{fileTUI, fileDesktop, fileCodemie, fileHandmade, fileVCT} {
		t.Run(strings.TrimSuffix(name, ".jsonl"), func(t *testing.T) {
			path := corpus(t, name)
			evs, p := parseFile(t, testAdapter(t, ""), path)
			s := summarize(evs, p)
			got, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".jsonl")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("figures differ from %s:\n got %s\nwant %s", golden, got, want)
			}
		})
	}
}

// Specific facts about the May 2026 files, beside the golden figures.
func TestCorpus_May2026(t *testing.T) {
	t.Run("TUI", func(t *testing.T) {
		evs, p := parseFile(t, testAdapter(t, ""), corpus(t, fileTUI))
		s := summarize(evs, p)
		// 99 function calls (43 exec_command, 54 write_stdin, 2 update_plan), 3 apply_patch, 3 web searches.
		if s.Tools["exec_command"] != 43 || s.Tools["write_stdin"] != 54 || s.Tools["apply_patch"] != 3 ||
			s.Tools["update_plan"] != 2 || s.Tools["web_search"] != 3 {
			t.Errorf("tools = %v", s.Tools)
		}
		if s.Actions["edit_file"] != 3 || s.Actions["web_search"] != 3 || s.Actions["task_complete"] != 2 ||
			s.Actions["user_prompt"] != 2 {
			t.Errorf("actions = %v", s.Actions)
		}
		// Every exec_command is settled by its exec_command_end (4 exit non-zero: rg exit 2, two rg
		// exit 1, npm test exit 1); one write_stdin failed ("stdin is closed for this session"); a
		// poll that finds the process still running succeeded.
		if s.NoResult["run_command"] != 0 || s.NoResult["read_file"] != 0 || s.Failures["run_command"] != 5 {
			t.Errorf("failures %v no result %v", s.Failures, s.NoResult)
		}
		if s.Usage.Deltas != 66 || s.Usage.Models[0] != "gpt-5.5" ||
			s.Usage.Input+s.Usage.CacheRead != 6055836 || s.Usage.CacheRead != 4929536 ||
			s.Usage.Output != 9118 || s.Usage.Reasoning != 1759 {
			t.Errorf("usage = %+v", s.Usage)
		}
		// Targets: a patch names its file relative to the project; write_stdin names the command
		// of the process it polls.
		for _, e := range evs {
			a := e.Action
			if a == nil {
				continue
			}
			if a.Tool == "apply_patch" && strings.HasPrefix(a.Target, "/") {
				t.Errorf("patch target %q is not relative to the project", a.Target)
			}
			if a.Tool == "write_stdin" && a.Target == "" {
				t.Errorf("write_stdin %s has no target", a.ToolUseID)
			}
		}
	})
	t.Run("Desktop", func(t *testing.T) {
		evs, p := parseFile(t, testAdapter(t, ""), corpus(t, fileDesktop))
		s := summarize(evs, p)
		if s.Usage.Deltas != 0 {
			t.Errorf("usage = %+v: the file has no token_count", s.Usage)
		}
		if s.Tools["exec_command"] != 35 || s.Tools["mcp__node_repl__js"] != 3 || s.Actions["mcp_call"] != 3 {
			t.Errorf("tools %v actions %v", s.Tools, s.Actions)
		}
		if s.Actions["user_prompt"] != 3 || p.Meta().Originator != "Codex Desktop" {
			t.Errorf("actions %v meta %+v", s.Actions, p.Meta())
		}
		for _, e := range evs {
			if a := e.Action; a != nil && a.Type == event.ActionUserPrompt && strings.Contains(a.Target, "My request for Codex") {
				t.Errorf("prompt keeps the IDE wrapper: %q", a.Target)
			}
		}
	})
}
