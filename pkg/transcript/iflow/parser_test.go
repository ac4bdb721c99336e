package iflow

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/ccshape/ccshapetest"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/projects/-home-dev-shop) are written here to the format the published
// readers describe (see the package doc): a session on glm-4.7 whose records mostly carry zero
// usage (read_file, run_shell_command failing with a compact function response, replace with a
// diff as its display, a task spawning a subagent, an assistant turn written twice as
// snapshots, an isMeta context record), a last reply with real figures; and the subagent's own
// file, whose records name the parent's session.
const (
	sessionID = "session-5b2e8f14-9c3a-4d7e-b1f0-6a8c2d4e9f13"
	subStem   = "session-c71d0e92-4a5b-4f3c-8e6d-2b9a1f7c3e58"
)

var (
	projectDir = filepath.Join("testdata", "projects", "-home-dev-shop")
	mainFile   = filepath.Join(projectDir, sessionID+".jsonl")
	subFile    = filepath.Join(projectDir, subStem+".jsonl")
)

func source(tb testing.TB, path string) transcript.Source {
	tb.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		tb.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: abs, SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
}

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
	if len(srcs) != 2 || srcs[0].SessionID != sessionID || srcs[1].SessionID != subStem || srcs[0].Document {
		t.Fatalf("Discover: %+v, want the two session-*.jsonl files, line by line", srcs)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestSession(t *testing.T) {
	evs, _ := read(t, source(t, mainFile), transcripttest.ReadLines(t, mainFile), nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sessionID || e.Project != "/home/dev/shop" {
			t.Fatalf("event %+v: want client iflow-cli, the session and project /home/dev/shop", e)
		}
	}
	var started []event.Event
	var models []string
	for _, e := range byKind(evs, event.KindSession) {
		if e.Session.State == event.SessionStarted {
			started = append(started, e)
		} else if e.Session.Model != "" {
			models = append(models, e.Session.Model)
		}
	}
	if len(started) != 1 || started[0].Session.Cwd != "/home/dev/shop" || started[0].Session.GitBranch != "feature/discounts" ||
		!started[0].Time.Equal(time.Date(2026, 2, 27, 9, 11, 31, 532e6, time.UTC)) {
		t.Errorf("started %+v", started)
	}
	if strings.Join(models, ",") != "glm-4.7" {
		t.Errorf("models %v", models)
	}
}

// Zero usage yields nothing; the reply with figures is one usage, priced.
func TestUsage(t *testing.T) {
	evs, _ := read(t, source(t, mainFile), transcripttest.ReadLines(t, mainFile), nil)
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 1 {
		t.Fatalf("%d usage events, want one: the zero-usage records yield none", len(usage))
	}
	u := usage[0].TokenUsage
	if u.Tokens != (event.Tokens{Input: 16472, Output: 224}) || u.Model != "glm-4.7" || u.MessageID != "chatcmpl-7f3a94" {
		t.Errorf("usage %+v", u)
	}
	if u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate {
		t.Errorf("usage cost %v (%s), want priced and approximate", u.CostUSD, u.Reliability)
	}
}

func TestActions(t *testing.T) {
	evs, _ := read(t, source(t, mainFile), transcripttest.ReadLines(t, mainFile), nil)
	acts := actionsByType(evs)
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "cart/total.py" || a.Tool != "read_file" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "def total") {
		t.Errorf("read_file %+v: want cart/total.py, succeeded, the file as output", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "pytest tests/test_total.py -q" || a.Success == nil || *a.Success ||
		a.Error != "Command exited with code 1: 2 failed, 5 passed" || a.DurationMs != 7360 {
		t.Errorf("run_command %+v: want pytest, failed with the response's error, 7.36 s", a)
	}
	if a := acts[event.ActionEditFile]; a == nil || a.Tool != "replace" || a.Target != "cart/total.py" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "Successfully modified") {
		t.Errorf("edit_file %+v", a)
	}
	if a := acts[event.ActionSpawnSubagent]; a == nil || a.Target != "general-purpose: check discount callers" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "Both callers") {
		t.Errorf("spawn_subagent %+v", a)
	}
	var prompts []string
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if len(prompts) != 1 || prompts[0] != "the cart total ignores the discount code, find out why and fix it" {
		t.Errorf("prompts %q (the isMeta context and tool results are no prompts)", prompts)
	}
	// The turn written twice as snapshots adds no message: its calls keep their ids.
	var roles []string
	for _, e := range transcripttest.Conversation(evs) {
		roles = append(roles, e.Message.Role)
	}
	want := "user,assistant,tool_call,tool_call,assistant,tool_call,tool_call,assistant"
	if got := strings.Join(roles, ","); got != want {
		t.Errorf("conversation %s, want %s", got, want)
	}
}

// The subagent's file names the parent's session in its records: its events are the parent
// session's, with the file's own id as AgentID, and no session events of their own.
func TestSubagent(t *testing.T) {
	evs, _ := read(t, source(t, subFile), transcripttest.ReadLines(t, subFile), nil)
	if n := len(byKind(evs, event.KindSession)); n != 0 {
		t.Errorf("%d session events from a subagent's file", n)
	}
	for _, e := range evs {
		if e.SessionID != sessionID {
			t.Fatalf("event %+v not in the parent's session", e)
		}
		if e.Action != nil && (e.Action.Type == event.ActionUserPrompt || e.Action.AgentID != subStem) {
			t.Errorf("action %+v: want the agent's, no prompt", e.Action)
		}
	}
	acts := actionsByType(evs)
	if a := acts[event.ActionSearchText]; a == nil || a.Target != `total\( in .` || a.Success == nil || !*a.Success {
		t.Errorf("search_text %+v", a)
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 1 || u[0].TokenUsage.AgentID != subStem || u[0].TokenUsage.Output != 61 {
		t.Errorf("subagent usage %+v", u)
	}
}

func TestRereadAndResume(t *testing.T) {
	src := source(t, mainFile)
	lines := transcripttest.ReadLines(t, mainFile)
	first, _ := read(t, src, lines, nil)
	again, _ := read(t, src, lines, nil)
	transcripttest.SameEvents(t, first, again)

	head, state := read(t, src, lines[:5], nil) // through the shell call, before its result
	tail, _ := read(t, src, lines[5:], state)
	if len(head)+len(tail) != len(first) {
		t.Errorf("resumed read: %d + %d events, whole read %d", len(head), len(tail), len(first))
	}
	whole := map[string]bool{}
	for _, e := range first {
		whole[e.ID] = true
	}
	var shell *event.Action
	for _, e := range tail {
		if !whole[e.ID] {
			t.Errorf("resumed read made a new id %s (%s)", e.ID, e.Kind)
		}
		if e.Action != nil && e.Action.ToolUseID == "call_-2215530876114240611" {
			shell = e.Action
		}
	}
	if shell == nil || shell.Type != event.ActionRunCommand || shell.Target != "pytest tests/test_total.py -q" || shell.Success == nil || *shell.Success {
		t.Errorf("result after resume %+v: want the call's type and target from the state", shell)
	}
}

func TestMalformed(t *testing.T) {
	lines := transcripttest.ReadLines(t, mainFile)
	p, _ := New(nil).NewParser(source(t, mainFile), nil)
	for _, bad := range [][]byte{lines[3][:len(lines[3])/2], []byte("\xff\xfe{}"), []byte("[1,2]"), []byte(`{"type":`)} {
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
	whole, _ := read(t, source(t, mainFile), lines, nil)
	if n != len(whole) {
		t.Errorf("%d events after bad lines, %d without", n, len(whole))
	}
	if st := p.Stats(); st.Malformed != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvDirs, "")
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".iflow", "projects") {
		t.Errorf("DefaultRoots: %v (Linux and macOS alike)", got)
	}
	t.Setenv(EnvDirs, "/a/projects"+string(os.PathListSeparator)+"~/b")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/a/projects" || got[1] != filepath.Join(home, "b") {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
}

// A toolUseResult written as a string (Claude Code's habit for an error's text) carries no status
// and does not make its line malformed: the tool results in the line are read all the same.
func TestToolUseResultString(t *testing.T) {
	obj := regexp.MustCompile(`"toolUseResult":\{[^}]*\}`)
	var lines [][]byte
	changed := 0
	for _, l := range transcripttest.ReadLines(t, mainFile) {
		if obj.Match(l) {
			changed++
			l = obj.ReplaceAll(l, []byte(`"toolUseResult":"Error: the tool failed"`))
		}
		lines = append(lines, l)
	}
	if changed == 0 {
		t.Fatal("the fixture has no toolUseResult object to rewrite")
	}
	p, _ := New(nil).NewParser(source(t, mainFile), nil)
	var evs []event.Event
	for i, l := range lines {
		got, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		evs = append(evs, got...)
	}
	acts := actionsByType(evs)
	if a := acts[event.ActionReadFile]; a == nil || a.Success == nil || !*a.Success || !strings.Contains(a.Output, "def total") {
		t.Errorf("read_file %+v: want its result read", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Success == nil || *a.Success || a.Error != "Command exited with code 1: 2 failed, 5 passed" {
		t.Errorf("run_command %+v: want it failed, by its response", a)
	}
}
