package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

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
