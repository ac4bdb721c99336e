package store_test

import (
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// A read's call and result share an id: the result brings the freshness class and the content
// hash, which merge into the call's row and update file_state; a later re-publication with
// another class changes nothing.
func TestWriteBatch_FreshnessAndFileState(t *testing.T) {
	s := newWriter(t)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	call := actionEv("read-1", at(1), event.Action{Type: event.ActionReadFile, Tool: "Read", Target: "src/a.go"})
	result := actionEv("read-1", at(2), event.Action{Type: event.ActionReadFile, Target: "src/a.go", Success: ptr(true),
		Freshness: event.FreshnessStale, ContentHash: "h2", ContentSize: 20})
	if res := write(t, s, []event.Event{call}, nil); res.Inserted != 1 {
		t.Fatalf("call: %+v", res)
	}
	if n := count(t, s.DB, "SELECT count(*) FROM file_state"); n != 0 {
		t.Fatalf("a call without a hash wrote %d file_state rows", n)
	}
	if res := write(t, s, []event.Event{result}, nil); res.Inserted != 1 {
		t.Fatalf("result: %+v, want merged (1 inserted)", res)
	}
	query := `SELECT tool, success, freshness, content_hash, content_size FROM actions WHERE event_id = ?`
	checkRow(t, s.DB, []any{"Read", int64(1), "stale", "h2", int64(20)}, query, call.ID)
	fsQuery := `SELECT hash, size, seen_at, event_id FROM file_state WHERE project = ? AND path = ? AND session_id = ?`
	checkRow(t, s.DB, []any{"h2", int64(20), at(2).UnixMilli(), call.ID}, fsQuery, testProject, "src/a.go", testSession)

	// The same result again, classified otherwise: the first class stays.
	again := result
	again.Action = &event.Action{Type: event.ActionReadFile, Target: "src/a.go", Success: ptr(true),
		Freshness: event.FreshnessFresh, ContentHash: "other", ContentSize: 1}
	if res := write(t, s, []event.Event{again}, nil); res.Duplicates != 1 {
		t.Errorf("re-published result: %+v, want a duplicate", res)
	}
	checkRow(t, s.DB, []any{"Read", int64(1), "stale", "h2", int64(20)}, query, call.ID)

	// An edit's hash moves file_state on; an older event (out of order) does not move it back.
	edit := actionEv("edit-1", at(5), event.Action{Type: event.ActionEditFile, Target: "src/a.go", Success: ptr(true),
		ContentHash: "h3", ContentSize: 30})
	older := actionEv("read-0", at(0), event.Action{Type: event.ActionReadFile, Target: "src/a.go", Success: ptr(true),
		Freshness: event.FreshnessFresh, ContentHash: "h1", ContentSize: 10})
	write(t, s, []event.Event{edit, older}, nil)
	checkRow(t, s.DB, []any{"h3", int64(30), at(5).UnixMilli(), edit.ID}, fsQuery, testProject, "src/a.go", testSession)
	checkRow(t, s.DB, []any{"", "h3"}, `SELECT freshness, content_hash FROM actions WHERE event_id = ?`, edit.ID)

	// A missing file is remembered as such (no hash); another session keeps its own row.
	missing := actionEv("read-2", at(6), event.Action{Type: event.ActionReadFile, Target: "gone.go", Success: ptr(false),
		Error: "File does not exist.", Freshness: event.FreshnessMissing})
	other := actionEv("read-3", at(7), event.Action{Type: event.ActionReadFile, Target: "src/a.go", Success: ptr(true),
		Freshness: event.FreshnessFresh, ContentHash: "h3", ContentSize: 30})
	other.SessionID = "sess-2"
	write(t, s, []event.Event{missing, other}, nil)
	checkRow(t, s.DB, []any{"", int64(0)}, `SELECT hash, size FROM file_state WHERE path = 'gone.go'`)
	if n := count(t, s.DB, "SELECT count(*) FROM file_state WHERE path = 'src/a.go'"); n != 2 {
		t.Errorf("%d file_state rows for src/a.go, want one per session (2)", n)
	}
}

// The session row shows the state of its newest session event, whatever order they arrive in:
// a Stop hook's finalized and the watcher's last records, or its active/idle/finalized at the
// same last-record time.
func TestWriteBatch_SessionStateFollowsEventTime(t *testing.T) {
	s := newWriter(t)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	query := `SELECT state, state_at FROM sessions WHERE session_id = ?`
	ms := func(sec int) int64 { return at(sec).UnixMilli() }

	// A SessionStart hook's started, then the watcher's active for the first record.
	write(t, s, []event.Event{sessionEv("start", at(0), event.Session{State: event.SessionStarted})}, nil)
	checkRow(t, s.DB, []any{"started", ms(0)}, query, testSession)
	write(t, s, []event.Event{sessionEv("active-1", at(1), event.Session{State: event.SessionActive})}, nil)
	checkRow(t, s.DB, []any{"active", ms(1)}, query, testSession)

	// The Stop hook (finalized at 10) reaches the writer before the watcher's active for a record
	// logged at 9: the older event does not reopen the session.
	write(t, s, []event.Event{sessionEv("stop", at(10), event.Session{State: event.SessionFinalized})}, nil)
	write(t, s, []event.Event{sessionEv("active-9", at(9), event.Session{State: event.SessionActive})}, nil)
	checkRow(t, s.DB, []any{"finalized", ms(10)}, query, testSession)

	// A record after the Stop reopens it.
	write(t, s, []event.Event{sessionEv("active-20", at(20), event.Session{State: event.SessionActive})}, nil)
	checkRow(t, s.DB, []any{"active", ms(20)}, query, testSession)

	// Same time: idle beats active and finalized beats idle, in any order, in one batch or across.
	write(t, s, []event.Event{
		sessionEv("final-20", at(20), event.Session{State: event.SessionFinalized}),
		sessionEv("idle-20", at(20), event.Session{State: event.SessionIdle}),
	}, nil)
	checkRow(t, s.DB, []any{"finalized", ms(20)}, query, testSession)
	write(t, s, []event.Event{sessionEv("idle-20b", at(20), event.Session{State: event.SessionIdle})}, nil)
	checkRow(t, s.DB, []any{"finalized", ms(20)}, query, testSession)

	// An action (no session event) changes no state; last_seen still follows it.
	write(t, s, []event.Event{actionEv("a", at(30), event.Action{Type: event.ActionUserPrompt, Target: "hi"})}, nil)
	checkRow(t, s.DB, []any{"finalized", ms(30)}, `SELECT state, last_seen FROM sessions WHERE session_id = ?`, testSession)
}
