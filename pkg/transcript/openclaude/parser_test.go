package openclaude

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixture (testdata/projects/-home-dev-webshop) is written here to Claude Code's line format
// with what OpenClaude's OpenAI shim puts in it (see the package doc): gpt-5 messages with msg_
// ids of the shim, call_ tool ids, usage net of the cached part with cache reads and no cache
// writes, one message over two lines (its first line's output partial), a read, a command that
// failed and an MCP call.
const sessionID = "5a1c9e27-8b3d-4f60-a2c4-d6e8f0a1b3c5"

func fixture(t testing.TB) transcript.Source {
	p, _ := filepath.Abs(filepath.Join("testdata", "projects", "-home-dev-webshop", sessionID+".jsonl"))
	return transcript.Source{Client: Client, Path: p, SessionID: sessionID}
}

// parse feeds lines to a parser resumed from state and returns the events and the state after.
func parse(t *testing.T, a transcript.Adapter, src transcript.Source, state []byte, lines [][]byte) ([]event.Event, []byte) {
	t.Helper()
	p, err := a.NewParser(src, state)
	if err != nil {
		t.Fatal(err)
	}
	var evs []event.Event
	for i, l := range lines {
		got, err := p.Record(int64(i), l)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, got...)
	}
	return evs, p.State()
}

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "projects"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0].Client != Client || srcs[0].SessionID != sessionID || srcs[0].Path != fixture(t).Path {
		t.Fatalf("Discover: %+v, want the one session, named openclaude's", srcs)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "none")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("absent root: %v, %v", srcs, err)
	}
}

func TestTranscript(t *testing.T) {
	src := fixture(t)
	evs, _ := parse(t, New(nil), src, nil, transcripttest.ReadLines(t, src.Path))
	transcripttest.CheckEvents(t, evs)
	for _, e := range evs {
		if e.Client != Client || e.SessionID != sessionID || e.Project != "/home/dev/webshop" {
			t.Fatalf("event %+v: want client openclaude, the session and the project", e)
		}
	}
	// The writer keeps, per usage id, the event with the largest output: do the same.
	final := map[string]*event.TokenUsage{}
	var order []string
	for _, e := range evs {
		if u := e.TokenUsage; u != nil {
			if f, ok := final[e.ID]; !ok {
				order = append(order, e.ID)
				final[e.ID] = u
			} else if u.Output > f.Output {
				final[e.ID] = u
			}
		}
	}
	want := []event.Tokens{
		{Input: 3120, Output: 142, CacheRead: 8960},
		{Input: 412, Output: 57, CacheRead: 12032},
		{Input: 280, Output: 96, CacheRead: 12416},
		{Input: 190, Output: 210, CacheRead: 12800},
	}
	if len(order) != len(want) {
		t.Fatalf("%d messages with usage, want %d (one per message, its lines merged)", len(order), len(want))
	}
	for i, id := range order {
		u := final[id]
		if u.Tokens != want[i] || u.Model != "gpt-5" || u.CostUSD <= 0 || u.Reliability != event.ReliabilityUnreliable ||
			!strings.HasPrefix(u.MessageID, "msg_") {
			t.Errorf("usage %d: %+v, want %+v (input net of the cached part, as the shim wrote it), priced", i, u, want[i])
		}
	}
	acts := map[event.ActionType]*event.Action{}
	for _, e := range evs {
		a := e.Action
		if a == nil {
			continue
		}
		if prev := acts[a.Type]; prev == nil || a.Success != nil {
			acts[a.Type] = a
		}
	}
	if a := acts[event.ActionUserPrompt]; a == nil || a.Target != "Why does checkout fail for guest users?" {
		t.Errorf("prompt %+v", a)
	}
	if a := acts[event.ActionReadFile]; a == nil || a.Target != "src/checkout.ts" || a.Success == nil || !*a.Success {
		t.Errorf("read %+v: want the path in the project, succeeded", a)
	}
	if a := acts[event.ActionRunCommand]; a == nil || a.Success == nil || *a.Success || !strings.Contains(a.Error, "FAIL src/checkout.test.ts") {
		t.Errorf("bash %+v: want failed with the test output", a)
	}
	if a := acts[event.ActionMCPCall]; a == nil || a.Tool != "mcp__github__create_issue" || a.Success == nil || !*a.Success {
		t.Errorf("mcp %+v", a)
	}
}

// Ids are claudecode's: a transcript read by either reader is the same facts.
func TestIDsAreClaudeCodes(t *testing.T) {
	src := fixture(t)
	lines := transcripttest.ReadLines(t, src.Path)
	ours, _ := parse(t, New(nil), src, nil, lines)
	theirs, _ := parse(t, claudecode.New(nil), transcript.Source{Client: claudecode.Client, Path: src.Path, SessionID: sessionID}, nil, lines)
	if len(ours) != len(theirs) {
		t.Fatalf("%d events, claudecode %d", len(ours), len(theirs))
	}
	for i := range ours {
		if ours[i].ID != theirs[i].ID || theirs[i].Client != claudecode.Client {
			t.Fatalf("event %d: id %s, claudecode's %s", i, ours[i].ID, theirs[i].ID)
		}
	}
}

// A re-read from the start gives the same events; a parser resumed from State reads only the
// lines after it; a bad line is malformed, named openclaude, and loses nothing else.
func TestReread_Resume_Malformed(t *testing.T) {
	src := fixture(t)
	lines := transcripttest.ReadLines(t, src.Path)
	all, _ := parse(t, New(nil), src, nil, lines)
	again, _ := parse(t, New(nil), src, nil, lines)
	transcripttest.SameEvents(t, all, again)
	head, state := parse(t, New(nil), src, nil, lines[:4])
	tail, _ := parse(t, New(nil), src, state, lines[4:])
	if len(head)+len(tail) != len(all) {
		t.Errorf("resumed: %d + %d events, a whole read %d", len(head), len(tail), len(all))
	}

	p, _ := New(nil).NewParser(src, state)
	evs, err := p.Record(0, []byte(`{"type":"assistant","message":{"id":"msg_x","content":[{"type":`))
	if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 || !strings.Contains(err.Error(), "openclaude") || strings.Contains(err.Error(), "claude-code") {
		t.Errorf("truncated line: %d events, %v; want ErrMalformed naming openclaude", len(evs), err)
	}
	if evs, err := p.Record(1, lines[4]); err != nil || len(evs) == 0 {
		t.Errorf("the next line: %d events, %v", len(evs), err)
	}
	if st := p.Stats(); st.Lines != 2 || st.Malformed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv("CLAUDE_CONFIG_DIR", "/tmp/claude") // Claude Code's: OpenClaude does not read it
	t.Setenv(EnvConfigDir, "/tmp/oc")
	if got := DefaultRoots(); len(got) != 1 || got[0] != "/tmp/oc/projects" {
		t.Errorf("DefaultRoots with %s: %v", EnvConfigDir, got)
	}
	t.Setenv(EnvConfigDir, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".openclaude", "projects") {
		t.Errorf("DefaultRoots (Linux and macOS alike): %v", got)
	}
}
