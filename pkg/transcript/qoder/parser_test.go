package qoder

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape/ccshapetest"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/projects/-home-dev-webapp) are written here to the format the published
// readers describe (see the package doc): a session on a tier alias whose records carry zero
// tokens and credits (Read, Bash failing, Edit, an MCP call, an Agent spawn), then a switch to a
// named model whose reply carries figures with cache reads and writes, written as Claude Code
// writes it (one line per content block, the same message id, a partial output first), and a
// title; and the subagent's transcript under <session>/subagents.
const (
	sessionID = "7d3e9a41-2b6c-4f1e-9a8d-5c0b1e2f3a47"
	agentID   = "aReview-4821"
)

var (
	projectDir = filepath.Join("testdata", "projects", "-home-dev-webapp")
	mainFile   = filepath.Join(projectDir, sessionID+".jsonl")
	subFile    = filepath.Join(projectDir, sessionID, "subagents", "agent-"+agentID+".jsonl")
)

func source(tb testing.TB, path, agent string) transcript.Source {
	tb.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: abs, SessionID: sessionID, AgentID: agent}
}

// read feeds lines to a parser resumed from state and returns the events and the new state.
func read(tb testing.TB, src transcript.Source, lines [][]byte, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	return ccshapetest.Read(tb, New(nil), src, lines, state)
}

var (
	byKind        = ccshapetest.ByKind
	actionsByType = ccshapetest.ActionsByType
)

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "projects"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 {
		t.Fatalf("Discover: %+v, want the session and its subagent", srcs)
	}
	if s := srcs[0]; s.SessionID != sessionID || s.AgentID != "" || !strings.HasSuffix(s.Path, sessionID+".jsonl") {
		t.Errorf("session source %+v", s)
	}
	if s := srcs[1]; s.SessionID != sessionID || s.AgentID != agentID || !strings.HasSuffix(s.Path, "agent-"+agentID+".jsonl") {
		t.Errorf("subagent source %+v: want the parent's session and the agent id", s)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestSession(t *testing.T) {
	evs, _ := read(t, source(t, mainFile, ""), transcripttest.ReadLines(t, mainFile), nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sessionID || e.Project != "/home/dev/webapp" {
			t.Fatalf("event %+v: want client qoder, the session and project /home/dev/webapp", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	var started *event.Session
	var models []string
	var titles []string
	for _, e := range sess {
		switch {
		case e.Session.State == event.SessionStarted:
			started = e.Session
			models = append(models, e.Session.Model)
			if !e.Time.Equal(time.UnixMilli(1772442000000)) {
				t.Errorf("started at %v, want the first record's time", e.Time)
			}
		case e.Session.Model != "":
			models = append(models, e.Session.Model)
		case e.Session.Title != "":
			titles = append(titles, e.Session.Title)
		}
	}
	if started == nil || started.Cwd != "/home/dev/webapp" || started.GitBranch != "main" {
		t.Errorf("started %+v: want cwd /home/dev/webapp on main", started)
	}
	if strings.Join(models, ",") != "performance,claude-sonnet-4-5" {
		t.Errorf("models %v", models)
	}
	if len(titles) != 1 || titles[0] != "Fix signup email validation" {
		t.Errorf("titles %v", titles)
	}
}

// Records with zero tokens (Qoder bills in credits) yield no usage; the named model's reply,
// written on two lines, is one usage with its final figures, priced.
func TestUsage(t *testing.T) {
	evs, _ := read(t, source(t, mainFile, ""), transcripttest.ReadLines(t, mainFile), nil)
	usage := byKind(evs, event.KindTokenUsage)
	ids := map[string]bool{}
	for _, e := range usage {
		ids[e.ID] = true
	}
	if len(ids) != 1 {
		t.Fatalf("%d usage ids (%d events), want one: the zero-token records yield none", len(ids), len(usage))
	}
	_, merged := transcripttest.Merge(usage)
	u := merged[usage[0].ID].TokenUsage
	want := event.Tokens{Input: 1200, Output: 350, CacheRead: 18000, CacheCreation: 2400}
	if u.Tokens != want || u.Model != "claude-sonnet-4-5" || u.MessageID != "msg_q05" {
		t.Errorf("usage %+v, want %+v of claude-sonnet-4-5", u, want)
	}
	if u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate {
		t.Errorf("usage cost %v (%s), want priced and approximate", u.CostUSD, u.Reliability)
	}
}

func TestActions(t *testing.T) {
	evs, _ := read(t, source(t, mainFile, ""), transcripttest.ReadLines(t, mainFile), nil)
	acts := actionsByType(evs)
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "src/signup.ts" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "validateEmail") || a.Tool != "Read" {
		t.Errorf("read_file %+v: want src/signup.ts, succeeded, the file as output", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "npm test -- signup" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "1 failing") || a.DurationMs != 7890 {
		t.Errorf("run_command %+v: want npm test, failed with its output as the error, 7.89 s", a)
	}
	if a := acts[event.ActionEditFile]; a == nil || a.Target != "src/signup.ts" || a.Success == nil || !*a.Success {
		t.Errorf("edit_file %+v", a)
	}
	if a := acts[event.ActionMCPCall]; a == nil || a.Target != "github/create_issue" || a.Success == nil || !*a.Success ||
		a.Output != "Created issue #42" {
		t.Errorf("mcp_call %+v: want github/create_issue, its text result", a)
	}
	if a := acts[event.ActionSpawnSubagent]; a == nil || a.Target != "code-reviewer: review the validator fix" || a.Success == nil {
		t.Errorf("spawn_subagent %+v", a)
	}
	var prompts []string
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if strings.Join(prompts, "|") != "the signup form accepts an empty email, fix the validation|summarise what changed" {
		t.Errorf("prompts %q (tool results are no prompts)", prompts)
	}
	var roles []string
	for _, e := range transcripttest.Conversation(evs) {
		roles = append(roles, e.Message.Role)
	}
	want := "user,thinking,assistant,tool_call,tool_call,tool_call,tool_call,tool_call,user,thinking,assistant"
	if got := strings.Join(roles, ","); got != want {
		t.Errorf("conversation %s, want %s", got, want)
	}
}

// A subagent's file belongs to its parent's session: no session events, no prompts, its actions
// carry the agent id.
func TestSubagent(t *testing.T) {
	evs, _ := read(t, source(t, subFile, agentID), transcripttest.ReadLines(t, subFile), nil)
	if n := len(byKind(evs, event.KindSession)); n != 0 {
		t.Errorf("%d session events from a subagent's file", n)
	}
	for _, e := range evs {
		if e.SessionID != sessionID {
			t.Fatalf("event %+v not in the parent's session", e)
		}
		if e.Action != nil && (e.Action.Type == event.ActionUserPrompt || e.Action.AgentID != agentID) {
			t.Errorf("action %+v: want the agent's, no prompt", e.Action)
		}
	}
	acts := actionsByType(evs)
	if a := acts[event.ActionSearchText]; a == nil || a.Target != "=== '' in src" || a.Success == nil || !*a.Success || !a.Sidechain {
		t.Errorf("search_text %+v", a)
	}
	msgs := transcripttest.Messages(evs)
	if len(msgs) == 0 || msgs[0].Message.Role != event.RoleUser || msgs[0].Message.AgentID != agentID {
		t.Errorf("subagent messages %+v: the task is the subagent's user message", msgs)
	}
}

// A re-read without state yields the same ids; a parser resumed from the state after some lines
// reads only the rest, and still pairs a result with the call read before.
func TestRereadAndResume(t *testing.T) {
	src := source(t, mainFile, "")
	lines := transcripttest.ReadLines(t, mainFile)
	first, _ := read(t, src, lines, nil)
	again, _ := read(t, src, lines, nil)
	transcripttest.SameEvents(t, first, again)

	head, state := read(t, src, lines[:5], nil) // through the Bash call, before its result
	tail, _ := read(t, src, lines[5:], state)
	whole := map[string]bool{}
	for _, e := range first {
		whole[e.ID] = true
	}
	for _, e := range append(head, tail...) {
		if !whole[e.ID] {
			t.Errorf("resumed read made a new id %s (%s)", e.ID, e.Kind)
		}
	}
	if len(head)+len(tail) != len(first) {
		t.Errorf("resumed read: %d + %d events, whole read %d", len(head), len(tail), len(first))
	}
	var bash *event.Action
	for _, e := range tail {
		if e.Action != nil && e.Action.ToolUseID == "call_bash_02" {
			bash = e.Action
		}
	}
	if bash == nil || bash.Type != event.ActionRunCommand || bash.Target != "npm test -- signup" || bash.Success == nil || *bash.Success {
		t.Errorf("result after resume %+v: want the call's type and target from the state", bash)
	}
}

// A damaged line is malformed and costs nothing else: the lines after it read as before.
func TestMalformed(t *testing.T) {
	lines := transcripttest.ReadLines(t, mainFile)
	p, _ := New(nil).NewParser(source(t, mainFile, ""), nil)
	for _, bad := range [][]byte{lines[2][:len(lines[2])/2], []byte("\xff\xfe{}"), []byte("[1,2]"), []byte(`{"type":`)} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.40q: %d events, %v; want ErrMalformed", bad, len(evs), err)
		}
	}
	var n int
	for i, l := range lines {
		evs, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatalf("line %d after bad lines: %v", i+1, err)
		}
		n += len(evs)
	}
	whole, _ := read(t, source(t, mainFile, ""), lines, nil)
	if n != len(whole) {
		t.Errorf("%d events after bad lines, %d without", n, len(whole))
	}
	if st := p.Stats(); st.Malformed != 4 || st.Lines != int64(len(lines)+4) {
		t.Errorf("stats %+v", st)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvDirs, "")
	t.Setenv("QODER_CONFIG_DIR", "")
	if got := DefaultRoots(); len(got) != 2 || got[0] != filepath.Join(home, ".qoder", "projects") ||
		got[1] != filepath.Join(home, ".qoder-cn", "projects") {
		t.Errorf("DefaultRoots: %v (Linux and macOS alike)", got)
	}
	t.Setenv("QODER_CONFIG_DIR", "/tmp/qoder-config")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/qoder-config/projects" {
		t.Errorf("DefaultRoots with QODER_CONFIG_DIR: %v", got)
	}
	t.Setenv(EnvDirs, "/a/projects"+string(os.PathListSeparator)+"/b/projects")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/a/projects" || got[1] != "/b/projects" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
}
