package warp

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// The fixtures (testdata/*.sql) are written here to Warp's schema and persistence model (see the
// package doc): first.sql three conversations, second.sql what Warp added later.
const (
	main   = "7c1e2f4a-9b3d-4e5f-8a6b-0c1d2e3f4a5b" // on Warp's credits, with charged usage
	child  = "a2f9d810-5c4b-4a3e-b1d2-9e8f7a6b5c4d" // an agent main spawned, on the user's key
	legacy = "0e4d3c2b-1a09-4f8e-a7d6-c5b4a3928170" // per-model totals only
)

// newRoot makes a Warp state directory whose warp.sqlite holds the schema and the fixture files,
// closed (checkpointed) as Warp leaves it, and returns the directory and the database.
func newRoot(tb testing.TB, files ...string) (string, string) {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), "warp-terminal")
	if err := os.MkdirAll(root, 0o700); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(root, DBName)
	load(tb, path, append([]string{"schema.sql"}, files...)...)
	return root, path
}

func load(tb testing.TB, path string, files ...string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_busy_timeout=5000")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, f := range files {
		q, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := db.Exec(string(q)); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
	}
}

func src(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
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

func usageBySession(evs []event.Event) map[string]event.Event {
	out := map[string]event.Event{}
	for _, e := range byKind(evs, event.KindTokenUsage) {
		out[e.SessionID] = e
	}
	return out
}

func TestPoll_Conversations(t *testing.T) {
	_, path := newRoot(t, "first.sql")
	evs, _, stats := transcripttest.Poll(t, New(nil), src(path), nil)
	if stats.Lines != 9 || stats.Malformed != 1 {
		t.Errorf("stats %+v: want 6 exchanges and 3 conversations read, the cut input malformed", stats)
	}
	started := map[string]*event.Session{}
	for _, e := range byKind(evs, event.KindSession) {
		if e.Session.State == event.SessionStarted {
			started[e.SessionID] = e.Session
		}
	}
	if s := started[main]; s == nil || s.Cwd != "/home/dev/webapp" || !s.StartedAt.Equal(time.Date(2026, 6, 9, 10, 0, 2, 118734000, time.UTC)) {
		t.Errorf("main conversation started %+v: want its first exchange's time and directory", s)
	}
	if s := started[child]; s == nil || s.ParentSessionID != main {
		t.Errorf("child conversation started %+v: want the parent conversation", s)
	}

	u := usageBySession(evs)
	if len(u) != 2 {
		t.Fatalf("%d usage events, want one per conversation with charged usage (2; the legacy one none)", len(u))
	}
	m := u[main]
	if m.TokenUsage.Tokens != (event.Tokens{Input: 3000, Output: 900, CacheRead: 40000, CacheCreation: 5011}) ||
		m.TokenUsage.Model != "claude-4-5-sonnet" || math.Abs(m.TokenUsage.CostUSD-0.0415) > 1e-9 ||
		m.TokenUsage.Reliability != event.ReliabilityApproximate || !m.Time.Equal(started[main].StartedAt) {
		t.Errorf("main usage %+v at %v: want the charged buckets, Warp's inference cost (4.15 cents), at the first exchange", m.TokenUsage, m.Time)
	}
	c := u[child]
	if c.TokenUsage.Tokens != (event.Tokens{Input: 8000, Output: 400, CacheRead: 4000}) || c.TokenUsage.Model != "gpt-5" ||
		c.TokenUsage.CostUSD <= 0 || c.TokenUsage.Reliability != event.ReliabilityApproximate {
		t.Errorf("child usage %+v: want its buckets, priced from the table (Warp charged nothing)", c.TokenUsage)
	}

	var prompts []string
	for _, e := range byKind(evs, event.KindAction) {
		if e.Action.Type != event.ActionUserPrompt {
			t.Errorf("action %+v: this reader emits prompts only", e.Action)
		}
		prompts = append(prompts, e.Action.Target)
	}
	want := []string{"why does the login test flake?", "ok, fix it and rerun", "Run the login test 20 times and report the failures",
		"list the largest files in this repo"}
	if len(prompts) != len(want) {
		t.Fatalf("prompts %q, want %q (the tool result sent back is none)", prompts, want)
	}
	for i := range want {
		if prompts[i] != want[i] {
			t.Errorf("prompt %d %q, want %q", i, prompts[i], want[i])
		}
	}
	if n := len(transcripttest.Messages(evs)); n != 4 {
		t.Errorf("%d messages, want the 4 prompts", n)
	}
	for _, e := range evs {
		if e.SessionID == main && e.Project != "/home/dev/webapp" {
			t.Errorf("event %s: project %q", e.ID, e.Project)
		}
	}
}

// A second pass reads the new exchange and the rewritten conversation only: the conversation's
// usage comes again under the same id with the larger totals, which the writer keeps; a pass with
// nothing new emits nothing, and a read without State gives the same ids.
func TestPoll_Incremental(t *testing.T) {
	_, path := newRoot(t, "first.sql")
	first, state, _ := transcripttest.Poll(t, New(nil), src(path), nil)
	load(t, path, "second.sql")
	second, state2, _ := transcripttest.Poll(t, New(nil), src(path), state)
	u := usageBySession(second)
	if len(u) != 1 || u[main].ID != usageBySession(first)[main].ID ||
		u[main].TokenUsage.Tokens != (event.Tokens{Input: 4000, Output: 1500, CacheRead: 60000, CacheCreation: 5011}) {
		t.Errorf("second pass usage %+v: want the main conversation's, same id, new totals", u)
	}
	prompts := 0
	for _, e := range byKind(second, event.KindAction) {
		prompts++
		if e.Action.Target != "also check signup.test.ts" {
			t.Errorf("second pass prompt %q", e.Action.Target)
		}
	}
	if prompts != 1 {
		t.Errorf("second pass: %d prompts, want the new one", prompts)
	}
	for _, e := range second {
		if e.SessionID != main {
			t.Errorf("second pass emitted %s for %s, which did not change", e.Kind, e.SessionID)
		}
	}
	if again, _, _ := transcripttest.Poll(t, New(nil), src(path), state2); len(again) != 0 {
		t.Errorf("a pass with nothing new emitted %d events", len(again))
	}
	whole, _, _ := transcripttest.Poll(t, New(nil), src(path), nil)
	ids := map[string]bool{}
	for _, e := range whole {
		ids[e.ID] = true
	}
	for _, e := range append(first, second...) {
		if !ids[e.ID] {
			t.Errorf("event %s (%s) is not one a read without state emits", e.ID, e.Kind)
		}
	}
}

func TestPoll_NotWarp(t *testing.T) {
	path := filepath.Join(t.TempDir(), DBName)
	db, _ := sql.Open("sqlite3", path)
	db.Exec("CREATE TABLE blocks (id INTEGER)")
	db.Close()
	p, _ := New(nil).NewParser(src(path), []byte(`{"query":3}`))
	if evs, err := p.(transcript.Poller).Poll(context.Background()); err == nil || len(evs) != 0 {
		t.Fatalf("poll of a database without Agent Mode's tables: %d events, err %v; want an error", len(evs), err)
	}
	if string(p.State()) != `{"query":3,"conv":{}}` {
		t.Errorf("state after a failed pass %s, want it kept", p.State())
	}
	if _, err := p.Record(0, []byte("{}")); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("Record: %v, want ErrMalformed", err)
	}
}

func TestDiscover(t *testing.T) {
	root, path := newRoot(t, "first.sql")
	srcs, err := New([]string{root, filepath.Join(t.TempDir(), "absent")}).Discover()
	if err != nil || len(srcs) != 1 || srcs[0].Path != path || !srcs[0].Database {
		t.Fatalf("Discover: %+v, %v", srcs, err)
	}
	if srcs, err := New([]string{filepath.Join(t.TempDir(), "absent")}).Discover(); err != nil || len(srcs) != 0 {
		t.Errorf("Discover on an absent root: %+v, %v", srcs, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, _ := os.UserHomeDir()
	t.Setenv(EnvDirs, "/w/one"+string(os.PathListSeparator)+"/w/two")
	if got := DefaultRoots(); len(got) != 2 || got[0] != "/w/one" || got[1] != "/w/two" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
	t.Setenv(EnvDirs, "")
	t.Setenv("XDG_STATE_HOME", "/tmp/state")
	if got := defaultRoots("linux"); len(got) != 2 || got[0] != "/tmp/state/warp-terminal" || got[1] != "/tmp/state/warp-terminal-preview" {
		t.Errorf("linux roots %v", got)
	}
	t.Setenv("XDG_STATE_HOME", "")
	if got := defaultRoots("linux"); got[0] != filepath.Join(home, ".local", "state", "warp-terminal") {
		t.Errorf("linux roots %v", got)
	}
	mac := filepath.Join(home, "Library", "Group Containers", "2BBY89MBSN.dev.warp", "Library", "Application Support", "dev.warp.Warp-Stable")
	if got := defaultRoots("darwin"); len(got) != 2 || got[0] != mac {
		t.Errorf("macOS roots %v", got)
	}
}

func TestToolType(t *testing.T) {
	for name, want := range map[string]event.ActionType{"run_command": event.ActionRunCommand, "read_files": event.ActionReadFile,
		"apply_file_diff": event.ActionEditFile, "grep": event.ActionSearchText, "file_glob": event.ActionSearchFiles,
		"call_mcp_tool": event.ActionMCPCall, "use_computer": event.ActionUnknown} {
		if got := ToolType(name); got != want {
			t.Errorf("ToolType(%s) = %s, want %s", name, got, want)
		}
	}
}
