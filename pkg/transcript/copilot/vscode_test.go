package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The VS Code fixture testdata/vscode/<id>.jsonl was written by hand in the log form VS Code
// 1.109 and later appends (objectMutationLog.ts, chatSessionOperationLog.ts), with response
// parts in the shapes of chatService.ts and of the corpus's real session: a request whose
// terminal command runs and then fails (exit code 1), the title VS Code gives the session, a
// request with an MCP tool, a denied file creation, a sub-agent, a file read and an edit that
// reports an error, a request cancelled while a search ran, and a failed request.
const (
	fixVSCodeID = "7d1e2f3a-0000-4000-8000-0000000000a1"
	fixVSCode   = "testdata/vscode/" + fixVSCodeID + ".jsonl"
)

// fixtureLog copies the fixture into a workspace's storage as VS Code lays it out
// (<User>/workspaceStorage/<hash>/chatSessions/<id>.jsonl beside workspace.json naming the folder
// /nonexistent-copilot-test/web) and returns the copy's path and lines.
func fixtureLog(tb testing.TB) (path string, lines [][]byte) {
	tb.Helper()
	ws := filepath.Join(tb.TempDir(), "User", "workspaceStorage", "5b2c9e0d7a61f3e4")
	path = filepath.Join(ws, "chatSessions", fixVSCodeID+".jsonl")
	data, err := os.ReadFile(fixVSCode)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"folder":"file:///nonexistent-copilot-test/web"}`), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path, transcripttest.ReadLines(tb, path)
}

// readFixtureLog reads the whole fixture log (fixtureLog) in one pass, failing the test on an
// error. It returns the events and the parser.
func readFixtureLog(tb testing.TB) ([]event.Event, *VSCodeParser) {
	tb.Helper()
	path, lines := fixtureLog(tb)
	p, _ := newVSCodeParser(vsSrc(path), nil)
	evs, err := p.Record(0, version(lines, len(lines)))
	if err != nil {
		tb.Fatal(err)
	}
	return evs, p
}

// version is the log as it stood after its first n entries.
func version(lines [][]byte, n int) []byte {
	return append(bytes.Join(lines[:n], []byte("\n")), '\n')
}

func TestVSCodeParser_Log(t *testing.T) {
	path, lines := fixtureLog(t)
	evs, _, err := readDoc(t, vsSrc(path), nil, version(lines, len(lines)))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.TokenUsage != nil {
			t.Fatalf("token usage from VS Code: %+v", e)
		}
		if e.SessionID != fixVSCodeID || e.Project != "/nonexistent-copilot-test/web" {
			t.Fatalf("envelope %+v", e)
		}
	}
	cases := []struct {
		call, tool string
		typ        event.ActionType
		target     string
		success    *bool
		err        string
	}{
		{"tc-terminal-1", "run_in_terminal", event.ActionRunCommand, "npm test", ptr(false), "exit code 1"},
		{"tc-mcp-1", "mcp_github_list_issues", event.ActionMCPCall, "flaky test", ptr(true), ""},
		{"tc-create-1", "copilot_createFile", event.ActionWriteFile, "src/fix.ts", ptr(false), "denied by the user"},
		{"tc-sub-1", "runSubagent", event.ActionSpawnSubagent, "Plan: Outline the fix", ptr(true), ""},
		{"tc-read-1", "copilot_readFile", event.ActionReadFile, "src/app.ts", ptr(true), ""},
		{"tc-edit-1", "copilot_replaceString", event.ActionEditFile, "src/app.ts", ptr(false), "String not found in file"},
		{"tc-find-1", "copilot_findFiles", event.ActionSearchFiles, "**/*.test.ts", ptr(false), "not completed: the request ended"},
	}
	for _, c := range cases {
		a := actionByTool(t, evs, c.call)
		if a.Tool != c.tool || a.Type != c.typ || a.Target != c.target || (a.Success == nil) != (c.success == nil) ||
			(a.Success != nil && *a.Success != *c.success) || a.Error != c.err {
			t.Errorf("%s: %+v", c.call, a)
		}
	}
	term := actionByTool(t, evs, "tc-terminal-1")
	if term.Output != "FAIL src/app.test.ts\n1 failed" || term.DurationMs != 2500 || term.InputHash == "" ||
		term.Model != "copilot/claude-sonnet-4.5" || term.RequestID != "request_00000000-0000-4000-8000-000000000001" {
		t.Errorf("terminal %+v", term)
	}
	if read := actionByTool(t, evs, "tc-read-1"); read.Output != "export function app() {}" || read.Model != "copilot/gpt-5" {
		t.Errorf("read %+v", read)
	}
	if mcp := actionByTool(t, evs, "tc-mcp-1"); !strings.Contains(mcp.Output, "Flaky app test") {
		t.Errorf("mcp %+v", mcp)
	}
	s := summarize(evs, transcript.Stats{}, "")
	if s.Actions["turn_aborted"] != 1 || s.Actions["api_error"] != 1 || len(s.Prompts) != 4 {
		t.Errorf("actions %v prompts %q", s.Actions, s.Prompts)
	}
	var apiErr *event.Action
	for _, e := range evs {
		if e.Action != nil && e.Action.Type == event.ActionAPIError {
			apiErr = e.Action
		}
	}
	if apiErr == nil || !strings.Contains(apiErr.Error, "rate-limited") {
		t.Errorf("api error %+v", apiErr)
	}
	want := []string{
		"started cwd /nonexistent-copilot-test/web",
		"active copilot/claude-sonnet-4.5 cwd /nonexistent-copilot-test/web",
		"active copilot/gpt-5 cwd /nonexistent-copilot-test/web",
		`title "Fixing the failing test" by user false`,
	}
	if !slices.Equal(s.Sessions, want) {
		t.Errorf("sessions\n%q\nwant\n%q", s.Sessions, want)
	}
}

func ptr(b bool) *bool { return &b }

// The log replayed is the object the flat .json form holds: read as a .json, the same events.
func TestVSCodeParser_LogEqualsJSON(t *testing.T) {
	path, lines := fixtureLog(t)
	obj, err := replayLog(version(lines, len(lines)))
	if err != nil {
		t.Fatal(err)
	}
	flat := filepath.Join(t.TempDir(), fixVSCodeID+".json")
	if err := os.WriteFile(flat, obj, 0o644); err != nil {
		t.Fatal(err)
	}
	fromLog, _, err := readDoc(t, vsSrc(path), nil, version(lines, len(lines)))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, _, err := readDoc(t, vsSrc(flat), nil, obj)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fromJSON {
		if a := fromJSON[i].Action; a != nil {
			a.Transcript = path
		}
		if s := fromJSON[i].Session; s != nil {
			s.TranscriptPath = path
		}
	}
	if string(transcripttest.MustJSON(t, fromLog)) != string(transcripttest.MustJSON(t, fromJSON)) {
		t.Error("the log and its object read differently")
	}
	// The log compacted (VS Code rewrites it as one initial entry): nothing new.
	compacted, _ := json.Marshal(map[string]any{"kind": 0, "v": json.RawMessage(obj)})
	_, st, _ := readDoc(t, vsSrc(path), nil, version(lines, len(lines)))
	if again, _, err := readDoc(t, vsSrc(path), st, append(compacted, '\n')); err != nil || len(again) != 0 {
		t.Errorf("the compacted log: %d events, %v", len(again), err)
	}
}

// The document read at every stage of its growth, each time from the state the last read left:
// what is emitted, merged, is what one read of the final document gives; no event is emitted
// twice; reading a version again emits nothing.
func TestVSCodeParser_Rewrites(t *testing.T) {
	path, lines := fixtureLog(t)
	src := vsSrc(path)
	once, _, err := readDoc(t, src, nil, version(lines, len(lines)))
	if err != nil {
		t.Fatal(err)
	}
	var state []byte
	var all []event.Event
	seen := map[string]bool{}
	for n := 1; n <= len(lines); n++ {
		evs, st, err := readDoc(t, src, state, version(lines, n))
		if err != nil {
			t.Fatalf("version %d: %v", n, err)
		}
		state = st
		for i := range evs {
			f := fingerprint(&evs[i])
			if seen[f] {
				t.Errorf("version %d emitted again %s", n, transcripttest.MustJSON(t, evs[i]))
			}
			seen[f] = true
		}
		all = append(all, evs...)
		if again, _, _ := readDoc(t, src, state, version(lines, n)); len(again) != 0 {
			t.Errorf("version %d read again emitted %d events", n, len(again))
		}
	}
	gotIDs, got := transcripttest.Merge(all)
	wantIDs, want := transcripttest.Merge(once)
	slices.Sort(gotIDs)
	slices.Sort(wantIDs)
	if !slices.Equal(gotIDs, wantIDs) {
		t.Fatalf("ids differ:\n%v\n%v", gotIDs, wantIDs)
	}
	for _, id := range wantIDs {
		g, w := got[id], want[id]
		if !bytes.Equal(transcripttest.MustJSON(t, g), transcripttest.MustJSON(t, w)) {
			t.Errorf("%s differs:\n%s\n%s", id, transcripttest.MustJSON(t, g), transcripttest.MustJSON(t, w))
		}
	}
	// The running command was emitted first without an outcome, then with it, under one id.
	var term []*bool
	for _, e := range all {
		if e.Action != nil && e.Action.ToolUseID == "tc-terminal-1" {
			term = append(term, e.Action.Success)
		}
	}
	if len(term) != 2 || term[0] != nil || term[1] == nil || *term[1] {
		t.Errorf("terminal outcomes %v", term)
	}
}

// A document caught mid-write (a .json truncated and rewritten, a log line cut short) is
// malformed, emits nothing and leaves the state as it was; the complete document is read after.
func TestVSCodeParser_HalfWritten(t *testing.T) {
	path, lines := fixtureLog(t)
	src := vsSrc(path)
	_, state, err := readDoc(t, src, nil, version(lines, 6))
	if err != nil {
		t.Fatal(err)
	}
	full := version(lines, len(lines))
	// A log cut at a line's end is an earlier version of it, and reads as one: cut inside lines.
	cuts := []int{0, 1, 17, len(full) - 2}
	for _, k := range []int{3, 7, 10} {
		cuts = append(cuts, len(version(lines, k))+9)
	}
	for _, cut := range cuts {
		evs, st, err := readDoc(t, src, state, full[:cut])
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Fatalf("cut at %d: %d events, err %v", cut, len(evs), err)
		}
		if !bytes.Equal(st, state) {
			t.Fatalf("cut at %d changed the state:\n%s\n%s", cut, st, state)
		}
	}
	if _, _, err := readDoc(t, src, state, full); err != nil {
		t.Fatal(err)
	}
	// The flat form caught half-written.
	doc := vscodeCorpusOr(t)
	for _, cut := range []int{1, len(doc) / 2, len(doc) - 1} {
		evs, _, err := readDoc(t, vsSrc(filepath.Join(t.TempDir(), "s.json")), nil, doc[:cut])
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Fatalf(".json cut at %d: %d events, err %v", cut, len(evs), err)
		}
	}
	// Logs VS Code itself would refuse.
	for _, bad := range []string{
		`{"kind":1,"k":["customTitle"],"v":"x"}`,
		`{"kind":0,"v":{"requests":[]}}` + "\n" + `{"kind":9,"k":[]}`,
		`{"kind":0,"v":{"requests":[]}}` + "\n" + `{"kind":1,"k":["requests",3,"x"],"v":1}`,
		`{"kind":0,"v":[1]}`,
		`{"v":{}}`,
	} {
		if evs, _, err := readDoc(t, src, nil, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%s: %d events, %v", bad, len(evs), err)
		}
	}
}

// vscodeCorpusOr returns the corpus's VS Code session, or a small document when the corpus is
// absent.
func vscodeCorpusOr(tb testing.TB) []byte {
	tb.Helper()
	if data, err := os.ReadFile(filepath.Join(transcripttest.CorpusDir(corpusVSCodeSub), fileVSCode)); err == nil {
		return data
	}
	_, lines := fixtureLog(tb)
	obj, err := replayLog(version(lines, len(lines)))
	if err != nil {
		tb.Fatal(err)
	}
	return obj
}

func TestReplayLog(t *testing.T) {
	log := strings.Join([]string{
		`{"kind":0,"v":{"a":{"b":[1,2,3]},"requests":[{"id":"x","response":[]}]}}`,
		`{"kind":2,"k":["a","b"],"v":[9],"i":1}`,
		`{"kind":2,"k":["requests",0,"response"],"v":["p","q"]}`,
		`{"kind":1,"k":["requests",0,"state"],"v":{"value":1}}`,
		`{"kind":1,"k":["requests",0,"gone"],"v":1}`,
		`{"kind":3,"k":["requests",0,"gone"]}`,
		`{"kind":2,"k":["new"],"v":[true]}`,
		`{"kind":2,"k":["a","b"],"i":0}`,
		`{"kind":1,"k":["requests",1],"v":{"id":"y"}}`,
	}, "\n")
	got, err := replayLog([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"b":[]},"new":[true],"requests":[{"id":"x","response":["p","q"],"state":{"value":1}},{"id":"y"}]}`
	if string(got) != want {
		t.Errorf("replayed\n%s\nwant\n%s", got, want)
	}
}

func TestVSCodeToolType(t *testing.T) {
	cases := []struct {
		name string
		mcp  bool
		want event.ActionType
	}{
		{"copilot_readFile", false, event.ActionReadFile}, {"read_file", false, event.ActionReadFile},
		{"copilot_findFiles", false, event.ActionSearchFiles}, {"file_search", false, event.ActionSearchFiles},
		{"copilot_listDirectory", false, event.ActionSearchFiles}, {"list_dir", false, event.ActionSearchFiles},
		{"copilot_findTextInFiles", false, event.ActionSearchText}, {"grep_search", false, event.ActionSearchText},
		{"copilot_searchCodebase", false, event.ActionSearchText}, {"semantic_search", false, event.ActionSearchText},
		{"copilot_createFile", false, event.ActionWriteFile}, {"create_file", false, event.ActionWriteFile},
		{"copilot_insertEdit", false, event.ActionEditFile}, {"insert_edit_into_file", false, event.ActionEditFile},
		{"copilot_replaceString", false, event.ActionEditFile}, {"multi_replace_string_in_file", false, event.ActionEditFile},
		{"copilot_applyPatch", false, event.ActionEditFile}, {"apply_patch", false, event.ActionEditFile},
		{"run_in_terminal", false, event.ActionRunCommand}, {"copilot_runInTerminal", false, event.ActionRunCommand},
		{"runTests", false, event.ActionRunCommand}, {"copilot_fetchWebPage", false, event.ActionWebFetch},
		{"vscode_fetchWebPage_internal", false, event.ActionWebFetch}, {"manage_todo_list", false, event.ActionTodoUpdate},
		{"runSubagent", false, event.ActionSpawnSubagent}, {"vscode_get_confirmation", false, event.ActionAskUser},
		{"mcp_github_get_issue", false, event.ActionMCPCall}, {"list_issues", true, event.ActionMCPCall},
		{"copilot_getErrors", false, event.ActionUnknown}, {"", false, event.ActionUnknown},
	}
	for _, c := range cases {
		if got := VSCodeToolType(c.name, c.mcp); got != c.want {
			t.Errorf("VSCodeToolType(%q, %v) = %q, want %q", c.name, c.mcp, got, c.want)
		}
	}
}

// Targets from the model's arguments, when the invocation shows none.
func TestVSCodeArgsTarget(t *testing.T) {
	rel := func(s string) string {
		return relPath(s, "/nonexistent-copilot-test/web", "/nonexistent-copilot-test/web")
	}
	cases := []struct {
		typ        event.ActionType
		args, want string
	}{
		{event.ActionReadFile, `{"filePath":"/nonexistent-copilot-test/web/a.ts","startLine":1}`, "a.ts"},
		{event.ActionEditFile, `{"replacements":[{"filePath":"/nonexistent-copilot-test/web/b.ts"}]}`, "b.ts"},
		{event.ActionEditFile, `{"input":"*** Begin Patch\n*** Add File: /nonexistent-copilot-test/web/c.ts\n+x"}`, "c.ts"},
		{event.ActionSearchText, `{"query":"TODO","isRegexp":false}`, "TODO"},
		{event.ActionSearchFiles, `{"path":"/nonexistent-copilot-test/web/src"}`, "src"},
		{event.ActionRunCommand, `{"command":"npm test","isBackground":false}`, "npm test"},
		{event.ActionWebFetch, `{"urls":["https://example.com"],"query":"q"}`, "https://example.com"},
		{event.ActionSpawnSubagent, `{"description":"d","prompt":"p"}`, "d"},
		{event.ActionTodoUpdate, `{"todoList":[]}`, ""},
		{event.ActionUnknown, `{"query":"q"}`, "q"},
	}
	for _, c := range cases {
		if got := vscodeArgsTarget(c.typ, readArgs([]byte(c.args)), rel); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.typ, c.args, got, c.want)
		}
	}
	// VS Code keeps the arguments as a JSON string.
	if got := vscodeArgsTarget(event.ActionReadFile, readArgs([]byte(`"{\"filePath\":\"/x/y.go\"}"`)), rel); got != "/x/y.go" {
		t.Errorf("string arguments: %q", got)
	}
}

func TestVSCodeParser_Scrubs(t *testing.T) {
	key := "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	doc := `{"version":3,"sessionId":"s","creationDate":1772445600000,"requests":[{"requestId":"r1","timestamp":1772445601000,` +
		`"message":{"text":"use OPENAI_API_KEY=` + key + `"},"response":[{"kind":"toolInvocationSerialized","toolId":"run_in_terminal",` +
		`"toolCallId":"t1","isComplete":true,"invocationMessage":"Running","toolSpecificData":{"kind":"terminal","commandLine":` +
		`{"original":"OPENAI_API_KEY=` + key + ` npm test"},"terminalCommandOutput":{"text":"key ` + key + `"},` +
		`"terminalCommandState":{"exitCode":2}}}],"modelState":{"value":3},"result":{"errorDetails":{"message":"bad key ` + key + `"}}}]}`
	evs, _, err := readDoc(t, vsSrc("/x/chatSessions/s.json"), nil, []byte(doc))
	if err != nil || len(evs) != 6 { // and the prompt's and the call's messages
		t.Fatalf("%d events, %v", len(evs), err)
	}
	for _, e := range evs {
		if strings.Contains(string(transcripttest.MustJSON(t, e)), key) {
			t.Errorf("secret left in %+v", e.Action)
		}
	}
}

// A session file in a workspace's storage takes the workspace's folder (workspace.json) as its
// project, whatever the requests name.
func TestVSCodeParser_WorkspaceFolder(t *testing.T) {
	user := t.TempDir()
	ws := filepath.Join(user, "workspaceStorage", "0f1e2d3c4b5a")
	if err := os.MkdirAll(filepath.Join(ws, "chatSessions"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"folder":"file:///nonexistent-copilot-test/my%20app"}`), 0o644)
	path := filepath.Join(ws, "chatSessions", "s1.json")
	doc := []byte(`{"version":3,"sessionId":"s1","creationDate":1772445600000,"requests":[{"requestId":"r1","timestamp":1772445601000,` +
		`"message":{"text":"hi"},"response":[],"result":{"metadata":{"cacheKey":"file:///elsewhere"}}}]}`)
	evs, _, err := readDoc(t, vsSrc(path), nil, doc)
	if err != nil || len(evs) == 0 {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Project != "/nonexistent-copilot-test/my app" {
			t.Errorf("project %q", e.Project)
		}
	}
	// A multi-root workspace: the folder of its .code-workspace file.
	os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"workspace":"file:///nonexistent-copilot-test/ws/team.code-workspace"}`), 0o644)
	if got := workspaceFolder(path); got != "/nonexistent-copilot-test/ws" {
		t.Errorf("workspace folder %q", got)
	}
}

// TestVSCodeFixture_Golden keeps the fixture's figures in testdata/golden, as for the corpus.
func TestVSCodeFixture_Golden(t *testing.T) {
	evs, p := readFixtureLog(t)
	name := "fixture-" + fixVSCodeID + ".jsonl"
	transcripttest.Golden(t, filepath.Join("testdata", "golden", name+".golden.json"),
		summarize(evs, p.Stats(), p.st.SessionID), *update)
}
