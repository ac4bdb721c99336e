package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/freshness"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// liveProject is a project on disk whose session was followed live: its reads, edits and writes
// carry the content hashes observer-watch takes, and the files changed afterwards in known ways.
type liveProject struct {
	dir, path string
	now       time.Time
	sess      string
	ids       map[string]int64 // event key -> action id
}

func newLiveProject(t *testing.T) liveProject {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		h, _, err := freshness.HashFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	now := time.Now().Truncate(time.Second)
	t0 := now.Add(-time.Hour)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	lp := liveProject{dir: dir, path: filepath.Join(t.TempDir(), "observer.db"), now: now, sess: "11111111-2222-4333-8444-555555555555"}

	a0, a1 := write("a.go", "package a\n"), write("a.go", "package a // edited\n")
	b0, b1 := write("b.go", "package b\n"), write("b.go", "package b // edited\n")
	e0 := write("e.go", "package e\n")
	ok := true
	type step struct {
		key        string
		min        int
		typ        event.ActionType
		target     string
		hash, out  string
		size       int64
		fails      bool
		noHashRead bool
	}
	steps := []step{
		{key: "read-a1", min: 1, typ: event.ActionReadFile, target: "a.go", hash: a0, out: "package a", size: 100},
		{key: "read-a2", min: 2, typ: event.ActionReadFile, target: "a.go", hash: a0, out: "package a", size: 100},           // unchanged: redundant
		{key: "edit-a", min: 3, typ: event.ActionEditFile, target: "a.go", hash: a1},                                         // the agent edits a.go
		{key: "read-a3", min: 4, typ: event.ActionReadFile, target: "a.go", hash: a1, out: "package a // edited", size: 120}, // changed since: not redundant
		{key: "test-1", min: 5, typ: event.ActionRunCommand, target: "go test ./...", out: "FAIL\tpkg/a\t0.1s", size: 300, fails: true},
		{key: "test-2", min: 6, typ: event.ActionRunCommand, target: "go test ./...", out: "ok  \tpkg/a\t0.1s", size: 200}, // no edit between: redundant
		{key: "read-b", min: 7, typ: event.ActionReadFile, target: "b.go", hash: b0, out: "package b", size: 90},
		{key: "read-c1", min: 8, typ: event.ActionReadFile, target: "c.go", size: 50},
		{key: "read-c2", min: 9, typ: event.ActionReadFile, target: "c.go", size: 50}, // no hash, nothing between: redundant
		{key: "read-d1", min: 10, typ: event.ActionReadFile, target: "d.go", size: 70},
		{key: "ls", min: 11, typ: event.ActionRunCommand, target: "ls", out: "a.go b.go", size: 9},
		{key: "read-d2", min: 12, typ: event.ActionReadFile, target: "d.go", size: 70}, // a command ran between: not counted
		{key: "read-e", min: 13, typ: event.ActionReadFile, target: "e.go", hash: e0, size: 10},
		{key: "edit-b", min: 14, typ: event.ActionEditFile, target: "b.go", hash: b1},
	}
	var evs []event.Event
	for _, st := range steps {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Time, ev.Client, ev.SessionID, ev.Project = event.ID("live", st.key), at(st.min), "claude-code", lp.sess, dir
		success := &ok
		if st.fails {
			f := false
			success = &f
		}
		ev.Action = &event.Action{Type: st.typ, Tool: "T", Target: st.target, Success: success, ContentHash: st.hash,
			Output: st.out, OutputSize: st.size}
		evs = append(evs, ev)
	}
	// A session that read f.go and g.go long ago, with no hash (history).
	for i, name := range []string{"f.go", "g.go"} {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Time, ev.Client, ev.SessionID, ev.Project = event.ID("old", name), t0.Add(-48*time.Hour), "codex", "old-session", dir
		ev.Action = &event.Action{Type: event.ActionReadFile, Target: name, Success: &ok}
		evs = append(evs, ev)
		write(name, "x")
		mt := t0.Add(-49 * time.Hour) // before the read: unchanged since
		if i == 1 {
			mt = t0 // after it
		}
		if err := os.Chtimes(filepath.Join(dir, name), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, lp.path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexOutputs(ctx, 100); err != nil {
		t.Fatal(err)
	}
	st.Close()
	// After the session: b.go changed by someone else, e.go deleted, h.go never seen.
	write("b.go", "package b // changed elsewhere\n")
	os.Remove(filepath.Join(dir, "e.go"))
	write("h.go", "package h\n")

	db := roDB(t, lp.path)
	lp.ids = map[string]int64{}
	for _, s := range steps {
		lp.ids[s.key] = queryInt(t, db, `SELECT id FROM actions WHERE event_id = ?`, event.ID("live", s.key))
	}
	return lp
}

// The tools that compare the store with the disk, or replay a session, on a project whose files
// and history are known.
func TestTools_Live(t *testing.T) {
	lp := newLiveProject(t)
	_, cs := newServer(t, lp.path, lp.dir, lp.now)

	t.Run("FileFreshness", func(t *testing.T) {
		for _, tc := range []struct{ path, state, by string }{
			{"a.go", "fresh", "hash"},                        // as the session's last read left it
			{"b.go", "changed", "hash"},                      // changed after the session's edit
			{"e.go", "missing", ""},                          // deleted
			{"f.go", "fresh", "mtime"},                       // history: not modified since the read
			{"g.go", "changed", "mtime"},                     // history: modified after the read
			{"h.go", "unseen", ""},                           // never recorded
			{filepath.Join(lp.dir, "a.go"), "fresh", "hash"}, // an absolute path
		} {
			var got freshAnswer
			callJSON(t, cs, toolFileFreshness, map[string]any{"path": tc.path}, &got)
			if got.State != tc.state || got.By != tc.by {
				t.Errorf("%s: %s by %q, want %s by %q", tc.path, got.State, got.By, tc.state, tc.by)
			}
			if got.Path != rel(lp.dir, tc.path) {
				t.Errorf("%s: path %q, want it relative to the project", tc.path, got.Path)
			}
		}
		var a freshAnswer
		callJSON(t, cs, toolFileFreshness, map[string]any{"path": "a.go"}, &a)
		if a.Read == nil || a.Read.ID != lp.ids["read-a3"] || a.Write == nil || a.Write.ID != lp.ids["edit-a"] ||
			a.Seen == nil || a.Seen.Sess != short(lp.sess) {
			t.Errorf("a.go: read %+v write %+v seen %+v", a.Read, a.Write, a.Seen)
		}
	})

	t.Run("RedundancyReport", func(t *testing.T) {
		var got redundancyAnswer
		callJSON(t, cs, toolRedundancy, map[string]any{"session": lp.sess}, &got)
		want := redundancyAnswer{Sess: lp.sess,
			Reads: []redundant{{Target: "a.go", N: 1, Bytes: 100}, {Target: "c.go", N: 1, Bytes: 50}},
			Cmds:  []redundant{{Target: "go test ./...", N: 1, Bytes: 200}},
			Bytes: 350, Tokens: 350 / 4}
		if got.Sess != want.Sess || !slices.Equal(got.Reads, want.Reads) || !slices.Equal(got.Cmds, want.Cmds) ||
			got.Bytes != want.Bytes || got.Tokens != want.Tokens {
			t.Errorf("redundancy\n got %+v\nwant %+v", got, want)
		}
	})

	t.Run("CommandFreshness", func(t *testing.T) {
		var got cmdAnswer
		callJSON(t, cs, toolCommandFreshness, map[string]any{"command": "go test ./..."}, &got)
		if got.Last == nil || got.Last.ID != lp.ids["test-2"] || got.Runs != 2 || got.Fresh || got.Edits != 1 ||
			!slices.Equal(got.Files, []string{"b.go"}) || got.Cmds != 1 || !strings.Contains(got.Out, "ok") {
			t.Errorf("go test: %+v (last %+v)", got, got.Last)
		}
		var ls cmdAnswer
		callJSON(t, cs, toolCommandFreshness, map[string]any{"command": "ls"}, &ls)
		if ls.Last == nil || ls.Last.ID != lp.ids["ls"] || ls.Fresh || ls.Edits != 1 {
			t.Errorf("ls: %+v", ls)
		}
		var prefix cmdAnswer
		callJSON(t, cs, toolCommandFreshness, map[string]any{"command": "go test"}, &prefix)
		if prefix.Last == nil || prefix.Last.ID != lp.ids["test-2"] {
			t.Errorf("a command's prefix: %+v", prefix)
		}
	})

	t.Run("ClientSession", func(t *testing.T) {
		// The client that spawned the server named its session: that is the default, even when
		// another session of the project is more recent; asking for a project overrides it.
		s := New(Options{StorePath: lp.path, Project: lp.dir, Session: "old-session", Now: func() time.Time { return lp.now }})
		cs := connect(t, s)
		var got summaryAnswer
		callJSON(t, cs, toolSessionSummary, nil, &got)
		if got.Sess != "old-session" {
			t.Errorf("default session %s, want the client's old-session", got.Sess)
		}
		callJSON(t, cs, toolSessionSummary, map[string]any{"project": lp.dir}, &got)
		if got.Sess != lp.sess {
			t.Errorf("with a project: session %s, want its latest %s", got.Sess, lp.sess)
		}
		unknown := New(Options{StorePath: lp.path, Project: lp.dir, Session: "not-recorded-yet", Now: func() time.Time { return lp.now }})
		callJSON(t, connect(t, unknown), toolSessionSummary, nil, &got)
		if got.Sess != lp.sess {
			t.Errorf("client session not recorded yet: %s, want the project's latest %s", got.Sess, lp.sess)
		}
	})

	t.Run("LastTestAndFailures", func(t *testing.T) {
		var got testAnswer
		callJSON(t, cs, toolLastTest, nil, &got)
		if got.ID != lp.ids["test-2"] || got.OK == nil || !*got.OK || got.Out != "ok  \tpkg/a\t0.1s" {
			t.Errorf("last test: %+v", got)
		}
		var f failuresAnswer
		callJSON(t, cs, toolFailures, nil, &f)
		if f.N != 1 || len(f.Fails) != 1 || f.Fails[0].ID != lp.ids["test-1"] || f.Fails[0].Fixed != lp.ids["test-2"] ||
			f.Fails[0].Prev != "read_file a.go" || f.Fails[0].Out != "FAIL\tpkg/a\t0.1s" {
			t.Errorf("failures: %+v", f)
		}
		var r recoveryAnswer
		callJSON(t, cs, toolRecovery, nil, &r)
		if len(r.Open) != 0 {
			t.Errorf("a fixed failure is open: %+v", r.Open)
		}
		if len(r.Files) != 2 || r.Files[0].Path != "b.go" || r.Files[1].Path != "a.go" {
			t.Errorf("files edited: %+v", r.Files)
		}
	})
}

// A project-scoped search examines at most maxSearchScan matching outputs, newest first, and says
// so when it stopped there; more words find what lies beyond.
func TestSearch_Bounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ok := true
	t0 := time.Now().Add(-time.Hour)
	var evs []event.Event
	for i := range maxSearchScan + 10 {
		ev := event.New(event.KindAction, "test")
		ev.ID, ev.Time, ev.Client, ev.SessionID = event.ID("bounded", strconv.Itoa(i)), t0.Add(time.Duration(i)*time.Second), "claude-code", "s"
		ev.Project, ev.Action = "/busy", &event.Action{Type: event.ActionRunCommand, Target: "make", Success: &ok, Output: "needle in the busy project"}
		if i == 0 { // the oldest: the quiet project's only one
			ev.Project, ev.Action.Output = "/quiet", "needle and thread in the quiet project"
		}
		evs = append(evs, ev)
	}
	if _, err := st.WriteBatch(context.Background(), evs, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.IndexOutputs(context.Background(), 10000); err != nil {
		t.Fatal(err)
	}
	st.Close()
	_, cs := newServer(t, path, "/quiet", time.Now())
	var got searchAnswer
	callJSON(t, cs, toolSearch, map[string]any{"query": "needle"}, &got)
	if len(got.Hits) != 0 || !strings.Contains(got.More, "newest "+strconv.Itoa(maxSearchScan)) {
		t.Errorf("beyond the bound: %+v", got)
	}
	var narrowed, busy searchAnswer
	callJSON(t, cs, toolSearch, map[string]any{"query": "needle thread"}, &narrowed)
	if len(narrowed.Hits) != 1 || narrowed.More != "" || narrowed.Hits[0].ID != 1 {
		t.Errorf("narrowed: %+v", narrowed)
	}
	callJSON(t, cs, toolSearch, map[string]any{"query": "needle", "project": "/busy", "limit": 3}, &busy)
	if len(busy.Hits) != 3 || busy.More != "" {
		t.Errorf("the busy project: %+v", busy)
	}
}
