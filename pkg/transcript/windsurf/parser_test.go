package windsurf

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/transcripts) are written here to the format Windsurf documents for the
// post_cascade_response_with_transcript hook: user_input, planner_response and code_action steps
// as its example has them. The run_command step (failed) and the mcp_tool step use the field
// names of the hooks' own documented inputs (command_line; mcp_server_name, mcp_tool_name):
// Windsurf publishes no structure for those steps.
const (
	traj  = "0f3a9c1e-7b2d-4e8f-a1c6-5d4b3a2f1e0d"
	other = "6b1e2d3c-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
)

var check = transcripttest.Envelope(Client, Component)

// copyFixture copies a transcript into dir, modified at mtime.
func copyFixture(tb testing.TB, dir, id string, mtime time.Time) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "transcripts", id+".jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	return writeAt(tb, filepath.Join(dir, id+".jsonl"), data, mtime)
}

func writeAt(tb testing.TB, path string, data []byte, mtime time.Time) string {
	tb.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		tb.Fatal(err)
	}
	return path
}

func read(tb testing.TB, path string, state []byte) ([]event.Event, []byte) {
	tb.Helper()
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Document: true}, state)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	evs := transcripttest.Feed(tb, p, [][]byte{data}, check)
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

func TestDiscover(t *testing.T) {
	srcs, err := New([]string{filepath.Join("testdata", "transcripts"), filepath.Join("testdata", "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].SessionID != traj || srcs[1].SessionID != other || !srcs[0].Document {
		t.Fatalf("Discover: %+v, want the two .jsonl transcripts as documents", srcs)
	}
	if srcs, err := New([]string{filepath.Join("testdata", "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("an absent root: %v, %v", srcs, err)
	}
}

func TestTranscript(t *testing.T) {
	mtime := time.Date(2026, 3, 14, 16, 20, 5, 0, time.UTC)
	path := copyFixture(t, t.TempDir(), traj, mtime)
	evs, _ := read(t, path, nil)
	for _, e := range evs {
		if e.SessionID != traj || !e.Time.Equal(mtime) {
			t.Fatalf("event %+v: want the trajectory's id, at the file's modification time", e)
		}
	}
	if u := byKind(evs, event.KindTokenUsage); len(u) != 0 {
		t.Errorf("%d usage events: the transcript keeps no token counts", len(u))
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 1 || sess[0].Session.State != event.SessionStarted || sess[0].Session.TranscriptPath != path {
		t.Errorf("session events %+v", sess)
	}
	acts := map[event.ActionType][]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		acts[e.Action.Type] = append(acts[e.Action.Type], e.Action)
	}
	if p := acts[event.ActionUserPrompt]; len(p) != 2 || p[0].Target != "add a /healthz endpoint to server.py" || p[1].Target != "run the tests" {
		t.Errorf("prompts %+v", p)
	}
	if a := acts[event.ActionEditFile]; len(a) != 1 || a[0].Target != "/home/dev/api/server.py" || a[0].Tool != "code_action" ||
		a[0].Success == nil || !*a[0].Success || a[0].InputHash == "" {
		t.Errorf("code_action %+v: want edit_file of the path (no project: absolute), succeeded", a)
	}
	if a := acts[event.ActionRunCommand]; len(a) != 1 || a[0].Target != "pytest -q" || a[0].Success == nil || *a[0].Success || a[0].Error != "step error" {
		t.Errorf("run_command %+v: want pytest, failed by its status", a)
	}
	if a := acts[event.ActionMCPCall]; len(a) != 1 || a[0].Target != "github/create_issue" || a[0].Success == nil || !*a[0].Success {
		t.Errorf("mcp_tool %+v", a)
	}
	transcripttest.CheckConversation(t, evs,
		"user\t\tadd a /healthz endpoint to server.py",
		"assistant\t\tI'll add a health check route next to the existing ones.",
		"tool_call\tcode_action\t/home/dev/api/server.py",
		"assistant\t\tAdded GET /healthz returning {\"ok\": true}.",
		"user\t\trun the tests",
		"tool_call\trun_command\tpytest -q",
		"assistant\t\tThe tests fail on a missing import; I'll fix it.",
		"tool_call\tmcp_tool\tgithub/create_issue")
}

// The project is the git working tree a code_action's path lies in.
func TestTranscript_Project(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "api")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join("testdata", "transcripts", traj+".jsonl"))
	path := writeAt(t, filepath.Join(dir, traj+".jsonl"), []byte(strings.ReplaceAll(string(data), "/home/dev/api", repo)), time.Now())
	evs, _ := read(t, path, nil)
	for _, e := range evs {
		if e.Project != repo {
			t.Fatalf("event %+v: want the project %s", e, repo)
		}
		if e.Action != nil && e.Action.Type == event.ActionEditFile && e.Action.Target != "server.py" {
			t.Errorf("code_action target %q, want it relative to the project", e.Action.Target)
		}
	}
}

// The transcript is rewritten whole after each response: a re-read emits nothing, a longer one
// only its new steps, at the new modification time, the earlier steps keeping theirs.
func TestTranscript_Reread(t *testing.T) {
	dir := t.TempDir()
	first := time.Date(2026, 3, 14, 16, 20, 5, 0, time.UTC)
	data, _ := os.ReadFile(filepath.Join("testdata", "transcripts", traj+".jsonl"))
	lines := strings.SplitAfter(string(data), "\n")
	path := writeAt(t, filepath.Join(dir, traj+".jsonl"), []byte(strings.Join(lines[:4], "")), first)
	evs, state := read(t, path, nil)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	if again, _ := read(t, path, state); len(again) != 0 {
		t.Errorf("a re-read emitted %d events", len(again))
	}
	second := first.Add(3 * time.Minute)
	writeAt(t, path, data, second)
	more, state := read(t, path, state)
	if len(byKind(more, event.KindSession)) != 0 || len(transcripttest.Messages(more)) != 4 {
		t.Errorf("the new steps: %d events, want 4 messages and their actions", len(more))
	}
	for _, e := range more {
		if !e.Time.Equal(second) {
			t.Errorf("a new step at %v, want %v", e.Time, second)
		}
	}
	// Read without state, every step takes the file's time; with it, the first steps keep theirs.
	writeAt(t, path, data, second.Add(time.Minute))
	if again, _ := read(t, path, state); len(again) != 0 {
		t.Errorf("a re-read with the state emitted %d events", len(again))
	}
	fresh, _ := read(t, path, nil)
	if len(fresh) != len(evs)+len(more) {
		t.Errorf("a read without state: %d events, want %d", len(fresh), len(evs)+len(more))
	}
}

// A transcript caught mid-rewrite is ErrMalformed and leaves the state; the one line a line reader
// makes of it (transcript.DocumentLine) reads the same as the file.
func TestTranscript_Malformed(t *testing.T) {
	path := copyFixture(t, t.TempDir(), traj, time.Now())
	data, _ := os.ReadFile(path)
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Document: true}, nil)
	before := string(p.State())
	for _, bad := range [][]byte{data[:len(data)/2], nil, []byte("[1]"), []byte("{\"type\":\"\xff\"}"), []byte(`{"type":"user_input"} x`)} {
		if evs, err := p.Record(0, bad); !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 {
			t.Errorf("%.30q: %d events, %v; want ErrMalformed and nothing", bad, len(evs), err)
		}
	}
	if string(p.State()) != before {
		t.Error("a malformed transcript changed the state")
	}
	line, err := io.ReadAll(transcript.DocumentLine(strings.NewReader(string(data))))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := read(t, path, nil)
	got, err := p.Record(0, line)
	if err != nil {
		t.Fatal(err)
	}
	transcripttest.SameEvents(t, want, got)
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvDirs, "/tmp/ws1"+string(os.PathListSeparator)+"/tmp/ws2")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/tmp/ws1" || got[1] != "/tmp/ws2" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".windsurf", "transcripts") {
		t.Errorf("DefaultRoots: %v", got)
	}
}
