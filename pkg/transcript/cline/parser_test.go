package cline

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// cliSession writes a CLI session (<root>/<id>/<id>.messages.json and its metadata) and returns
// its source.
func cliSession(tb testing.TB, root, id, messages, meta string) transcript.Source {
	tb.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if meta != "" {
		if err := os.WriteFile(filepath.Join(dir, id+".json"), []byte(meta), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	p := filepath.Join(dir, id+".messages.json")
	if err := os.WriteFile(p, []byte(messages), 0o644); err != nil {
		tb.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: p, SessionID: id, Document: true}
}

const (
	msgUser = `{"id":"u1","role":"user","ts":1796146907102,"content":[{"type":"text","text":"<user_input mode=\"act\">fix the build</user_input>"}]}`
	msgCall = `{"id":"a1","role":"assistant","ts":1796146908192,"modelInfo":{"id":"claude-sonnet-4-5","provider":"anthropic"},` +
		`"metrics":{"inputTokens":5000,"outputTokens":40,"cacheReadTokens":3000,"cacheWriteTokens":1500,"cost":0.5},` +
		`"content":[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"c1","name":"run_commands","input":{"commands":["go build ./...","go vet ./..."]}}]}`
	msgResult = `{"id":"r1","role":"user","ts":1796146909000,"content":[{"type":"tool_result","tool_use_id":"c1","name":"run_commands",` +
		`"content":[{"query":"go build ./...","result":"main.go:3: undefined: x","success":false,"error":"exit status 1"}]}]}`
	msgFinal = `{"id":"a2","role":"assistant","ts":1796146910000,"modelInfo":{"id":"claude-sonnet-4-5"},` +
		`"metrics":{"inputTokens":100,"outputTokens":20,"cacheReadTokens":4500,"cacheWriteTokens":0},"content":[{"type":"text","text":"done"}]}`
	metaJSON = `{"session_id":"s1","started_at":"2026-12-01T17:41:46.281Z","cwd":"/home/ann/proj","model":"claude-sonnet-4-5"}`
)

func doc(msgs ...string) string {
	return `{"version":1,"sessionId":"s1","messages":[` + strings.Join(msgs, ",") + `]}`
}

func read(tb testing.TB, p transcript.Parser, src transcript.Source) []event.Event {
	tb.Helper()
	data, err := os.ReadFile(src.Path)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		tb.Fatal(err)
	}
	return evs
}

func TestParser_CLI(t *testing.T) {
	src := cliSession(t, t.TempDir(), "s1", doc(msgUser, msgCall, msgResult, msgFinal), metaJSON)
	a := New(nil)
	evs, _ := parseSource(t, a, src, nil)
	var prompts, usages []event.Event
	var call *event.Action
	for _, e := range evs {
		if e.Client != Client || e.SessionID != "s1" || e.Project != "/home/ann/proj" {
			t.Errorf("envelope %+v", e)
		}
		switch {
		case e.Action != nil && e.Action.Type == event.ActionUserPrompt:
			prompts = append(prompts, e)
		case e.Action != nil:
			call = e.Action
		case e.TokenUsage != nil:
			usages = append(usages, e)
		}
	}
	if len(prompts) != 1 || prompts[0].Action.Target != "fix the build" {
		t.Errorf("prompts %+v", prompts)
	}
	if call == nil || call.Type != event.ActionRunCommand || call.Target != "go build ./...; go vet ./..." || call.Success == nil ||
		*call.Success || call.Error != "exit status 1" || !strings.Contains(call.Output, "undefined") {
		t.Errorf("call %+v", call)
	}
	if len(usages) != 2 {
		t.Fatalf("usages %d", len(usages))
	}
	// Input includes cache reads and writes: net 5000 − 3000 − 1500.
	want := event.Tokens{Input: 500, Output: 40, CacheRead: 3000, CacheCreation: 1500}
	if u := usages[0].TokenUsage; u.Tokens != want || u.Model != "claude-sonnet-4-5" || u.MessageID != "a1" ||
		u.Reliability != event.ReliabilityApproximate || u.CostUSD == 0.5 || u.CostUSD == 0 {
		t.Errorf("usage %+v, want %+v priced by observer", u, want)
	}
	// A provider that reports input already net (below its cache reads) is taken as it is.
	if u := usages[1].TokenUsage; u.Input != 100 || u.CacheRead != 4500 {
		t.Errorf("net usage %+v", u.Tokens)
	}
	if usages[0].ID != event.ID(Client, "usage", "s1", "a1") {
		t.Errorf("usage id %s", usages[0].ID)
	}
}

// A re-read of the rewritten document emits only what is new or changed; the same ids come back
// from a parser without state, and a document caught half-written emits nothing and keeps the
// state.
func TestParser_Rereads(t *testing.T) {
	root := t.TempDir()
	src := cliSession(t, root, "s1", doc(msgUser, msgCall), metaJSON)
	a := New(nil)
	p, _ := a.NewParser(src, nil)
	first := read(t, p, src)
	if len(first) == 0 {
		t.Fatal("no events")
	}
	state := p.State()
	cliSession(t, root, "s1", doc(msgUser, msgCall, msgResult, msgFinal), metaJSON)
	p2, err := a.NewParser(src, state)
	if err != nil {
		t.Fatal(err)
	}
	second := read(t, p2, src)
	var ids []string
	for _, e := range second {
		ids = append(ids, e.ID)
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			t.Errorf("the prompt was emitted again")
		}
	}
	// The call (now with its result), the second usage, the reply "done" and nothing else (the
	// call's message is unchanged).
	if len(second) != 3 {
		t.Errorf("re-read emitted %d events: %+v", len(second), second)
	}
	if evs := read(t, p2, src); len(evs) != 0 {
		t.Errorf("an unchanged document emitted %d events", len(evs))
	}
	before := p2.State()
	if _, err := p2.Record(0, []byte(`{"version":1,"messages":[{"id":"x"`)); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("half-written document: %v", err)
	}
	if string(p2.State()) != string(before) {
		t.Errorf("a malformed document changed the state")
	}
	// Without state, the same ids.
	all, _ := parseSource(t, a, src, nil)
	var allIDs []string
	for _, e := range all {
		allIDs = append(allIDs, e.ID)
	}
	for _, id := range ids {
		if !slices.Contains(allIDs, id) {
			t.Errorf("id %s not produced by a fresh read", id)
		}
	}
}

func TestParser_Malformed(t *testing.T) {
	for _, in := range []string{"", "\xff", "[]", "null", `{"messages":7}`, `{"messages":[`} {
		p, _ := New(nil).NewParser(transcript.Source{Path: "/x/s.messages.json", Document: true}, nil)
		if _, err := p.Record(0, []byte(in)); !errors.Is(err, transcript.ErrMalformed) {
			t.Errorf("%q: %v", in, err)
		}
		v, _ := NewVSCode(ClientRoo, nil).NewParser(transcript.Source{Path: "/t/1/ui_messages.json", Document: true}, nil)
		if _, err := v.Record(0, []byte(in)); in != "[]" && !errors.Is(err, transcript.ErrMalformed) {
			t.Errorf("vscode %q: %v", in, err)
		}
	}
}

// The extensions' tokensIn: net under the Anthropic protocol, cache reads included under OpenAI.
func TestParser_VSCodeTokens(t *testing.T) {
	ui := `[{"ts":1767261600000,"type":"say","say":"task","text":"go"},
{"ts":1767261600010,"type":"say","say":"api_req_started","text":"{\"tokensIn\":1000,\"tokensOut\":10,\"cacheReads\":800,\"cacheWrites\":0,\"apiProtocol\":\"openai\",\"cost\":0.01}"},
{"ts":1767261600020,"type":"say","say":"api_req_started","text":"{\"tokensIn\":200,\"tokensOut\":10,\"cacheReads\":800,\"cacheWrites\":100,\"apiProtocol\":\"anthropic\"}"},
{"ts":1767261600030,"type":"say","say":"api_req_started","text":"{\"tokensIn\":900,\"tokensOut\":10,\"cacheReads\":800}","modelInfo":{"providerId":"openrouter","modelId":"x/unpriced-model"}},
{"ts":1767261600040,"type":"say","say":"api_req_started","text":"{\"request\":\"streaming\"}"}]`
	dir := filepath.Join(t.TempDir(), "kilocode.kilo-code", "tasks", "t1")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "ui_messages.json"), []byte(ui), 0o644)
	evs, _ := parseAll(t, NewVSCode(ClientKilo, []string{filepath.Dir(filepath.Dir(filepath.Dir(dir)))}))
	var got []int64
	for _, e := range evs {
		if u := e.TokenUsage; u != nil {
			got = append(got, u.Input)
			if e.Client != ClientKilo || e.SessionID != "t1" {
				t.Errorf("envelope %+v", e)
			}
			switch {
			case len(got) == 1 && (u.CostUSD != 0.01 || u.Reliability != event.ReliabilityApproximate):
				t.Errorf("unnamed model: the client's cost expected, got %+v", u)
			case len(got) == 2 && (u.CostUSD != 0 || u.Reliability != event.ReliabilityUnknown):
				t.Errorf("no model, no client cost: unknown expected, got %+v", u)
			}
		}
	}
	if !slices.Equal(got, []int64{200, 200, 100}) {
		t.Errorf("inputs %v, want [200 200 100]", got)
	}
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	cliSession(t, root, "1_a", doc(msgUser), "")
	os.WriteFile(filepath.Join(root, "2_b.messages.json"), []byte(doc(msgUser)), 0o644) // the older flat layout
	os.MkdirAll(filepath.Join(root, "3_c"), 0o755)                                      // no messages yet
	srcs, err := New([]string{root, filepath.Join(root, "missing")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range srcs {
		got = append(got, s.SessionID)
		if !s.Document || s.Client != Client {
			t.Errorf("source %+v", s)
		}
	}
	if !slices.Equal(got, []string{"1_a", "2_b"}) {
		t.Errorf("sessions %v", got)
	}
	srcs, err = NewVSCode(ClientVSCode, []string{filepath.Join("testdata", "vscode")}).Discover()
	if err != nil || len(srcs) != 1 || srcs[0].SessionID != "1767261600000" || srcs[0].Client != ClientVSCode {
		t.Errorf("vscode sources %+v, %v", srcs, err)
	}
	if srcs, _ := NewVSCode(ClientKilo, []string{filepath.Join("testdata", "vscode")}).Discover(); len(srcs) != 0 {
		t.Errorf("kilo-code found %+v", srcs)
	}
}

func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"CLINE_SESSION_DATA_DIR", "CLINE_DATA_DIR", "CLINE_DIR", EnvGlobalStorage, "XDG_CONFIG_HOME"} {
		t.Setenv(k, "")
	}
	if got := DefaultRoots(); !slices.Equal(got, []string{filepath.Join(home, ".cline", "data", "sessions")}) {
		t.Errorf("roots %v", got)
	}
	t.Setenv("CLINE_DIR", "/c")
	if got := DefaultRoots(); got[0] != "/c/data/sessions" {
		t.Errorf("CLINE_DIR roots %v", got)
	}
	t.Setenv("CLINE_DATA_DIR", "/d")
	if got := DefaultRoots(); got[0] != "/d/sessions" {
		t.Errorf("CLINE_DATA_DIR roots %v", got)
	}
	t.Setenv("CLINE_SESSION_DATA_DIR", "/s")
	if got := DefaultRoots(); got[0] != "/s" {
		t.Errorf("CLINE_SESSION_DATA_DIR roots %v", got)
	}
	if gs := DefaultGlobalStorage(); len(gs) < 5 {
		t.Errorf("global storage %v", gs)
	}
	t.Setenv(EnvGlobalStorage, "/a"+string(os.PathListSeparator)+"/b")
	if gs := DefaultGlobalStorage(); !slices.Equal(gs, []string{"/a", "/b"}) {
		t.Errorf("override %v", gs)
	}
	if w := NewVSCode(ClientRoo, []string{"/a"}).WatchDirs(); !slices.Equal(w, []string{"/a/rooveterinaryinc.roo-cline/tasks"}) {
		t.Errorf("watch dirs %v", w)
	}
}

func TestToolType(t *testing.T) {
	cases := map[string]event.ActionType{
		"read_file": event.ActionReadFile, "write_to_file": event.ActionWriteFile, "replace_in_file": event.ActionEditFile,
		"execute_command": event.ActionRunCommand, "search_files": event.ActionSearchText, "list_files": event.ActionSearchFiles,
		"list_code_definition_names": event.ActionSearchFiles, "browser_action": event.ActionUnknown,
		"use_mcp_tool": event.ActionMCPCall, "access_mcp_resource": event.ActionMCPCall,
		"ask_followup_question": event.ActionAskUser, "attempt_completion": event.ActionTaskComplete,
		"new_task": event.ActionSpawnSubagent, "plan_mode_respond": event.ActionUnknown,
		"read_files": event.ActionReadFile, "run_commands": event.ActionRunCommand, "editor": event.ActionEditFile,
		"apply_patch": event.ActionEditFile, "fetch_web_content": event.ActionWebFetch, "spawn_agent": event.ActionSpawnSubagent,
		"search_codebase": event.ActionSearchText, "submit_and_exit": event.ActionTaskComplete, "ask_question": event.ActionAskUser,
		"update_todo_list": event.ActionTodoUpdate, "editedExistingFile": event.ActionEditFile, "newFileCreated": event.ActionWriteFile,
	}
	for name, want := range cases {
		if got := toolType(name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}
}

// Secrets in targets and outputs are scrubbed.
func TestParser_Scrubs(t *testing.T) {
	key := "sk-ant-api03-" + strings.Repeat("A", 90)
	call := `{"id":"a1","role":"assistant","ts":1796146908192,"content":[{"type":"tool_use","id":"c1","name":"run_commands","input":{"commands":["curl -H 'x-api-key: ` + key + `'"]}}]}`
	res := `{"id":"r1","role":"user","ts":1796146909000,"content":[{"type":"tool_result","tool_use_id":"c1","content":"` + key + `"}]}`
	src := cliSession(t, t.TempDir(), "s1", doc(msgUser, call, res), "")
	evs, _ := parseSource(t, New(nil), src, nil)
	for _, e := range evs {
		if a := e.Action; a != nil && (strings.Contains(a.Target, key) || strings.Contains(a.Output, key)) {
			t.Errorf("secret kept: %+v", a)
		}
	}
}
