package zcode

import (
	"context"
	"database/sql"
	_ "embed"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// The database is written here with the tables and columns the published readers query (see the
// package doc): testdata/schema.sql, and testdata/rows.sql's session, its subagent's session, and
// their calls.
var (
	//go:embed testdata/schema.sql
	schema string
	//go:embed testdata/rows.sql
	fixtureRows string
)

// newDB writes a ZCode database at dir/db.sqlite in WAL mode, as ZCode keeps it, and returns a
// writer connection to it.
func newDB(tb testing.TB, dir string, stmts ...string) (*sql.DB, string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, DBName)
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("%v\n%s", err, s)
		}
	}
	return db, path
}

func poll(tb testing.TB, path string, state []byte) ([]event.Event, []byte, error) {
	tb.Helper()
	p, err := New(nil).NewParser(transcript.Source{Client: Client, Path: path, Database: true}, state)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.(transcript.Poller).Poll(context.Background())
	return evs, p.State(), err
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

func TestPoll(t *testing.T) {
	_, path := newDB(t, t.TempDir(), schema, fixtureRows)
	evs, _, err := poll(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Client != Client || e.SessionID != "ses_8f2a61c0d4" || e.ID == "" || e.Time.IsZero() || e.Project != "/home/dev/invoicer" {
			t.Fatalf("event %+v: want client zcode, the root session, an id, a time and its directory as project", e)
		}
	}
	usage := byKind(evs, event.KindTokenUsage)
	if len(usage) != 3 {
		t.Fatalf("%d usage events, want the three completed calls (not the failed or the running one)", len(usage))
	}
	u := usage[0].TokenUsage
	if u.Tokens != (event.Tokens{Input: 1830, Output: 412, CacheCreation: 14200, Reasoning: 96}) || u.Model != "glm-4.6" ||
		u.MessageID != "1" || u.CostUSD <= 0 || u.Reliability != event.ReliabilityApproximate || u.AgentID != "" ||
		!usage[0].Time.Equal(time.UnixMilli(1781863201000)) {
		t.Errorf("first call %+v at %v: want the columns as they are (input net of the cache), priced, at started_at", u, usage[0].Time)
	}
	if u := usage[2].TokenUsage; u.Tokens != (event.Tokens{Input: 5100, Output: 380, CacheRead: 3000, Reasoning: 120}) ||
		u.Model != "glm-4.5-air" || u.AgentID != "ses_8f2a61c0e7" {
		t.Errorf("subagent's call %+v: want it under the root session with its own session as agent", u)
	}
	if u := usage[1].TokenUsage; u.Tokens != (event.Tokens{Input: 2210, Output: 655, CacheRead: 14200, CacheCreation: 1900}) {
		t.Errorf("second call %+v", u)
	}
	sess := byKind(evs, event.KindSession)
	if len(sess) != 4 || sess[0].Session.State != event.SessionStarted || sess[0].Session.Cwd != "/home/dev/invoicer" ||
		!sess[0].Time.Equal(time.UnixMilli(1781863200000)) || sess[1].Session.Title != "Add VAT rounding to invoice totals" {
		t.Fatalf("session events %+v: want started at time_created in its directory, the title, one per model", sess)
	}
	if n := len(byKind(evs, event.KindAction)) + len(byKind(evs, event.KindMessage)); n != 0 {
		t.Errorf("%d actions and messages: message and part are not read", n)
	}
}

// A pass from the state a pass left reads nothing new; a call that was still running is read
// when it completes, under an id of its own, and the earlier events keep theirs.
func TestPoll_RereadAndGrowth(t *testing.T) {
	db, path := newDB(t, t.TempDir(), schema, fixtureRows)
	first, state, err := poll(t, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(state) != `{"rowid":4}` {
		t.Errorf("state %s: want the watermark held before the running call (rowid 5)", state)
	}
	again, state2, err := poll(t, path, state)
	if err != nil || len(again) != 0 || string(state2) != string(state) {
		t.Fatalf("re-read: %d events, state %s, %v; want nothing new", len(again), state2, err)
	}
	fresh, _, _ := poll(t, path, nil)
	for i := range first {
		if first[i].ID != fresh[i].ID {
			t.Fatalf("event %d: id %s then %s", i, first[i].ID, fresh[i].ID)
		}
	}
	if _, err := db.Exec(`UPDATE model_usage SET status = 'completed', output_tokens = 230, completed_at = 1781863371000 WHERE rowid = 5`); err != nil {
		t.Fatal(err)
	}
	grown, state3, err := poll(t, path, state)
	if err != nil {
		t.Fatal(err)
	}
	usage := byKind(grown, event.KindTokenUsage)
	if len(usage) != 1 || usage[0].TokenUsage.Tokens != (event.Tokens{Input: 900, Output: 230, CacheRead: 16100}) || string(state3) != `{"rowid":5}` {
		t.Fatalf("after the call completed: %+v, state %s; want its usage only", usage, state3)
	}
	old := map[string]bool{}
	for _, e := range first {
		old[e.ID] = true
	}
	if old[usage[0].ID] {
		t.Errorf("the completed call reuses an id of the first pass")
	}
	for _, e := range grown {
		if e.Kind != event.KindTokenUsage && !old[e.ID] {
			t.Errorf("event %+v: a session event the first pass did not emit", e)
		}
	}
}

// A database that is not ZCode's, or not a database, fails the pass and keeps the state.
func TestPoll_Malformed(t *testing.T) {
	_, path := newDB(t, t.TempDir(), `CREATE TABLE other (x INTEGER)`)
	if evs, state, err := poll(t, path, []byte(`{"rowid":7}`)); err == nil || len(evs) != 0 || string(state) != `{"rowid":7}` {
		t.Errorf("no model_usage: %d events, state %s, err %v; want an error and the state kept", len(evs), state, err)
	} else if !strings.Contains(err.Error(), "model_usage") {
		t.Errorf("error %q does not say what is missing", err)
	}
	bad := filepath.Join(t.TempDir(), DBName)
	if err := os.WriteFile(bad, []byte("not a database"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := poll(t, bad, nil); err == nil {
		t.Error("a file that is not a database read without error")
	}
	p, _ := New(nil).NewParser(transcript.Source{Client: Client, Path: bad, Database: true}, []byte("{garbage"))
	if _, err := p.Record(0, []byte("{}")); err == nil {
		t.Error("Record on a database: want ErrMalformed")
	}
}

func TestDiscover(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	newDB(t, a, schema)
	newDB(t, filepath.Join(b, "db"), schema)
	srcs, err := New([]string{a, b, filepath.Join(t.TempDir(), "absent")}).Discover()
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 2 || srcs[0].Path != filepath.Join(a, DBName) || srcs[1].Path != filepath.Join(b, "db", DBName) || !srcs[0].Database {
		t.Fatalf("Discover: %+v", srcs)
	}
}

func TestDefaultRoots(t *testing.T) {
	t.Setenv(EnvDirs, "")
	home, _ := os.UserHomeDir()
	if got := DefaultRoots(); len(got) != 1 || got[0] != filepath.Join(home, ".zcode", "cli", "db") {
		t.Errorf("DefaultRoots: %v (the same on macOS)", got)
	}
	t.Setenv(EnvDirs, "/tmp/z1"+string(os.PathListSeparator)+"/tmp/z2")
	if got := DefaultRoots(); len(got) != 2 || got[1] != "/tmp/z2" {
		t.Errorf("DefaultRoots with %s: %v", EnvDirs, got)
	}
}
