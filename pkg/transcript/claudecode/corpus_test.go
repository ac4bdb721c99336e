package claudecode

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// parseSessions discovers the corpus laid out as Claude Code keeps it, parses every file and groups
// the events by session (a subagent file goes to its parent's session).
func parseSessions(tb testing.TB) (map[string][]event.Event, map[string]summary) {
	tb.Helper()
	root := layout(tb)
	srcs, err := New([]string{root}).Discover()
	if err != nil {
		tb.Fatal(err)
	}
	evs := map[string][]event.Event{}
	files := map[string][]string{}
	stats := map[string][]transcript.Stats{}
	for _, src := range srcs {
		e, p := parseFile(tb, src)
		evs[src.SessionID] = append(evs[src.SessionID], e...)
		rel, _ := filepath.Rel(filepath.Join(root, "-corpus"), src.Path)
		files[src.SessionID] = append(files[src.SessionID], filepath.ToSlash(rel))
		stats[src.SessionID] = append(stats[src.SessionID], p.Stats())
	}
	sums := map[string]summary{}
	for sid := range evs {
		sums[sid] = summarize(sid, files[sid], evs[sid], stats[sid])
	}
	return evs, sums
}

// TestCorpus_Golden keeps the per-session figures of every corpus session, computed by the
// accounting rules (one count per message id, its largest output), in testdata/golden.
func TestCorpus_Golden(t *testing.T) {
	_, sums := parseSessions(t)
	dir := filepath.Join("testdata", "golden")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var sids []string
	for sid := range sums {
		sids = append(sids, sid)
	}
	sort.Strings(sids)
	for _, sid := range sids {
		got := append(transcripttest.MustJSON(t, sums[sid]), '\n')
		path := filepath.Join(dir, sid+".json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("session %s: %v (run go test -update)", sid, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("session %s differs from %s:\n%s", sid, path, got)
		}
	}
	if !*update {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if _, ok := sums[strings.TrimSuffix(e.Name(), ".json")]; !ok {
				t.Errorf("golden file %s has no session", e.Name())
			}
		}
	}
}

// rawSums adds up every assistant line's usage, with no dedup, the way the peer tools do, through
// the same bucket reading the parser uses.
func rawSums(tb testing.TB, names ...string) (lines int, b [4]int64) {
	tb.Helper()
	for _, name := range names {
		for _, raw := range transcripttest.ReadLines(tb, corpus(tb, name)) {
			var l line
			if err := json.Unmarshal(raw, &l); err != nil || l.Type != "assistant" {
				continue
			}
			m, _, _, err := decodeMessage(l.Message)
			if err != nil {
				tb.Fatal(err)
			}
			tok, ok := lineUsage(&m)
			if !ok {
				continue
			}
			lines++
			b[0] += tok.Input
			b[1] += tok.Output
			b[2] += tok.CacheCreation
			b[3] += tok.CacheRead
		}
	}
	return lines, b
}

// parseGroup parses files of one project directory, each under its own file-name session.
func parseGroup(tb testing.TB, names ...string) []event.Event {
	tb.Helper()
	var out []event.Event
	for _, name := range names {
		evs, _ := parseFile(tb, srcOf(corpus(tb, name)))
		out = append(out, evs...)
	}
	return out
}

// The peers' totals are sums over every assistant line; ours count each message once with its
// largest output, so input and cache figures drop to those of the distinct messages. The first
// check proves the bucket reading matches the peers' (same sums over all lines); the second pins
// the deduplicated figures (hand-checked: 90 distinct messages in sniffly's 123 lines, 31 in
// VibeCodingTracker's 41, 9 in codemie's 12).
func TestCorpus_PeerTotals(t *testing.T) {
	cases := []struct {
		name      string
		files     []string
		lines     int
		peer      [4]int64 // input, output, cache creation, cache read: summed over all lines
		messages  int
		dedup     [4]int64
		cache1h   int64
		wantModel []string
	}{
		{"sniffly", snifflyFiles, 123, [4]int64{652, 19443, 301119, 5238726},
			90, [4]int64{293, 19313, 206624, 4302385}, 0, []string{"claude-sonnet-4-20250514"}},
		{"VibeCodingTracker", []string{fileVCT}, 41, [4]int64{252, 3921, 124169, 1298818},
			31, [4]int64{158, 3860, 99004, 1093509}, 0, []string{"claude-sonnet-4-20250514"}},
		{"codemie trio", codemieTrio, 12, [4]int64{16923, 1058, 159346, 214627},
			9, [4]int64{16914, 1046, 54148, 214627}, 0,
			[]string{"claude-sonnet-4-5-20250929", "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, sum := rawSums(t, c.files...)
			if lines != c.lines || sum != c.peer {
				t.Errorf("sum over all lines = %d lines %v, want the peers' %d lines %v", lines, sum, c.lines, c.peer)
			}
			u := totals(parseGroup(t, c.files...))
			if u.Messages != c.messages || u.buckets() != c.dedup || u.CacheCreation1h != c.cache1h {
				t.Errorf("deduplicated = %d messages %v (1h %d), want %d %v (1h %d)", u.Messages, u.buckets(),
					u.CacheCreation1h, c.messages, c.dedup, c.cache1h)
			}
			for i := range 4 {
				if u.buckets()[i] > c.peer[i] {
					t.Errorf("bucket %d: deduplicated %d above the peers' %d", i, u.buckets()[i], c.peer[i])
				}
			}
			if strings.Join(u.Models, ",") != strings.Join(c.wantModel, ",") {
				t.Errorf("models = %v, want %v", u.Models, c.wantModel)
			}
		})
	}
}

// Token usage per message, with its price: the codemie main file's first message written as three
// lines (output 4, 4, 4...) and the Bedrock haiku subagent whose model the table prices after
// stripping the gateway prefix.
func TestCorpus_CodemieUsageEvents(t *testing.T) {
	evs := parseGroup(t, codemieTrio...)
	var n int
	for _, e := range evs {
		u := e.TokenUsage
		if u == nil {
			continue
		}
		n++
		if e.ID != UsageID(u.MessageID) || u.Origin != "transcript" || e.Client != Client ||
			e.SessionID != "4c2ddfdc-b619-4525-8d03-1950fb1b0257" || e.Project != "/tmp/private" {
			t.Errorf("usage event %+v %+v", e, u)
		}
		if u.Reliability != event.ReliabilityUnreliable && u.Reliability != event.ReliabilityUnknown {
			t.Errorf("reliability %q", u.Reliability)
		}
		if u.Reliability == event.ReliabilityUnreliable && u.CostUSD <= 0 {
			t.Errorf("priced usage without cost: %+v", u)
		}
	}
	// 12 lines, 9 messages: a line is emitted only when its message's output grew.
	if n < 9 || n > 12 {
		t.Errorf("usage events = %d", n)
	}
}

// Tool calls by raw name as the peers count them (one per tool_use block).
func TestCorpus_ToolCounts(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		want  map[string]int
		total int
	}{
		{"sniffly", snifflyFiles, map[string]int{"Bash": 25, "Write": 11, "Edit": 19, "TodoWrite": 17, "Read": 6,
			"NotebookEdit": 4, "WebSearch": 1, "Glob": 12, "LS": 1}, 96},
		// The peer counts only Bash, Edit, Read, TodoWrite and Write; the file also holds a Grep, a
		// WebSearch and five context7 MCP calls.
		{"VibeCodingTracker", []string{fileVCT}, map[string]int{"Bash": 1, "Edit": 3, "Read": 2, "TodoWrite": 14,
			"Write": 3, "Grep": 1, "WebSearch": 1, "mcp__context7__resolve-library-id": 4,
			"mcp__context7__get-library-docs": 1}, 30},
		{"codemie trio", codemieTrio, map[string]int{"Write": 3, "Read": 1, "Edit": 1, "Bash": 1}, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := parseGroup(t, c.files...)
			ids, byID := merge(evs)
			got := map[string]int{}
			types := map[event.ActionType]int{}
			total := 0
			for _, id := range ids {
				a := byID[id].Action
				if a == nil || a.ToolUseID == "" {
					continue
				}
				got[a.Tool]++
				types[a.Type]++
				total++
				if a.Type != ToolType(a.Tool) {
					t.Errorf("%s merged type %s, want %s", a.Tool, a.Type, ToolType(a.Tool))
				}
			}
			if total != c.total || len(got) != len(c.want) {
				t.Errorf("tools = %v (%d), want %v (%d)", got, total, c.want, c.total)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %d, want %d", k, got[k], v)
				}
			}
			t.Logf("by type: %v", types)
		})
	}
}

// Sniffly's four files by normalized type: its tool counts, its 13 user commands (the /init command
// among them) and its one interruption.
func TestCorpus_SnifflyTypes(t *testing.T) {
	evs := parseGroup(t, snifflyFiles...)
	ids, byID := merge(evs)
	types := map[event.ActionType]int{}
	for _, id := range ids {
		if a := byID[id].Action; a != nil {
			types[a.Type]++
		}
	}
	want := map[event.ActionType]int{
		event.ActionRunCommand: 25, event.ActionWriteFile: 11, event.ActionEditFile: 19 + 4,
		event.ActionTodoUpdate: 17, event.ActionReadFile: 6, event.ActionWebSearch: 1, event.ActionSearchFiles: 12 + 1,
		// 13 user commands and 1 interruption, as sniffly counts them (/init included).
		event.ActionUserPrompt: 13, event.ActionTurnAborted: 1,
	}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, types[k], v, types)
		}
	}
	if len(types) != len(want) {
		t.Errorf("types = %v", types)
	}
}

// Results pair with their calls: same id, the call's type, tool and target copied, success or
// the error text.
func TestCorpus_ResultPairing(t *testing.T) {
	path := corpus(t, fileVCT)
	evs, _ := parseFile(t, srcOf(path))
	byTool := map[string][]event.Event{}
	for _, e := range evs {
		if e.Action != nil && e.Action.ToolUseID != "" {
			byTool[e.Action.ToolUseID] = append(byTool[e.Action.ToolUseID], e)
		}
	}
	// The first TodoWrite (line 4) and its result (line 5), 5.129 s apart.
	pair := byTool["toolu_0193wZx1r27o8y3UAyXWRJJG"]
	if len(pair) != 2 {
		t.Fatalf("TodoWrite events = %+v", pair)
	}
	call, res := pair[0].Action, pair[1].Action
	if pair[0].ID != pair[1].ID || pair[0].ID != event.ID("claude-code", "action", "toolu_0193wZx1r27o8y3UAyXWRJJG") {
		t.Errorf("ids %s %s", pair[0].ID, pair[1].ID)
	}
	if call.Type != event.ActionTodoUpdate || call.Tool != "TodoWrite" || call.Success != nil ||
		call.MessageID != "msg_017UQnB3T6XMaAEm7o9HraMU" || call.RequestID != "req_011CSa9PyzwBA9TGcg7ZEXHH" ||
		call.Model != "claude-sonnet-4-20250514" || call.InputHash == "" {
		t.Errorf("call %+v", call)
	}
	if res.Type != call.Type || res.Tool != call.Tool || res.Success == nil || !*res.Success || res.DurationMs != 54 ||
		!strings.HasPrefix(res.Output, "Todos have been modified successfully") || res.OutputSize < int64(len(res.Output)) {
		t.Errorf("result %+v", res)
	}

	// Failures: the two is_error results of the file, each with its error text.
	var failed []*event.Action
	for _, e := range evs {
		if a := e.Action; a != nil && a.Success != nil && !*a.Success {
			failed = append(failed, a)
		}
	}
	if len(failed) != 2 {
		t.Fatalf("failures = %d", len(failed))
	}
	for _, a := range failed {
		if a.Error == "" || a.Output == "" || a.Tool == "" || a.Type == event.ActionUnknown {
			t.Errorf("failure %+v", a)
		}
	}

	// Targets, relative to the project root (the cwd: no repository on this machine).
	want := map[string]string{
		"Read":      "go.mod",
		"Bash":      "rm /home/wei/repo/claude-code/TODO.md",
		"WebSearch": "golang latest version 2025 current release",
	}
	for _, e := range evs {
		a := e.Action
		if a == nil || a.Success != nil {
			continue
		}
		if w, ok := want[a.Tool]; ok {
			if a.Target != w {
				t.Errorf("%s target %q, want %q", a.Tool, a.Target, w)
			}
			delete(want, a.Tool)
		}
	}
	if len(want) != 0 {
		t.Errorf("tools not seen: %v", want)
	}
}

// A sniffly session: Glob and LS targets, the one tool_use without a result, the interruption.
func TestCorpus_SnifflyDetails(t *testing.T) {
	evs := parseGroup(t, snifflyFiles...)
	ids, byID := merge(evs)
	var noResult, aborted int
	var prompts []string
	for _, id := range ids {
		e := byID[id]
		a := e.Action
		if a == nil {
			continue
		}
		if e.Project != "/Users/chip/dev/ai-music" {
			t.Errorf("project %q", e.Project)
		}
		switch {
		case a.ToolUseID != "" && a.Success == nil:
			noResult++
		case a.Type == event.ActionTurnAborted:
			aborted++
			if a.Error != "Request interrupted by user for tool use" {
				t.Errorf("abort %+v", a)
			}
		case a.Type == event.ActionUserPrompt:
			prompts = append(prompts, a.Target)
		}
		if a.Tool == "LS" && a.Target != "." {
			t.Errorf("LS target %q", a.Target)
		}
		if a.Tool == "NotebookEdit" && a.Target != "ai_music_notebook.ipynb" {
			t.Errorf("NotebookEdit target %q", a.Target)
		}
	}
	if noResult != 1 || aborted != 1 {
		t.Errorf("no result %d, aborted %d", noResult, aborted)
	}
	joined := strings.Join(prompts, "|")
	if !strings.Contains(joined, "/init") || !strings.Contains(joined, "push to github") {
		t.Errorf("prompts %q", prompts)
	}
}

// Compaction, interruptions and meta lines of a Claude Code 2.0 session.
func TestCorpus_CompactionAndInterrupts(t *testing.T) {
	evs, p := parseFile(t, srcOf(corpus(t, file624)))
	types := map[event.ActionType]int{}
	for _, e := range evs {
		if a := e.Action; a != nil && a.ToolUseID == "" {
			types[a.Type]++
			if a.Type == event.ActionContextCompacted && (a.Target != "auto" || a.Tool != "compact_boundary") {
				t.Errorf("compaction %+v", a)
			}
			if a.Type == event.ActionUserPrompt && strings.HasPrefix(a.Target, "This session is being continued") {
				t.Errorf("the compaction summary counted as a prompt")
			}
		}
	}
	if types[event.ActionContextCompacted] != 1 || types[event.ActionTurnAborted] != 3 {
		t.Errorf("actions %v", types)
	}
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 {
		t.Errorf("stats %+v", st)
	}
}
