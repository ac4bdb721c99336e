package continuecli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

const fixtureID = "5b1f0c2e-7d4a-4f61-9a0e-2c8e1d3f4a55"

// sessionsDir copies testdata/sessions (written here in the shape cn 1.5.47 writes: a run of the
// real CLI against the fake API gave the layout) to a temporary sessions directory, the session's
// modification time set to mod, and returns the directory and the session's path.
func sessionsDir(t *testing.T, mod time.Time) (string, string) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{fixtureID + ".json", "sessions.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "sessions", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, fixtureID+".json")
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

func readOnce(t *testing.T, a *Adapter, src transcript.Source, state []byte) ([]event.Event, []byte) {
	t.Helper()
	p, err := a.NewParser(src, state)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(src.Path)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := p.Record(0, data)
	if err != nil {
		t.Fatal(err)
	}
	return evs, p.State()
}

func ofKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func TestDiscoverAndParse(t *testing.T) {
	mod := time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)
	dir, path := sessionsDir(t, mod)
	a := New([]string{dir, filepath.Join(dir, "absent")})
	srcs, err := a.Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Path != path || srcs[0].SessionID != fixtureID || !srcs[0].Document || srcs[0].Client != Client {
		t.Fatalf("Discover: %+v, want the one session (not sessions.json), as a document", srcs)
	}
	evs, _ := readOnce(t, a, srcs[0], nil)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != fixtureID || e.ID == "" || e.Source != Component {
			t.Fatalf("event %+v: want client %s, session %s, an id, source %s", e, Client, fixtureID, Component)
		}
	}

	started := ofKind(evs, event.KindSession)
	created := time.UnixMilli(1796572800000).UTC()
	if len(started) == 0 || started[0].Session.State != event.SessionStarted || !started[0].Time.Equal(created) ||
		started[0].Session.Cwd != "/home/dev/shop" {
		t.Fatalf("session events %+v: want started at the index's dateCreated %v in /home/dev/shop", started, created)
	}

	usage := ofKind(evs, event.KindTokenUsage)
	if len(usage) != 2 {
		t.Fatalf("%d token_usage events, want one per assistant message with usage (2)", len(usage))
	}
	for i, want := range []event.Tokens{{Input: 4210, Output: 52}, {Input: 4390, Output: 17}} {
		u := usage[i]
		if u.TokenUsage.Tokens != want || u.TokenUsage.Model != "gpt-5.2" || !u.Time.Equal(mod) || u.TokenUsage.MessageID == "" {
			t.Errorf("usage %d: %+v at %v, want %+v of gpt-5.2 at the document's time %v with a message id", i, u.TokenUsage, u.Time, want, mod)
		}
	}

	acts := map[event.ActionType]*event.Action{}
	for _, e := range ofKind(evs, event.KindAction) {
		acts[e.Action.Type] = e.Action
	}
	if a := acts[event.ActionUserPrompt]; a == nil || a.Target != "why does the build fail?" {
		t.Errorf("user prompt %+v", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Target != "make build" || a.Success == nil || *a.Success ||
		!strings.Contains(a.Error, "No rule to make target") || a.ToolUseID != "call_a1" || a.Tool != "Bash" {
		t.Errorf("run_command %+v: want make build, failed with the tool's output as its error", a)
	}
	if a := acts[event.ActionRunCommand]; a != nil && a.MessageID != usage[0].TokenUsage.MessageID {
		t.Errorf("the tool call's message %q is not its response's usage message %q", a.MessageID, usage[0].TokenUsage.MessageID)
	}
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "Makefile" || a.Success == nil || !*a.Success ||
		!strings.Contains(a.Output, "go build") {
		t.Errorf("read_file %+v: want Makefile (relative to the project), succeeded, with its output", a)
	}

	var roles []string
	for _, e := range ofKind(evs, event.KindMessage) {
		roles = append(roles, e.Message.Role+":"+e.Message.Text)
	}
	want := []string{"user:why does the build fail?", "assistant:Let me look.", "tool_call:make build", "tool_call:Makefile",
		"assistant:The Makefile has no build target; run make all."}
	if strings.Join(roles, "|") != strings.Join(want, "|") {
		t.Errorf("messages %q, want %q", roles, want)
	}
}

// A document is read whole at every change: what was emitted is not emitted again, new items get
// the time of the change that brought them, and the items read before keep theirs, with the
// parser's State carried over to a new parser as the watcher does.
func TestReread_OnlyWhatIsNew(t *testing.T) {
	mod := time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC)
	dir, path := sessionsDir(t, mod)
	a := New([]string{dir})
	src := transcript.Source{Client: Client, Path: path, SessionID: fixtureID, Document: true}
	first, state := readOnce(t, a, src, nil)
	if len(first) == 0 {
		t.Fatal("nothing read")
	}
	again, state := readOnce(t, a, src, state)
	if len(again) != 0 {
		t.Fatalf("a re-read of the same document emitted %d events", len(again))
	}

	data, _ := os.ReadFile(path)
	grown := strings.Replace(string(data), `"contextItems":[]}
 ],`, `"contextItems":[]},
  {"message":{"role":"user","content":"run it"},"contextItems":[]},
  {"message":{"role":"assistant","content":"Done.","usage":{"prompt_tokens":4500,"completion_tokens":3,"model":"gpt-5.2"}},"contextItems":[]}
 ],`, 1)
	if grown == string(data) {
		t.Fatal("the fixture's end changed: the test cannot grow it")
	}
	later := mod.Add(7 * time.Minute)
	if err := os.WriteFile(path, []byte(grown), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, later, later)
	evs, _ := readOnce(t, a, src, state)
	if len(evs) == 0 {
		t.Fatal("the new items emitted nothing")
	}
	for _, e := range evs {
		if e.Kind != event.KindSession && !e.Time.Equal(later) {
			t.Errorf("new event %s %s at %v, want the change's time %v", e.Kind, e.ID, e.Time, later)
		}
	}
	u := ofKind(evs, event.KindTokenUsage)
	if len(u) != 1 || u[0].TokenUsage.Input != 4500 {
		t.Errorf("usage after the change %+v, want only the new message's", u)
	}
	// With no State (a new home), everything is emitted again under the same ids.
	fresh, _ := readOnce(t, a, src, nil)
	ids := map[string]bool{}
	for _, e := range append(first, evs...) {
		ids[e.ID] = true
	}
	for _, e := range fresh {
		if !ids[e.ID] {
			t.Errorf("re-read without state: event %s %s has an id not emitted before", e.Kind, e.ID)
		}
	}
}

// A document caught mid-write is malformed, emits nothing and keeps the State.
func TestMalformed_KeepsState(t *testing.T) {
	dir, path := sessionsDir(t, time.Date(2026, 12, 1, 10, 5, 0, 0, time.UTC))
	a := New([]string{dir})
	p, err := a.NewParser(transcript.Source{Client: Client, Path: path, SessionID: fixtureID, Document: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte("[1,2]"), []byte("{\"history\":\xff}")} {
		evs, err := p.Record(0, bad)
		if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%q: %d events, err %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p.State()) != "{}" && string(p.State()) != "null" && len(p.State()) > 2 {
		t.Errorf("state after malformed documents: %s, want it empty", p.State())
	}
	evs, err := p.Record(0, data)
	if err != nil || len(ofKind(evs, event.KindTokenUsage)) != 2 {
		t.Errorf("the whole document after the malformed ones: %d events, err %v", len(evs), err)
	}
	if st := p.Stats(); st.Malformed != 4 || st.Lines != 5 {
		t.Errorf("stats %+v, want 5 reads, 4 malformed", st)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvGlobalDir, "/tmp/cn-home")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/cn-home/sessions" {
		t.Errorf("DefaultRoots with %s: %v", EnvGlobalDir, got)
	}
	t.Setenv(EnvGlobalDir, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".continue", "sessions") {
		t.Errorf("DefaultRoots: %v", got)
	}
}
