package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/observerhq/observer/pkg/store"
)

// The throttle's record of recomputed projects keeps only those recomputed within ObserveEvery:
// a writer that sees a stream of new projects does not remember each of them.
func TestMemory_Step_ObservedStaysBounded(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &Memory{DB: st.DB, ObserveEvery: time.Nanosecond}
	const projects = 200
	for i := range projects {
		ts := int64(1_700_000_000_000 + i)
		if _, err := st.DB.Exec(`INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state)
			VALUES ('claude-code', ?, ?, ?, ?, 'idle')`, fmt.Sprintf("s-%d", i), fmt.Sprintf("/p/%d", i), ts, ts); err != nil {
			t.Fatal(err)
		}
		p, err := m.Step(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		if p.Projects != 1 {
			t.Fatalf("step %d recomputed %d projects, want 1", i, p.Projects)
		}
		// The session's project was recomputed; the next one brings a project never seen.
		if _, err := st.DB.Exec(`DELETE FROM sessions`); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(m.observed); n > 1 {
		t.Errorf("after %d projects, one at a time, the throttle remembers %d, want at most 1", projects, n)
	}
}

// A project recomputed a moment ago waits for ObserveEvery when Step brings it new epochs, and
// says so (Waiting, not Due); Drain recomputes it at once, but only once no epoch is left due.
func TestMemory_Drain_LiftsTheThrottleOnceNothingIsDue(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	session := func(i int) {
		t.Helper()
		ts := int64(1_700_000_000_000 + i)
		if _, err := st.DB.Exec(`INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state)
			VALUES ('claude-code', ?, '/p', ?, ?, 'idle')`, fmt.Sprintf("s-%d", i), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	m := &Memory{DB: st.DB, ObserveEvery: time.Hour}
	session(0)
	if p, err := m.Step(ctx, 50); err != nil || p.Projects != 1 || p.Pending != 0 {
		t.Fatalf("first step: %+v, %v; want the project recomputed, nothing pending", p, err)
	}
	for i := 1; i <= 3; i++ {
		session(i)
	}
	p, err := m.Step(ctx, 50)
	if err != nil || p.Summaries != 3 || p.Projects != 0 || p.Waiting != 1 || p.Due() != 0 {
		t.Fatalf("a step within ObserveEvery: %+v (due %d), %v; want 3 summaries, the project waiting", p, p.Due(), err)
	}
	// Two epochs due and a drain of one at a time: the first drain step leaves one due and the
	// project waiting; the second summarizes the last and recomputes the project.
	session(4)
	session(5)
	if p, err := m.Drain(ctx, 1); err != nil || p.Summaries != 1 || p.Due() != 1 || p.Projects != 0 {
		t.Fatalf("a drain step with an epoch left due: %+v (due %d), %v; want the project still put off", p, p.Due(), err)
	}
	if p, err := m.Drain(ctx, 1); err != nil || p.Summaries != 1 || p.Projects != 1 || p.Pending != 0 {
		t.Fatalf("the last drain step: %+v, %v; want the project recomputed, nothing pending", p, err)
	}
	if p, err := m.Step(ctx, 50); err != nil || p.Pending != 0 || p.Projects != 0 {
		t.Fatalf("a step after the drain: %+v, %v; want nothing to do", p, err)
	}
}

// A drain over a history observes each of its projects once, at its last step: a project first
// seen while epochs are left due waits for them (its observations would change with each step).
func TestMemory_Drain_ObservesEachProjectOnceAtTheEnd(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, project := range []string{"/a", "/b", "/a", "/b"} {
		ts := int64(1_700_000_000_000 + i)
		if _, err := st.DB.Exec(`INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state)
			VALUES ('claude-code', ?, ?, ?, ?, 'idle')`, fmt.Sprintf("s-%d", i), project, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	m := &Memory{DB: st.DB, ObserveEvery: time.Hour}
	for i := range 3 {
		if p, err := m.Drain(ctx, 1); err != nil || p.Summaries != 1 || p.Projects != 0 || p.Due() == 0 {
			t.Fatalf("drain step %d with epochs left due: %+v (due %d), %v; want 1 summary, no project observed yet", i, p, p.Due(), err)
		}
	}
	if p, err := m.Drain(ctx, 1); err != nil || p.Summaries != 1 || p.Projects != 2 || p.Pending != 0 {
		t.Fatalf("the last drain step: %+v, %v; want both projects observed, nothing pending", p, err)
	}
}

// The summaries of a step read each epoch's cost through one statement, compiled once on the
// reading connection, not once per epoch (it took longer to compile than to run). SQLite consults
// a connection's authorizer only while it compiles; group_concat is that query's alone.
func TestMemory_Step_CompilesTheEpochCostOnce(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rdb, err := st.ReadDB() // one connection
	if err != nil {
		t.Fatal(err)
	}
	conn, err := rdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	compiled := 0
	conn.Raw(func(dc any) error {
		dc.(*sqlite3.SQLiteConn).RegisterAuthorizer(func(op int, arg1, arg2, _ string) int {
			if op == sqlite3.SQLITE_FUNCTION && arg2 == "group_concat" {
				compiled++
			}
			return sqlite3.SQLITE_OK
		})
		return nil
	})
	conn.Close()
	for i := range 5 {
		ts := int64(1_700_000_000_000 + i)
		if _, err := st.DB.Exec(`INSERT INTO sessions (client, session_id, project, first_seen, last_seen, state)
			VALUES ('claude-code', ?, '/p', ?, ?, 'idle')`, fmt.Sprintf("s-%d", i), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	m := &Memory{DB: st.DB, Read: rdb}
	for range 2 {
		if _, err := m.Step(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	var made int
	if err := st.DB.QueryRow(`SELECT count(*) FROM session_summaries`).Scan(&made); err != nil {
		t.Fatal(err)
	}
	if made != 5 || compiled != 1 {
		t.Errorf("%d summaries made, the cost query compiled %d times; want 5 and once", made, compiled)
	}
}
