package grokbuild

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// The fixtures (testdata/sessions) are written here to Grok Build's published source (see the
// package doc): a session in /home/dev/ledger with two turns (a read, a command failing by its exit
// code, an MCP call that failed, a subagent task, an edit left waiting, a cancelled turn whose
// usage spans two models) and the subagent's own file.
const (
	sessionID = "019f8870-2c4e-7a31-9b5d-0e6f1a2b3c4d"
	subID     = "019f8871-0d1e-7f20-8a3b-4c5d6e7f8091"
	cwdDir    = "%2Fhome%2Fdev%2Fledger"
)

func mainPath(tb testing.TB) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "sessions", cwdDir, sessionID, updatesFile))
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func subPath(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(filepath.Dir(mainPath(tb)), "subagents", subID, updatesFile)
}

func readAll(tb testing.TB, src transcript.Source, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := New(nil).NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(src.Path)
	if err != nil {
		tb.Fatal(err)
	}
	var evs []event.Event
	off := int64(0)
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		e, err := p.Record(off, bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			tb.Fatalf("line at %d: %v", off, err)
		}
		evs = append(evs, e...)
		off += int64(len(line))
	}
	return evs, p.State()
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// actions merges action events by id as the writer does: a result joins its call's target.
func actions(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		a := *e.Action
		if prev, ok := out[e.ID]; ok && a.Target == "" {
			a.Target = prev.Target
		}
		out[e.ID] = &a
	}
	return out
}

func find(acts map[string]*event.Action, ty event.ActionType) *event.Action {
	for _, a := range acts {
		if a.Type == ty {
			return a
		}
	}
	return nil
}

func TestSession(t *testing.T) {
	evs, _ := readAll(t, transcript.Source{Client: Client, Path: mainPath(t), SessionID: sessionID}, nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sessionID || e.ID == "" || e.Time.IsZero() || e.Project != "/home/dev/ledger" {
			t.Fatalf("event %+v: want client grok-build, the session, an id, a time and the decoded directory as project", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) < 2 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/ledger" ||
		!sess[0].Time.Equal(time.UnixMilli(1784575476050).UTC()) || sess[1].Session.Model != "grok-4.5" {
		t.Fatalf("session events %+v: want started at the first prompt in the decoded cwd, then grok-4.5", sess)
	}
	usage := map[string]*event.TokenUsage{}
	for _, e := range byKind(evs, event.KindTokenUsage) {
		usage[e.TokenUsage.MessageID+" "+e.TokenUsage.Model] = e.TokenUsage
	}
	if len(usage) != 3 {
		t.Fatalf("%d usage events (%v), want one per turn and model (3)", len(usage), usage)
	}
	u := usage["3f323f60-5a1b-4c2d-9e8f-0a1b2c3d4e5f grok-4.5"]
	if u == nil || u.Tokens != (event.Tokens{Input: 6226, CacheRead: 41984, Output: 1875, Reasoning: 912}) ||
		u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.Origin != "transcript" {
		t.Errorf("first turn %+v: want input net of the cache reads it includes, reasoning inside output, priced", u)
	}
	if u := usage["7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f grok-4.5"]; u == nil || u.Tokens != (event.Tokens{Input: 5000, CacheRead: 48000, Output: 1900, Reasoning: 700}) {
		t.Errorf("second turn, grok-4.5: %+v", u)
	}
	if u := usage["7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f grok-code-fast-1"]; u == nil || u.Tokens != (event.Tokens{Input: 4000, CacheRead: 4000, Output: 500}) || u.CostUSD <= 0 {
		t.Errorf("second turn, grok-code-fast-1: %+v", u)
	}
	acts := actions(evs)
	if a := find(acts, event.ActionUserPrompt); a == nil || !strings.HasPrefix(a.Target, "the reconcile job double-counts refunds") && !strings.HasPrefix(a.Target, "fix it") {
		t.Errorf("prompt %+v", a)
	}
	var prompts []string
	for _, a := range acts {
		if a.Type == event.ActionUserPrompt {
			prompts = append(prompts, a.Target)
		}
	}
	if len(prompts) != 2 || !strings.Contains(strings.Join(prompts, "|"), "the reconcile job double-counts refunds, find out why") {
		t.Errorf("prompts %q: want both, the <user_query> unwrapped", prompts)
	}
	if a := find(acts, event.ActionReadFile); a == nil || a.Target != "reconcile/reconcile.go" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "matchRefunds") || a.Tool != "read_file" || a.Model != "grok-4.5" {
		t.Errorf("read_file %+v: want the path relative to the project, succeeded, the file as output", a)
	}
	if a := find(acts, event.ActionRunCommand); a == nil || a.Target != "go test ./reconcile/ -run TestRefund" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "refunded 2x") {
		t.Errorf("run_command %+v: want failed by its exit code, stdout as the error", a)
	}
	if a := find(acts, event.ActionMCPCall); a == nil || a.Target != "linear/get_issue" || a.Success == nil || *a.Success || a.Error != "linear: 401 Unauthorized" {
		t.Errorf("mcp_call %+v", a)
	}
	if a := find(acts, event.ActionSpawnSubagent); a == nil || a.Target != "Check the other matchers for the same loop" || a.Success == nil || !*a.Success {
		t.Errorf("spawn_subagent %+v", a)
	}
	if a := find(acts, event.ActionEditFile); a == nil || a.Target != "reconcile/reconcile.go" || a.Success != nil {
		t.Errorf("edit_file %+v: want no outcome (no update completed it)", a)
	}
	if a := find(acts, event.ActionTurnAborted); a == nil || a.MessageID != "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f" {
		t.Errorf("turn_aborted %+v", a)
	}
	var roles []string
	for _, e := range byKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role)
	}
	if got := strings.Join(roles, ","); got != "user,thinking,tool_call,tool_call,tool_call,assistant,user,tool_call,tool_call" {
		t.Errorf("message roles %s", got)
	}
}

// A subagent's file belongs to its parent session, carries its agent id, and yields no usage:
// the parent's turn already counts it.
func TestSubagent(t *testing.T) {
	evs, _ := readAll(t, transcript.Source{Client: Client, Path: subPath(t), SessionID: sessionID, AgentID: subID}, nil)
	if n := len(byKind(evs, event.KindTokenUsage)); n != 0 {
		t.Errorf("%d usage events from a subagent's file, want 0 (counted in the parent's turn)", n)
	}
	a := find(actions(evs), event.ActionSearchText)
	if a == nil || a.Target != "for _, c := range charges in /home/dev/ledger/reconcile" || a.AgentID != subID || !a.Sidechain || a.Success == nil || !*a.Success {
		t.Errorf("search_text %+v", a)
	}
	for _, e := range evs {
		if e.SessionID != sessionID || e.Project != "/home/dev/ledger" {
			t.Fatalf("event %+v: want the parent session and its project", e)
		}
	}
}

func TestReread_Append(t *testing.T) {
	src := transcript.Source{Client: Client, Path: mainPath(t), SessionID: sessionID}
	first, state := readAll(t, src, nil)
	again, _ := readAll(t, src, nil)
	if len(again) != len(first) {
		t.Fatalf("a read without state emitted %d events, the first %d", len(again), len(first))
	}
	for i := range first {
		if first[i].ID != again[i].ID {
			t.Fatalf("event %d: id %s then %s", i, first[i].ID, again[i].ID)
		}
	}
	p, err := New(nil).NewParser(src, state)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"timestamp":1784575640,"method":"session/update","params":{"sessionId":"` + sessionID + `","update":{"sessionUpdate":"tool_call_update","toolCallId":"call-b2","status":"completed","rawOutput":{"type":"SearchReplace","content":"1 replacement"}},"_meta":{"eventId":"e-99","agentTimestampMs":1784575640100}}}`
	evs, err := p.Record(99999, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Action == nil || evs[0].Action.Type != event.ActionEditFile || evs[0].Action.Success == nil || !*evs[0].Action.Success {
		t.Fatalf("appended update: %+v, want the edit's outcome only", evs)
	}
	for _, e := range first {
		if e.Action != nil && e.Action.Type == event.ActionEditFile && e.ID != evs[0].ID {
			t.Errorf("result id %s, call id %s", evs[0].ID, e.ID)
		}
	}
}

func TestMalformed(t *testing.T) {
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: "s/x/y/updates.jsonl"}, nil)
	for _, bad := range []string{
		`{"timestamp":1784575476,"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"ty`,
		`[1]`, `{"timestamp":1,"method":"session/update","params":{}}`, "{\"method\":\"\xff\"}",
		`{"timestamp":1784575476,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":7}}}`,
	} {
		if evs, err := p.Record(0, []byte(bad)); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	evs, err := p.Record(5, []byte(`{"timestamp":1784575476,"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ok"}}}}`))
	if err != nil || len(byKind(evs, event.KindMessage)) != 1 {
		t.Errorf("good line after bad ones: %+v, %v", evs, err)
	}
	if st := p.Stats(); st.Malformed != 5 || st.Lines != 6 {
		t.Errorf("stats %+v", st)
	}
}

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "sessions"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Path != mainPath(t) || srcs[0].SessionID != sessionID || srcs[0].AgentID != "" ||
		srcs[1].SessionID != sessionID || srcs[1].AgentID != subID {
		t.Fatalf("Discover: %+v, want the session's updates.jsonl and its subagent's", srcs)
	}
	if got := CwdOf(filepath.Dir(filepath.Dir(mainPath(t)))); got != "/home/dev/ledger" {
		t.Errorf("CwdOf: %q", got)
	}
	long := filepath.Join(t.TempDir(), "very-long-slug-0123456789abcdef")
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(long, ".cwd"), []byte("/srv/a/very/long/path\n"), 0o644)
	if got := CwdOf(long); got != "/srv/a/very/long/path" {
		t.Errorf("CwdOf a hashed directory: %q, want its .cwd", got)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvHome, "/tmp/gh")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/gh/sessions" {
		t.Errorf("DefaultRoots with GROK_HOME: %v", got)
	}
	t.Setenv(EnvHome, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".grok", "sessions") {
		t.Errorf("DefaultRoots: %v (the same on macOS)", got)
	}
}

// A tool call without x.ai/tool's name is known by its ACP kind (else "tool"), never by its
// title: the title is text for people, often the command itself, and must not leave as the
// tool's name nor stay in the parser's state.
func TestToolWithoutName(t *testing.T) {
	src := transcript.Source{Client: Client, Path: mainPath(t), SessionID: sessionID}
	p, err := New(nil).NewParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	const title = "Run `curl -H 'Authorization: Bearer sk-live-0123456789' https://api.example.com`"
	lines := []string{
		`{"timestamp":1784575700,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"call-n1","title":"` + title + `","kind":"execute","status":"pending","rawInput":{"command":"curl https://api.example.com"}},"_meta":{"eventId":"n-1"}}}`,
		`{"timestamp":1784575701,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"call-n2","title":"` + title + `","status":"pending"},"_meta":{"eventId":"n-2"}}}`,
	}
	var evs []event.Event
	for i, l := range lines {
		got, err := p.Record(int64(i)*1000, []byte(l))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	state := string(p.State())
	if strings.Contains(state, "sk-live") || strings.Contains(state, "Run `") {
		t.Errorf("state %s keeps the title", state)
	}
	want := map[string]string{"call-n1": "execute", "call-n2": "tool"}
	for _, e := range evs {
		switch {
		case e.Action != nil && e.Action.ToolUseID != "":
			if e.Action.Tool != want[e.Action.ToolUseID] {
				t.Errorf("action %+v: tool %q, want %q", e.Action, e.Action.Tool, want[e.Action.ToolUseID])
			}
			if e.Action.ToolUseID == "call-n1" && (e.Action.Type != event.ActionRunCommand || e.Action.Target != "curl https://api.example.com") {
				t.Errorf("action %+v: want run_command by its kind", e.Action)
			}
		case e.Message != nil && e.Message.Role == event.RoleToolCall:
			if e.Message.Tool != want[e.Message.ToolUseID] {
				t.Errorf("message %+v: tool %q, want %q", e.Message, e.Message.Tool, want[e.Message.ToolUseID])
			}
		}
	}
	// The result, read by a parser resumed from that state, still maps the call.
	p2, err := New(nil).NewParser(src, []byte(state))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p2.Record(5000, []byte(`{"timestamp":1784575702,"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"call-n1","status":"completed","rawOutput":{"stdout":"ok","exit_code":0}},"_meta":{"eventId":"n-3"}}}`))
	if err != nil || len(got) != 1 || got[0].Action.Tool != "execute" || got[0].Action.Type != event.ActionRunCommand ||
		got[0].Action.Success == nil || !*got[0].Action.Success {
		t.Errorf("result: %+v, %v; want the execute call's outcome", got, err)
	}
}

// A subagent's file neither reports its parent's session (its start, a model) nor shares the ids of the parent's
// prompts, aborted turns and compactions read at the same offsets (the fallback key when a line
// has no eventId).
func TestSubagent_LineIDs(t *testing.T) {
	evs, _ := readAll(t, transcript.Source{Client: Client, Path: subPath(t), SessionID: sessionID, AgentID: subID}, nil)
	if sess := byKind(evs, event.KindSession); len(sess) != 0 {
		t.Errorf("session events %+v from the subagent's file: want none (it would start the parent's session "+
			"again and make its file and model the session's)", sess[0].Session)
	}
	lines := []string{
		`{"timestamp":1784575700,"method":"session/update","params":{"update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"go on"}}}}`,
		`{"timestamp":1784575701,"method":"_x.ai/session/update","params":{"update":{"sessionUpdate":"turn_completed","stop_reason":"cancelled"}}}`,
		`{"timestamp":1784575702,"method":"_x.ai/session/update","params":{"update":{"sessionUpdate":"auto_compact_completed","tokens_before":90000}}}`,
	}
	ids := func(agent string) []string {
		p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: mainPath(t), SessionID: sessionID, AgentID: agent}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for i, l := range lines {
			got, err := p.Record(int64(i)*100, []byte(l))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range byKind(got, event.KindAction) {
				out = append(out, e.ID)
			}
		}
		return out
	}
	parent, sub := ids(""), ids(subID)
	if len(parent) != 3 || len(sub) != 3 {
		t.Fatalf("actions %v and %v: want a prompt, an aborted turn and a compaction each", parent, sub)
	}
	for i := range parent {
		if parent[i] == sub[i] {
			t.Errorf("action %d: the parent's and the subagent's share id %s", i, parent[i])
		}
	}
}
