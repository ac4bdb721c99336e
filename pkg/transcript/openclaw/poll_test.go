package openclaw

import (
	"bytes"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3", to write test databases

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// copyDB copies a fixture database into a temporary directory and opens it for writing, as
// OpenClaw would (WAL).
func copyDB(t *testing.T, from string) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agents", "main", "agent", DatabaseName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return path, db
}

func execT(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatal(err)
	}
}

// A second pass over an unchanged database emits nothing; a fresh parser resumed from the state
// neither.
func TestPoll_SecondPassEmitsNothing(t *testing.T) {
	a := New(nil)
	src := dbSrc(t, fixDB)
	p, err := a.newParser(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Poll(t.Context())
	if err != nil || len(first) == 0 {
		t.Fatalf("first pass: %d events, %v", len(first), err)
	}
	again, err := p.Poll(t.Context())
	if err != nil || len(again) != 0 {
		t.Errorf("second pass: %d events, %v", len(again), err)
	}
	if evs, _ := poll(t, a, src, p.State()); len(evs) != 0 {
		t.Errorf("resumed pass: %d events", len(evs))
	}
	if n := len(p.State()); n > 8<<10 {
		t.Errorf("state of %d bytes", n)
	}
}

// Rows appended after a pass are read by the next one, and the union is one full pass: nothing
// twice, nothing lost, a tool result pairs with its call across passes.
func TestPoll_Appends(t *testing.T) {
	path, db := copyDB(t, fixDB)
	a := New(nil)
	src := dbSrc(t, path)
	want, _ := poll(t, a, src, nil)

	execT(t, db, "CREATE TABLE later AS SELECT * FROM transcript_events WHERE seq >= 6")
	execT(t, db, "DELETE FROM transcript_events WHERE seq >= 6")
	evs, p := poll(t, a, src, nil)
	state := p.State()
	execT(t, db, "INSERT INTO transcript_events SELECT * FROM later WHERE seq < 9")
	more, p := poll(t, a, src, state)
	evs = append(evs, more...)
	execT(t, db, "INSERT INTO transcript_events SELECT * FROM later WHERE seq >= 9")
	more, p = poll(t, a, src, p.State())
	evs = append(evs, more...)
	if more, _ := poll(t, a, src, p.State()); len(more) != 0 {
		t.Errorf("a pass with nothing new: %d events", len(more))
	}

	seen := map[string]int{}
	for _, e := range evs {
		seen[e.ID]++
	}
	for _, e := range want {
		seen[e.ID] -= 1
	}
	for id, n := range seen {
		if n != 0 {
			t.Errorf("event %s: %+d against one full pass", id, n)
		}
	}
	if got, w := summarize(evs), summarize(want); string(transcripttest.MustJSON(t, got)) != string(transcripttest.MustJSON(t, w)) {
		t.Errorf("incremental passes differ from one pass:\n%s", transcripttest.MustJSON(t, got))
	}
}

// A rewrite (OpenClaw renews the generation) is read again from the start: the same ids, the
// rewritten figures.
func TestPoll_Rewrite(t *testing.T) {
	path, db := copyDB(t, fixDB)
	a := New(nil)
	src := dbSrc(t, path)
	first, p := poll(t, a, src, nil)
	execT(t, db, `UPDATE transcript_events SET event_json = replace(event_json, 'AGENTS.md', 'TRIMMED.md')
	  WHERE session_id = ? AND seq = 6`, sessChat)
	if evs, _ := poll(t, a, src, p.State()); len(evs) != 0 {
		t.Fatalf("a change without a new generation was read: %d events", len(evs))
	}
	execT(t, db, "UPDATE transcript_rewrite_watermarks SET generation = 'rewritten' WHERE session_id = ?", sessChat)
	evs, p := poll(t, a, src, p.State())
	firstIDs := map[string]bool{}
	for _, e := range first {
		firstIDs[e.ID] = true
	}
	var out string
	for _, e := range evs {
		if e.SessionID != sessChat || !firstIDs[e.ID] {
			t.Errorf("re-read event %s of session %s is new", e.ID, e.SessionID)
		}
		if e.Action != nil && e.Action.Success != nil {
			out = e.Action.Output
		}
	}
	if !strings.Contains(out, "TRIMMED.md") {
		t.Errorf("rewritten output %q", out)
	}
	if evs, _ := poll(t, a, src, p.State()); len(evs) != 0 {
		t.Errorf("after the re-read: %d events", len(evs))
	}
}

// Rows that do not decode (not JSON, a damaged zstd frame, a row with no event) are counted and
// passed over; the rows around them are read.
func TestPoll_MalformedRows(t *testing.T) {
	path, db := copyDB(t, fixDB)
	a := New(nil)
	src := dbSrc(t, path)
	_, p := poll(t, a, src, nil)
	frame := zstdFrame(t, `{"type":"message","id":"z","timestamp":"2026-12-01T23:10:00.000Z","message":{"role":"user","content":"from a frame","timestamp":1796166600000}}`)
	nav := `{"version":1,"report":{"kind":"canonical"},"navigation":{},"reset":{},"model":{},"modelBytes":0,"modelWithoutCheckpointBytes":0,"withoutCustomDataBytes":0}`
	ins := "INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes, navigation_json) VALUES (?, ?, ?, ?, ?, ?, ?)"
	execT(t, db, ins, sessChat, 100, `{"type":"message","timestamp":`, 1796166600000, nil, nil, nil)
	execT(t, db, ins, sessChat, 101, nil, 1796166600001, []byte{0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3}, 10, nav)
	execT(t, db, ins, sessChat, 102, nil, 1796166600002, frame, 150, nav)
	execT(t, db, ins, sessChat, 103, `{"type":"message","id":"y","timestamp":"2026-12-01T23:10:01.000Z","message":{"role":"user","content":"after","timestamp":1796166601000}}`, 1796166600003, nil, nil, nil)
	evs, p := poll(t, a, src, p.State())
	if st := p.Stats(); st.Malformed != 2 || st.Lines != 4 {
		t.Errorf("stats %+v, want 4 rows, 2 malformed", st)
	}
	var prompts []string
	for _, e := range evs {
		if e.Action != nil && e.Action.Type == event.ActionUserPrompt {
			prompts = append(prompts, e.Action.Target)
		}
	}
	if !slices.Equal(prompts, []string{"from a frame", "after"}) {
		t.Errorf("prompts %q", prompts)
	}
}

func zstdFrame(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(s))
	w.Close()
	return buf.Bytes()
}

// A subagent's session (its window names its parent's session key) belongs to the root session:
// its events carry the root's session id and its own as AgentID. The rows are the spawn
// session's, copied under a child window as the Gateway would write them (subagents need the
// Gateway, which was not run offline).
func TestPoll_Subagent(t *testing.T) {
	path, db := copyDB(t, fixDB)
	const child = "0c0c0c0c-0000-4000-8000-00000000c41d"
	execT(t, db, `INSERT INTO session_windows (session_id, session_key, session_scope, created_at, updated_at, parent_session_key, spawned_by)
	  VALUES (?, 'agent:main:subagent:0c0c', 'conversation', 1796166100000, 1796166100000, 'agent:main:chat', 'agent:main:chat')`, child)
	execT(t, db, `INSERT INTO transcript_events (session_id, seq, event_json, created_at)
	  SELECT ?, seq, replace(event_json, 'call_fake_8', 'call_child_1'), created_at FROM transcript_events WHERE session_id = ? AND event_json IS NOT NULL AND seq < 9`, child, sessChat)
	execT(t, db, `UPDATE transcript_events SET event_json = replace(event_json, '"list the files"', '"child task"') WHERE session_id = ?`, child)
	evs, _ := poll(t, New(nil), dbSrc(t, path), nil)
	var childActs int
	for _, e := range evs {
		if e.SessionID == child {
			t.Errorf("event %s carries the subagent's session id", e.ID)
		}
		if e.Action != nil && e.Action.AgentID == child {
			childActs++
			if e.SessionID != sessChat || !e.Action.Sidechain {
				t.Errorf("subagent action %+v of session %s", e.Action, e.SessionID)
			}
		}
		if e.Session != nil && e.SessionID == sessChat && e.Session.State == event.SessionStarted && e.ID != startedID(sessChat) {
			t.Errorf("the subagent reported a session of its own: %+v", e.Session)
		}
	}
	if childActs != 3 { // the prompt, the exec call and its result
		t.Errorf("%d subagent action events", childActs)
	}
}

func startedID(session string) string {
	return event.ID(Client, string(event.KindSession), session, "started")
}

// A database of an older OpenClaw, before sessions moved into it, holds no transcript: nothing,
// no error.
func TestPoll_NoTranscriptTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), DatabaseName)
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	execT(t, db, "CREATE TABLE auth_profile_store (id TEXT)")
	db.Close()
	evs, p := poll(t, New(nil), dbSrc(t, path), nil)
	if len(evs) != 0 || p.Stats().Lines != 0 {
		t.Errorf("%d events, stats %+v", len(evs), p.Stats())
	}
}

// A session deleted from the database leaves the state; the state stays bounded.
func TestPoll_StateBounded(t *testing.T) {
	path, db := copyDB(t, fixDB)
	a := New(nil)
	src := dbSrc(t, path)
	_, p := poll(t, a, src, nil)
	execT(t, db, "DELETE FROM transcript_events WHERE session_id = ?", sessAnthropic)
	execT(t, db, "DELETE FROM session_windows WHERE session_id = ?", sessAnthropic)
	_, p = poll(t, a, src, p.State())
	if _, ok := p.st.Sessions[sessAnthropic]; ok || len(p.st.Sessions) != 3 {
		t.Errorf("sessions in state: %v", transcripttest.SortedKeys(p.st.Sessions))
	}
	for i := range maxSessions + 10 {
		id := fmt.Sprintf("s%04d", i)
		execT(t, db, "INSERT INTO session_windows (session_id, session_key, session_scope, created_at, updated_at) VALUES (?, ?, 'conversation', ?, ?)",
			id, "agent:main:"+id, 1796166200000+int64(i), 1796166200000+int64(i))
	}
	_, p = poll(t, a, src, p.State())
	if n := len(p.st.Sessions); n != maxSessions {
		t.Errorf("%d sessions in state, want %d", n, maxSessions)
	}
}
