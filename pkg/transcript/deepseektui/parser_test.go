package deepseektui

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixture (testdata/sessions) is a saved session written here to the client's source (see
// the package doc): read_file, exec_shell failing, edit_file, an MCP call, an agent_open, the
// running totals in the metadata; and checkpoints/ beside it, which is not a session.
const sessionID = "4f6b2d18-93a7-4c0e-b5d1-8e2a7c9f0b34"

var sessionFile = filepath.Join("testdata", "sessions", sessionID+".json")

var (
	created = time.Date(2026, 3, 5, 14, 20, 3, 418529000, time.UTC)
	updated = time.Date(2026, 3, 5, 14, 31, 47, 902114000, time.UTC)
)

func source(tb testing.TB) transcript.Source {
	tb.Helper()
	abs, err := filepath.Abs(sessionFile)
	if err != nil {
		tb.Fatal(err)
	}
	return transcript.Source{Client: Client, Path: abs, SessionID: sessionID, Document: true}
}

func readDoc(tb testing.TB, data, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := New(nil).NewParser(source(tb), state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		tb.Fatal(err)
	}
	transcripttest.CheckEvents(tb, evs)
	return evs, p.State()
}

func fixture(tb testing.TB) []byte {
	tb.Helper()
	data, err := os.ReadFile(sessionFile)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// truncated returns the fixture with its first n messages, saved at updatedAt, each message as
// the client wrote it.
func truncated(tb testing.TB, n int, updatedAt string) []byte {
	tb.Helper()
	return withMessages(tb, 0, n, updatedAt)
}

// withMessages returns the fixture with messages [from, to), saved at updatedAt (json.Marshal
// would rewrite the messages: it sorts keys and escapes "<").
func withMessages(tb testing.TB, from, to int, updatedAt string) []byte {
	tb.Helper()
	var d struct {
		Metadata map[string]any    `json:"metadata"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(fixture(tb), &d); err != nil {
		tb.Fatal(err)
	}
	d.Metadata["updated_at"] = updatedAt
	meta, _ := json.Marshal(d.Metadata)
	parts := make([]string, 0, to-from)
	for _, m := range d.Messages[from:to] {
		parts = append(parts, string(m))
	}
	return []byte(`{"schema_version":1,"metadata":` + string(meta) + `,"messages":[` + strings.Join(parts, ",") + `]}`)
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

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "sessions"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].SessionID != sessionID || !srcs[0].Document {
		t.Fatalf("Discover: %+v, want the one session as a document (not checkpoints/)", srcs)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestSession(t *testing.T) {
	evs, _ := readDoc(t, fixture(t), nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sessionID || e.Project != "/home/dev/api" {
			t.Fatalf("event %+v: want client deepseek-tui, the session and project /home/dev/api", e)
		}
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 2 || sess[0].Session.State != event.SessionStarted || !sess[0].Time.Equal(created) ||
		sess[0].Session.Cwd != "/home/dev/api" || sess[0].Session.Model != "deepseek-v4-pro" ||
		sess[1].Session.Title != "the retry test in tests/retry.rs is flaky, make..." {
		t.Fatalf("session events %+v: want started at created_at in the workspace with the model, then the title", sess)
	}
	// No per-turn usage is kept: no token_usage at all, not even from the metadata's totals.
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Errorf("%d usage events, want none", len(u))
	}
	conv := transcripttest.Conversation(evs)
	var roles []string
	for _, e := range conv {
		roles = append(roles, e.Message.Role)
	}
	if got := strings.Join(roles, ","); got != "user,thinking,assistant,tool_call,tool_call,assistant,tool_call,tool_call,tool_call,assistant" {
		t.Errorf("conversation %s", got)
	}
	if !conv[0].Time.Equal(created) || !conv[len(conv)-1].Time.Equal(updated) {
		t.Errorf("first message at %v, last at %v: want created_at, then updated_at", conv[0].Time, conv[len(conv)-1].Time)
	}
}

func TestActions(t *testing.T) {
	evs, _ := readDoc(t, fixture(t), nil)
	acts := map[event.ActionType]*event.Action{}
	for _, a := range transcripttest.ActionsOf(evs) {
		acts[a.Type] = a
	}
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "tests/retry.rs" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "retry_backoff") {
		t.Errorf("read_file %+v", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "cargo test --test retry" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "FAILED") {
		t.Errorf("run_command %+v: want cargo test, failed with its output as the error", a)
	}
	if a := acts[event.ActionEditFile]; a == nil || a.Target != "tests/retry.rs" || a.Success == nil || !*a.Success {
		t.Errorf("edit_file %+v: want the absolute path made relative", a)
	}
	if a := acts[event.ActionMCPCall]; a == nil || a.Target != "linear_create_issue" || a.Success == nil || !*a.Success {
		t.Errorf("mcp_call %+v", a)
	}
	if a := acts[event.ActionSpawnSubagent]; a == nil || a.Target != "verifier: Run cargo test --test retry 20 times and report failures" ||
		a.Success == nil || !*a.Success {
		t.Errorf("spawn_subagent %+v", a)
	}
	var prompts []string
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if len(prompts) != 1 || prompts[0] != "the retry test in tests/retry.rs is flaky, make it deterministic" {
		t.Errorf("prompts %q: tool results are no prompts", prompts)
	}
}

// A re-read emits nothing; one without state the same events; a document saved again with a
// new turn emits only what is new, and a call reported without its result comes again with it,
// at the time it was first given.
func TestRereadAndChanged(t *testing.T) {
	first, state := readDoc(t, fixture(t), nil)
	if again, _ := readDoc(t, fixture(t), state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	fresh, _ := readDoc(t, fixture(t), nil)
	transcripttest.SameEvents(t, first, fresh)

	early := "2026-03-05T14:22:10.000000Z"
	head, st := readDoc(t, truncated(t, 4, early), nil) // through the exec_shell call, before its result
	tail, _ := readDoc(t, fixture(t), st)
	whole := map[string]bool{}
	for _, e := range first {
		whole[e.ID] = true
	}
	got := map[string]bool{}
	for _, e := range append(head, tail...) {
		if !whole[e.ID] {
			t.Errorf("the grown document made a new id %s (%s)", e.ID, e.Kind)
		}
		got[e.ID] = true
	}
	if len(got) != len(whole) {
		t.Errorf("read in two: %d ids, whole %d", len(got), len(whole))
	}
	for _, e := range tail {
		if e.Kind == event.KindSession || (e.Message != nil && e.Message.Seq < 4*64) {
			t.Errorf("the grown document emitted again %s %+v", e.Kind, e.Message)
		}
		if a := e.Action; a != nil && a.ToolUseID == "call_01_k3Pz9A" {
			if a.Success == nil || *a.Success || !e.Time.Equal(time.Date(2026, 3, 5, 14, 22, 10, 0, time.UTC)) {
				t.Errorf("exec_shell's outcome %+v at %v: want failed, at the call's time", a, e.Time)
			}
		}
	}
}

// Earlier messages dropped (the client keeps the last 500; compaction rewrites them): the
// messages after the last one reported are found by its key; nothing is emitted twice.
func TestDroppedPrefix(t *testing.T) {
	_, st := readDoc(t, truncated(t, 6, "2026-03-05T14:25:00Z"), nil)
	evs, _ := readDoc(t, withMessages(t, 2, 8, "2026-03-05T14:31:47.902114Z"), st)
	var roles []string
	for _, e := range transcripttest.Messages(evs) {
		roles = append(roles, e.Message.Role)
	}
	if strings.Join(roles, ",") != "assistant" {
		t.Errorf("after a dropped prefix: messages %v, want only the new reply", roles)
	}
}

func TestMalformed(t *testing.T) {
	p, _ := New(nil).NewParser(source(t), nil)
	data := fixture(t)
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte(`[]`), []byte("{\"metadata\":\"\xff\"}"), []byte(`{"metadata":{}}`)} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.40q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if evs, err := p.Record(0, data); err != nil || len(evs) == 0 {
		t.Errorf("the whole document after bad reads: %d events, %v", len(evs), err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv("CODEWHALE_HOME", "")
	if got := DefaultRoots(); len(got) != 2 || got[0] != filepath.Join(home, ".codewhale", "sessions") ||
		got[1] != filepath.Join(home, ".deepseek", "sessions") {
		t.Errorf("DefaultRoots: %v (Linux and macOS alike)", got)
	}
	t.Setenv("CODEWHALE_HOME", "/tmp/cw")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/cw/sessions" {
		t.Errorf("DefaultRoots with CODEWHALE_HOME: %v", got)
	}
}
