package opencode

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

func execT(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatal(err)
	}
}

const (
	insSession = "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) VALUES (?, 'global', ?, 's', '/tmp/p', 'New session - 2026-01-02T03:04:05.678Z', '1', ?, ?)"
	insMessage = "INSERT OR REPLACE INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)"
	insPart    = "INSERT OR REPLACE INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)"
)

// assistant is an assistant message's data; with no input and output it has not finished yet
// and every figure is 0.
func assistant(in, out int64) string {
	if in == 0 && out == 0 {
		return `{"role":"assistant","modelID":"gpt-5.2","providerID":"fake","time":{"created":1000},"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}`
	}
	return fmt.Sprintf(`{"role":"assistant","modelID":"gpt-5.2","providerID":"fake","time":{"created":1000},"tokens":{"input":%d,"output":%d,"reasoning":1,"cache":{"read":5,"write":2}},"cost":0}`, in, out)
}

func TestPoll_UpdatesSubagentsMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := newDB(t, path)
	a := New(nil)
	for _, q := range [][]any{
		{insSession, "ses_root", nil, 100, 100},
		{insSession, "ses_child", "ses_root", 200, 200},
		{"INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('global', '/', 1, 1, '[]')"},
		{insMessage, "msg_a", "ses_root", 1000, 1000, assistant(0, 0)},
		{insMessage, "msg_bad", "ses_root", 1001, 1001, `{"role":"assistant",`},
		{insPart, "prt_t", "msg_c", "ses_child", 1002, 1002, `{"type":"tool","tool":"read","callID":"c1","state":{"status":"running","input":{"filePath":"/tmp/p/x.go"},"time":{"start":1002}}}`},
		{insMessage, "msg_c", "ses_child", 1002, 1002, assistant(7, 3)},
		{insPart, "prt_bad", "msg_c", "ses_child", 1003, 1003, `not json`},
	} {
		if _, err := db.Exec(q[0].(string), q[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	evs, state, st := poll(t, a, path, nil)
	if st.Malformed != 2 {
		t.Errorf("malformed %d, want 2 (reported, never fatal)", st.Malformed)
	}
	f := sumUp(evs)
	if f.Sessions != 1 || f.Usages != 1 || f.Actions != 1 {
		t.Fatalf("first pass %+v: want the root session, msg_c's usage (msg_a has no tokens yet), the read", f)
	}
	for _, e := range evs {
		if e.SessionID != "ses_root" {
			t.Errorf("%s: session %q, want the parent ses_root", e.ID, e.SessionID)
		}
		if e.Kind == event.KindAction && (e.Action.AgentID != "ses_child" || e.Action.Success != nil || e.Action.Model != "gpt-5.2") {
			t.Errorf("action %+v: want agent ses_child, no result yet, model gpt-5.2", e.Action)
		}
	}
	// The client finishes msg_a and the tool call in place.
	execT(t, db, insMessage, "msg_a", "ses_root", 1000, 1005, assistant(10, 4))
	execT(t, db, insPart, "prt_t", "msg_c", "ses_child", 1002, 1006, `{"type":"tool","tool":"read","callID":"c1","state":{"status":"completed","input":{"filePath":"/tmp/p/x.go"},"output":"ok","time":{"start":1002,"end":1010}}}`)
	evs, state, _ = poll(t, a, path, state)
	if len(evs) != 3 {
		t.Fatalf("second pass %d events, want msg_a's usage, the completed read and its tool call message (again, same id)", len(evs))
	}
	for _, e := range evs {
		switch e.Kind {
		case event.KindTokenUsage:
			if e.ID != event.ID(Client, "usage", "msg_a") || e.TokenUsage.Input != 10 || e.TokenUsage.Output != 5 || e.TokenUsage.Reasoning != 1 ||
				e.TokenUsage.CacheRead != 5 || e.TokenUsage.CacheCreation != 2 {
				t.Errorf("usage %s %+v", e.ID, e.TokenUsage.Tokens)
			}
		case event.KindAction:
			if e.ID != event.ID(Client, "action", "prt_t") || e.Action.Success == nil || !*e.Action.Success || e.Action.DurationMs != 8 {
				t.Errorf("action %s %+v", e.ID, e.Action)
			}
		}
	}
	if evs, _, _ := poll(t, a, path, state); len(evs) != 0 {
		t.Errorf("third pass %d events, want none", len(evs))
	}
}

// TestPoll_ConcurrentWriter writes messages and parts from another connection, some in the same
// millisecond and some updated in place, while the reader polls: every final row is read, once
// per change, and none is lost.
func TestPoll_ConcurrentWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := newDB(t, path)
	if _, err := db.Exec(insSession, "ses_w", nil, 1, 1); err != nil {
		t.Fatal(err)
	}
	a := New(nil)
	const n = 300
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			ts := int64(2000 + i/3) // three rows per millisecond
			id := fmt.Sprintf("msg_%04d", i)
			tx, err := db.Begin()
			if err != nil {
				t.Error(err)
				return
			}
			tx.Exec(insMessage, id, "ses_w", ts, ts, assistant(0, 0))
			tx.Exec(insPart, "prt_"+id, id, "ses_w", ts, ts, `{"type":"tool","tool":"bash","state":{"status":"running","input":{"command":"ls"}}}`)
			if err := tx.Commit(); err != nil {
				t.Error(err)
				return
			}
			// The message finishes later, updated in place.
			tx, _ = db.Begin()
			tx.Exec(insMessage, id, "ses_w", ts, ts+1, assistant(int64(i+1), 1))
			tx.Commit()
		}
	}()
	final := transcripttest.PollUntil(t, a, transcript.Source{Client: Client, Path: path, Database: true}, done, 2*time.Millisecond)
	var usages, actions int
	for _, e := range final {
		switch e.Kind {
		case event.KindTokenUsage:
			usages++
		case event.KindAction:
			actions++
		}
	}
	if usages != n || actions != n {
		t.Fatalf("read %d usages and %d actions, want %d of each", usages, actions, n)
	}
	for i := range n {
		e := final[event.ID(Client, "usage", fmt.Sprintf("msg_%04d", i))]
		if e.TokenUsage == nil || e.TokenUsage.Input != int64(i+1) {
			t.Fatalf("msg_%04d: usage %+v, want its final input %d", i, e.TokenUsage, i+1)
		}
	}
}
