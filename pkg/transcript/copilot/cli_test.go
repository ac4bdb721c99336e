package copilot

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The CLI fixtures under testdata/cli/session-state were written by hand, in the shapes of
// @github/copilot 1.0.34's schemas/session-events.schema.json and of the corpus's real log (the
// real CLI needs a GitHub sign-in, so it could not run here): a session in the current layout
// (<id>/events.jsonl) with a failed tool, an MCP tool, a sub-agent, a compaction, an error, an
// abort and two process runs (a shutdown, a resume, a tool the user ran, a second shutdown), and
// a short session in the legacy layout (<id>.jsonl).
const (
	fixCLIDir    = "testdata/cli/session-state"
	fixCLI       = fixCLIDir + "/0c1d2e3f-0000-4000-8000-00000000c001/events.jsonl"
	fixCLILegacy = fixCLIDir + "/0c1d2e3f-0000-4000-8000-00000000c002.jsonl"
	fixCLIID     = "0c1d2e3f-0000-4000-8000-00000000c001"
)

func absPath(tb testing.TB, p string) string {
	tb.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return abs
}

func usagesOf(evs []event.Event) []*event.TokenUsage {
	ids, byID := transcripttest.Merge(evs)
	var out []*event.TokenUsage
	for _, id := range ids {
		if u := byID[id].TokenUsage; u != nil {
			out = append(out, u)
		}
	}
	return out
}

func actionByTool(tb testing.TB, evs []event.Event, callID string) *event.Action {
	tb.Helper()
	for _, a := range transcripttest.ActionsOf(evs) {
		if a.ToolUseID == callID {
			return a
		}
	}
	tb.Fatalf("no action for %s", callID)
	return nil
}

// Each process run's shutdown counts the usage of that run: the two shutdowns of a resumed
// session add up, per model, with the input net of cache reads and writes.
func TestCLIParser_TwoRuns(t *testing.T) {
	path := absPath(t, fixCLI)
	evs, p := parseCLIFile(t, New(nil), cliSrc(path))
	us := usagesOf(evs)
	got := map[string]event.Tokens{}
	for _, u := range us {
		if u.Origin != "transcript" || u.MessageID != "" {
			t.Errorf("usage %+v", u)
		}
		tok := got[u.Model]
		tok.Input += u.Input
		tok.Output += u.Output
		tok.CacheRead += u.CacheRead
		tok.CacheCreation += u.CacheCreation
		tok.Reasoning += u.Reasoning
		got[u.Model] = tok
	}
	want := map[string]event.Tokens{
		"gpt-5":             {Input: 10000, Output: 320, CacheRead: 20000, Reasoning: 64},
		"gpt-5-mini":        {Input: 900, Output: 30},
		"claude-sonnet-4.5": {Input: 1000, Output: 80, CacheRead: 8000, CacheCreation: 3000},
	}
	if len(us) != 3 || len(got) != 3 {
		t.Fatalf("%d usage events: %v (the unused model has none)", len(us), got)
	}
	for m, w := range want {
		if got[m] != w {
			t.Errorf("%s: %+v, want %+v", m, got[m], w)
		}
	}
	// Priced at the shutdown's time with observer's table.
	for _, u := range us {
		usd, known := pricing.Default().CostAt(u.Model, u.Tokens, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC))
		if !known || u.Reliability != event.ReliabilityApproximate || math.Abs(u.CostUSD-usd) > 1e-6 {
			t.Errorf("%s: cost %v %s, table %v %v", u.Model, u.CostUSD, u.Reliability, usd, known)
		}
	}
	if p.st.SessionID != fixCLIID || p.st.Model != "claude-sonnet-4.5" || len(p.st.Pending) != 0 {
		t.Errorf("state %+v", p.st)
	}
}

func TestCLIParser_Actions(t *testing.T) {
	path := absPath(t, fixCLI)
	evs, p := parseCLIFile(t, New(nil), cliSrc(path))
	if st := p.Stats(); st.Malformed != 0 || len(st.Unknown) != 0 || st.Lines != 47 {
		t.Errorf("stats %+v", st)
	}
	cases := []struct {
		call    string
		typ     event.ActionType
		target  string
		success bool
	}{
		{"call_view", event.ActionReadFile, "src/app.go", true},
		{"call_grep", event.ActionSearchText, "TestApp in src", true},
		{"call_glob", event.ActionSearchFiles, "**/*_test.go", false},
		{"call_edit", event.ActionEditFile, "src/app.go", true},
		{"call_bash", event.ActionRunCommand, "go test ./...", true},
		{"call_mcp", event.ActionMCPCall, "", true},
		{"call_task", event.ActionSpawnSubagent, "explore: Find flaky tests", true},
		{"call_sub_view", event.ActionReadFile, "src/flaky_test.go", true},
		{"call_user", event.ActionRunCommand, "git status", true},
		{"call_create", event.ActionWriteFile, "README.md", true},
		{"call_done", event.ActionTaskComplete, "Fixed the test and wrote the README.", true},
	}
	for _, c := range cases {
		a := actionByTool(t, evs, c.call)
		if a.Type != c.typ || a.Target != c.target || a.Success == nil || *a.Success != c.success {
			t.Errorf("%s: %s %q %v, want %s %q %v", c.call, a.Type, a.Target, a.Success, c.typ, c.target, c.success)
		}
		if a.Transcript != path || a.Tool == "" {
			t.Errorf("%s: %+v", c.call, a)
		}
	}
	glob := actionByTool(t, evs, "call_glob")
	if glob.Error != "glob: invalid pattern" || glob.DurationMs != 400 || glob.MessageID != "m1" || glob.RequestID != "REQ1" ||
		glob.Model != "gpt-5" || glob.InputHash == "" {
		t.Errorf("glob %+v", glob)
	}
	if bash := actionByTool(t, evs, "call_bash"); bash.DurationMs != 2000 || !strings.Contains(bash.Output, "exit code 0") {
		t.Errorf("bash %+v", bash)
	}
	if sub := actionByTool(t, evs, "call_sub_view"); sub.AgentID != "call_task" || !sub.Sidechain {
		t.Errorf("sub-agent's call %+v", sub)
	}
	// The sub-agent's model is named only by the outcome (the writer keeps the first model given).
	var subModels []string
	for _, e := range evs {
		if e.Action != nil && e.Action.ToolUseID == "call_sub_view" {
			subModels = append(subModels, e.Action.Model)
		}
	}
	if !slices.Equal(subModels, []string{"", "gpt-5-mini"}) {
		t.Errorf("sub-agent's call models %q", subModels)
	}
	if user := actionByTool(t, evs, "call_user"); user.DurationMs != 300 || user.Model != "claude-sonnet-4.5" {
		t.Errorf("the user's tool %+v", user)
	}
	s := summarize(evs, p.Stats(), p.st.SessionID)
	if !slices.Equal(s.Prompts, []string{"fix the failing test in src/app.go", "now update the README"}) {
		t.Errorf("prompts %q", s.Prompts)
	}
	if s.Actions["context_compacted"] != 1 || s.Actions["api_error"] != 1 || s.Actions["turn_aborted"] != 1 {
		t.Errorf("actions %v", s.Actions)
	}
	want := []string{
		"started gpt-5 cwd /nonexistent-copilot-test/proj",
		"active epoch 1",
		"active gpt-5 cwd /nonexistent-copilot-test/proj",
		"active claude-sonnet-4.5 cwd /nonexistent-copilot-test/proj",
	}
	if !slices.Equal(s.Sessions, want) {
		t.Errorf("sessions\n%q\nwant\n%q", s.Sessions, want)
	}
	for _, e := range evs {
		if e.Project != "/nonexistent-copilot-test/proj" || e.SessionID != fixCLIID {
			t.Fatalf("envelope %+v", e)
		}
	}
}

// A parser resumed from the state after each line emits what one pass emits: nothing twice,
// nothing lost (calls waiting for their outcome are in the state).
func TestCLIParser_Resume(t *testing.T) {
	a := New(nil)
	for _, path := range []string{absPath(t, fixCLI), absPath(t, fixCLILegacy)} {
		once, _ := parseCLIFile(t, a, cliSrc(path))
		resumed, _ := transcripttest.Resumed(t, a, cliSrc(path))
		if string(transcripttest.MustJSON(t, resumed)) != string(transcripttest.MustJSON(t, once)) {
			t.Errorf("%s: resumed events differ from one pass", filepath.Base(path))
		}
	}
}

// The CLI migrates a legacy <id>.jsonl to <id>/events.jsonl by copying it; a log read again from
// its start (after a rewind rewrote it shorter) is read whole again. Both yield the same ids, so
// the writer stores nothing twice.
func TestCLIParser_SameIDsAfterMigration(t *testing.T) {
	legacy := absPath(t, fixCLILegacy)
	data, err := os.ReadFile(legacy)
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "session-state", "0c1d2e3f-0000-4000-8000-00000000c002", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moved, data, 0o644); err != nil {
		t.Fatal(err)
	}
	a, _ := parseCLIFile(t, New(nil), cliSrc(legacy))
	b, _ := parseCLIFile(t, New(nil), cliSrc(moved))
	ia, _ := transcripttest.Merge(a)
	ib, _ := transcripttest.Merge(b)
	if len(ia) == 0 || !slices.Equal(ia, ib) {
		t.Errorf("ids differ:\n%v\n%v", ia, ib)
	}
}

// Lines that cannot be read are malformed and skipped; the parser goes on, and unknown types
// are counted.
func TestCLIParser_Malformed(t *testing.T) {
	full := `{"type":"user.message","data":{"content":"hello there"},"id":"u1","timestamp":"2026-03-02T10:00:01.000Z"}`
	cases := []string{
		full[:len(full)/2], // a line cut short (the CLI was killed mid-append)
		"\xff\xfe",
		"not json",
		`[1,2]`,
		`{"type":"user.message","data":"text","id":"u2","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"assistant.message","data":{"toolRequests":"x"},"id":"a","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"tool.execution_complete","data":{"success":true},"id":"c","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"session.start","data":{"sessionId":"s","context":"x"},"id":"s","timestamp":"2026-03-02T10:00:01.000Z"}`,
	}
	p, _ := New(nil).newParser(cliSrc("/x/session-state/s.jsonl"), nil)
	for _, c := range cases {
		evs, err := p.Record(0, []byte(c))
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v", c, len(evs), err)
		}
	}
	evs, err := p.Record(0, []byte(full))
	if err != nil || len(evs) != 2 || evs[0].Action.Type != event.ActionUserPrompt || evs[1].Message == nil {
		t.Fatalf("the next line: %v %v", evs, err)
	}
	for _, l := range []string{`{"type":"session.brand_new","data":{}}`, `{"data":{}}`, `{"type":"session.info","data":{"infoType":"model","message":"m"},"timestamp":"2026-03-02T10:00:02.000Z"}`} {
		if evs, err := p.Record(0, []byte(l)); err != nil || len(evs) != 0 {
			t.Errorf("%s: %v %v", l, evs, err)
		}
	}
	st := p.Stats()
	if st.Malformed != int64(len(cases)) || st.Lines != int64(len(cases))+4 || st.Unknown["session.brand_new"] != 1 ||
		st.Unknown["(no type)"] != 1 || len(st.Unknown) != 2 || st.Events != 2 {
		t.Errorf("stats %+v", st)
	}
	if p.st.SessionID != "s" {
		t.Errorf("session id %q (the file's name when the log has no session.start)", p.st.SessionID)
	}
	// A record that yields events before any time is known has no time: malformed.
	q, _ := New(nil).newParser(cliSrc("/x/session-state/s.jsonl"), nil)
	if _, err := q.Record(0, []byte(`{"type":"user.message","data":{"content":"x"},"id":"u3"}`)); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("no timestamp: %v", err)
	}
}

// A shutdown for a model the table does not price is counted with cost 0 and Reliability unknown;
// an adapter's own table prices what the default does not.
func TestCLIParser_Cost(t *testing.T) {
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"s1","startTime":"2026-03-02T10:00:00.000Z","context":{"cwd":"/w"}},"id":"a","timestamp":"2026-03-02T10:00:00.000Z"}`,
		`{"type":"session.shutdown","data":{"modelMetrics":{"house-model-7":{"requests":{"count":1,"cost":1},"usage":{"inputTokens":1000,"outputTokens":10,"cacheReadTokens":1200,"cacheWriteTokens":0}}}},"id":"b","timestamp":"2026-03-02T10:05:00.000Z"}`,
	}
	evs, _ := parseCLILines(t, "/w/session-state/s1.jsonl", lines...)
	us := usagesOf(evs)
	if len(us) != 1 || us[0].CostUSD != 0 || us[0].Reliability != event.ReliabilityUnknown || us[0].Input != 0 || us[0].CacheRead != 1200 {
		t.Fatalf("usage %+v", us)
	}
	a := New(nil)
	a.Prices = pricing.New(map[string]pricing.Price{"house-model-7": {Input: 1, Output: 2, CacheRead: 0.5}})
	p, _ := a.newParser(cliSrc("/w/session-state/s1.jsonl"), nil)
	evs = runCLI(t, p, [][]byte{[]byte(lines[0]), []byte(lines[1])})
	if us := usagesOf(evs); len(us) != 1 || us[0].Reliability != event.ReliabilityApproximate || us[0].CostUSD <= 0 {
		t.Fatalf("usage %+v", us)
	}
}

func TestCLIParser_Scrubs(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	evs, _ := parseCLILines(t, "/x/session-state/s.jsonl",
		`{"type":"session.start","data":{"sessionId":"s","context":{"cwd":"/w"}},"id":"a","timestamp":"2026-03-02T10:00:00.000Z"}`,
		`{"type":"user.message","data":{"content":"use OPENAI_API_KEY=`+key+`"},"id":"b","timestamp":"2026-03-02T10:00:01.000Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m","toolRequests":[{"toolCallId":"c","name":"bash","arguments":{"command":"OPENAI_API_KEY=`+key+` run"}}]},"id":"c","timestamp":"2026-03-02T10:00:02.000Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"c","success":false,"result":{"content":"key `+key+`"},"error":{"message":"bad key `+key+`"}},"id":"d","timestamp":"2026-03-02T10:00:03.000Z"}`,
		`{"type":"session.error","data":{"errorType":"authentication","message":"key `+key+` refused"},"id":"e","timestamp":"2026-03-02T10:00:04.000Z"}`)
	if len(evs) != 7 { // and the prompt's and the call's messages
		t.Fatalf("%d events", len(evs))
	}
	for _, e := range evs {
		if strings.Contains(string(transcripttest.MustJSON(t, e)), key) {
			t.Errorf("secret left in %+v", e.Action)
		}
	}
}

func TestCLIToolType(t *testing.T) {
	cases := []struct {
		name string
		mcp  bool
		want event.ActionType
	}{
		{"view", false, event.ActionReadFile}, {"View", false, event.ActionReadFile}, {"create", false, event.ActionWriteFile},
		{"edit", false, event.ActionEditFile}, {"str_replace", false, event.ActionEditFile},
		{"apply_patch", false, event.ActionEditFile}, {"bash", false, event.ActionRunCommand},
		{"powershell", false, event.ActionRunCommand}, {"grep", false, event.ActionSearchText},
		{"glob", false, event.ActionSearchFiles}, {"web_fetch", false, event.ActionWebFetch},
		{"web_search", true, event.ActionWebSearch}, {"task", false, event.ActionSpawnSubagent},
		{"update_todo", false, event.ActionTodoUpdate}, {"ask_user", false, event.ActionAskUser},
		{"task_complete", false, event.ActionTaskComplete}, {"github-mcp-server-get_issue", true, event.ActionMCPCall},
		{"report_intent", false, event.ActionUnknown}, {"read_bash", false, event.ActionUnknown}, {"", false, event.ActionUnknown},
	}
	for _, c := range cases {
		if got := CLIToolType(c.name, c.mcp); got != c.want {
			t.Errorf("CLIToolType(%q, %v) = %q, want %q", c.name, c.mcp, got, c.want)
		}
	}
	if cliType("str_replace_editor", false, args{"command": []byte(`"view"`)}) != event.ActionReadFile ||
		cliType("str_replace_editor", false, args{"command": []byte(`"create"`)}) != event.ActionWriteFile ||
		cliType("str_replace_editor", false, args{"command": []byte(`"str_replace"`)}) != event.ActionEditFile {
		t.Error("str_replace_editor by its command")
	}
}

func TestCLITargets(t *testing.T) {
	rel := func(s string) string {
		return relPath(s, "/nonexistent-copilot-test/proj", "/nonexistent-copilot-test/proj")
	}
	cases := []struct{ tool, args, want string }{
		{"view", `{"path":"/nonexistent-copilot-test/proj/src/a.go","view_range":[1,5]}`, "src/a.go"},
		{"create", `{"path":"/etc/hosts","file_text":"x"}`, "/etc/hosts"},
		{"edit", `{"path":"b.go","old_str":"a","new_str":"b"}`, "b.go"},
		{"apply_patch", `{"input":"*** Begin Patch\n*** Update File: /nonexistent-copilot-test/proj/c.go\n@@\n-a\n+b\n*** End Patch"}`, "c.go"},
		{"bash", `{"command":"go test ./...","description":"tests"}`, "go test ./..."},
		{"grep", `{"pattern":"TODO","path":"/nonexistent-copilot-test/proj/src","glob":"*.go"}`, "TODO in src"},
		{"glob", `{"pattern":"**/*.md"}`, "**/*.md"},
		{"web_fetch", `{"url":"https://example.com","max_length":5000}`, "https://example.com"},
		{"web_search", `{"query":"rust docs"}`, "rust docs"},
		{"task", `{"agent_type":"explore","description":"map the code","prompt":"p"}`, "explore: map the code"},
		{"ask_user", `{"question":"Which one?","choices":["a","b"]}`, "Which one?"},
		{"update_todo", `{"todos":"- [x] a"}`, ""},
		{"custom", `{"file_path":"/nonexistent-copilot-test/proj/x"}`, "x"},
		{"custom", `{"query":"q"}`, "q"},
		{"bash", `not json`, ""},
	}
	for _, c := range cases {
		if got := cliTarget(c.tool, readArgs([]byte(c.args)), rel); got != c.want {
			t.Errorf("%s %s: target %q, want %q", c.tool, c.args, got, c.want)
		}
	}
}

// TestFixtures_Golden keeps the figures of the fixtures in testdata/golden, as for the corpus.
func TestFixtures_Golden(t *testing.T) {
	for _, path := range []string{fixCLI, fixCLILegacy} {
		name := "fixture-" + SessionIDFromPath(path) + ".jsonl"
		t.Run(name, func(t *testing.T) {
			evs, p := parseCLIFile(t, New(nil), cliSrc(absPath(t, path)))
			transcripttest.Golden(t, filepath.Join("testdata", "golden", name+".golden.json"),
				summarize(evs, p.Stats(), p.st.SessionID), *update)
		})
	}
}

// Fields of later versions (1.0.60): the message's model names its calls' model, and a message
// autopilot or a skill injected is no prompt.
func TestCLIParser_LaterFields(t *testing.T) {
	evs, _ := parseCLILines(t, "/w/session-state/s.jsonl",
		`{"type":"session.start","data":{"sessionId":"s","selectedModel":"gpt-5","context":{"cwd":"/w"}},"id":"a","timestamp":"2026-05-02T10:00:00.000Z"}`,
		`{"type":"user.message","data":{"content":"Continue working on the task.","isAutopilotContinuation":true},"id":"b","timestamp":"2026-05-02T10:00:01.000Z"}`,
		`{"type":"user.message","data":{"content":"<skill>pdf</skill>","source":"skill-pdf"},"id":"c","timestamp":"2026-05-02T10:00:01.500Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m","model":"claude-opus-4.6","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"/w/a"}}]},"id":"d","timestamp":"2026-05-02T10:00:02.000Z"}`,
		`{"type":"assistant.message","data":{"messageId":"n","model":"gpt-5-mini","parentToolCallId":"t0","toolRequests":[{"toolCallId":"t2","name":"view","arguments":{"path":"/w/b"}}]},"id":"e","timestamp":"2026-05-02T10:00:03.000Z"}`)
	s := summarize(evs, transcript.Stats{}, "s")
	if len(s.Prompts) != 0 {
		t.Errorf("prompts %q", s.Prompts)
	}
	if a := actionByTool(t, evs, "t1"); a.Model != "claude-opus-4.6" {
		t.Errorf("t1 model %q", a.Model)
	}
	if a := actionByTool(t, evs, "t2"); a.Model != "gpt-5-mini" || a.AgentID != "t0" {
		t.Errorf("t2 %+v", a)
	}
}

// Copilot CLI 1.0.102 writes one session.usage_record per API call, with the call's response id:
// each is a usage of its own (input net of the cache reads inside it), the proxy's turn of the same
// id replaces it, and the run's shutdown, whose sums repeat them, adds nothing. A run with no
// usage record (an older CLI, resumed) still counts its shutdown.
func TestCLIParser_UsageRecords(t *testing.T) {
	rec := func(id, call string, in, cached, out int) string {
		return `{"type":"session.usage_record","data":{"usage":{"model":"gpt-5.2","inputTokens":` + strconv.Itoa(in) +
			`,"outputTokens":` + strconv.Itoa(out) + `,"cacheReadTokens":` + strconv.Itoa(cached) +
			`,"cacheWriteTokens":0,"reasoningTokens":10,"cost":0,"isByok":true,"apiCallId":"` + call +
			`","apiEndpoint":"/chat/completions"}},"id":"` + id + `","timestamp":"2026-12-06T20:43:48.667Z"}`
	}
	shutdown := func(id string, in, cached, out int) string {
		return `{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5.2":{"requests":{"count":2,"cost":0},"usage":{"inputTokens":` +
			strconv.Itoa(in) + `,"outputTokens":` + strconv.Itoa(out) + `,"cacheReadTokens":` + strconv.Itoa(cached) +
			`,"cacheWriteTokens":0,"reasoningTokens":20}}}},"id":"` + id + `","timestamp":"2026-12-06T20:43:49.000Z"}`
	}
	start := `{"type":"session.start","data":{"sessionId":"s-102","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102",` +
		`"startTime":"2026-12-06T20:43:47.754Z","selectedModel":"gpt-5.2","context":{"cwd":"/home/ann/shop"}},"id":"r0","timestamp":"2026-12-06T20:43:47.754Z"}`
	resume := `{"type":"session.resume","data":{"selectedModel":"gpt-5.2","context":{"cwd":"/home/ann/shop"}},"id":"r9","timestamp":"2026-12-07T09:00:00.000Z"}`
	// The first run: two recorded calls, and a third call (a sub-agent's, say) only in the
	// shutdown's sums. A second run is killed after one record (no shutdown); the third, resumed,
	// writes no record and shuts down.
	evs, _ := parseCLILines(t, "/home/ann/.copilot/session-state/s-102/events.jsonl", start,
		rec("r1", "chatcmpl-1", 1120, 1000, 45), rec("r2", "chatcmpl-3", 1300, 1100, 30), shutdown("r3", 2920, 2100, 95),
		resume, rec("r5", "chatcmpl-9", 700, 600, 9),
		resume, shutdown("r10", 500, 0, 20))
	us := usagesOf(evs)
	if len(us) != 5 {
		t.Fatalf("%d usage events %+v, want the three calls, the first run's unrecorded rest and the last run's shutdown", len(us), us)
	}
	want := []event.TokenUsage{
		{Tokens: event.Tokens{Input: 120, Output: 45, CacheRead: 1000, Reasoning: 10}, MessageID: "chatcmpl-1"},
		{Tokens: event.Tokens{Input: 200, Output: 30, CacheRead: 1100, Reasoning: 10}, MessageID: "chatcmpl-3"},
		{Tokens: event.Tokens{Input: 500, Output: 20}},
		{Tokens: event.Tokens{Input: 100, Output: 9, CacheRead: 600, Reasoning: 9}, MessageID: "chatcmpl-9"},
		{Tokens: event.Tokens{Input: 500, Output: 20, Reasoning: 20}},
	}
	for i, w := range want {
		if us[i].Tokens != w.Tokens || us[i].MessageID != w.MessageID || us[i].Model != "gpt-5.2" || us[i].CostUSD <= 0 {
			t.Errorf("usage %d: %+v, want %+v at gpt-5.2's price", i, us[i], w.Tokens)
		}
	}
}
