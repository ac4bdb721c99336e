package store_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// pruneFixture fills a store with every kind of event spread over ten days around base (tool
// calls with indexed outputs, transcript usage and the proxy turns that replace some of it, by
// message id and by time, sessions, hooks, MCP calls, compressions, quarantined messages), so
// that a cutoff at base splits sessions, hours and message pairs.
func pruneFixture(t *testing.T, base time.Time) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	at := func() time.Time { return base.Add(time.Duration(rng.IntN(10*24*3600)-5*24*3600) * time.Second) }
	for b := 0; b < 20; b++ {
		var evs []event.Event
		for i := 0; i < 30; i++ {
			key := fmt.Sprintf("%d-%d", b, i)
			ts := at()
			sid := fmt.Sprintf("s%d", rng.IntN(6))
			var e event.Event
			switch rng.IntN(7) {
			case 0, 1:
				ok := rng.IntN(3) > 0
				e = newEv(event.KindAction, "a"+key, ts)
				e.Action = &event.Action{Type: event.ActionRunCommand, Tool: "Bash", Success: &ok,
					Output: "output word" + key + " common"}
			case 2:
				e = newEv(event.KindTokenUsage, "u"+key, ts)
				e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: int64(rng.IntN(1000))},
					MessageID: "msg-" + key, Model: "claude-sonnet-4-5", CostUSD: rng.Float64(), Reliability: event.ReliabilityApproximate}
				if rng.IntN(2) == 0 { // the proxy saw it too, up to 3 hours earlier (perhaps across the cutoff)
					p := newEv(event.KindAPITurn, "p"+key, ts.Add(-time.Duration(rng.IntN(3*3600))*time.Second))
					p.SessionID, p.Project = sid, ""
					p.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 10, Output: 5}, Provider: "anthropic",
						Model: "claude-sonnet-4-5", MessageID: "msg-" + key, Status: 200, CostUSD: 0.5, Reliability: event.ReliabilityAccurate}
					evs = append(evs, p)
				}
			case 3:
				e = newEv(event.KindAPITurn, "q"+key, ts)
				e.Project = ""
				e.APITurn = &event.APITurn{Tokens: event.Tokens{Input: 1, Output: 2}, Provider: "openai", Model: "gpt-5",
					Status: 200, CostUSD: 0.1, Reliability: event.ReliabilityAccurate}
			case 4:
				e = newEv(event.KindSession, "s"+key, ts)
				e.Session = &event.Session{State: "active"}
			case 5:
				e = hookEv("h"+key, ts, "Stop")
			case 6:
				if rng.IntN(2) == 0 {
					e = newEv(event.KindMCPCall, "m"+key, ts)
					e.MCPCall = &event.MCPCall{Server: "fs", Tool: "read"}
				} else {
					e = newEv(event.KindCompression, "c"+key, ts)
					e.Compression = &event.Compression{Mechanism: "compact"}
				}
			}
			e.SessionID = sid
			evs = append(evs, e)
		}
		var rej []store.Rejected
		if b%4 == 0 {
			when := at()
			s.Now = func() time.Time { return when }
			rej = []store.Rejected{{Subject: "observer.v1.x.y", Reason: "test", Data: []byte("{")}}
		}
		write(t, s, evs, rej)
	}
	// A session and project seen only before the cutoff: they go with their events.
	old := base.Add(-72 * time.Hour)
	a := newEv(event.KindAction, "old-a", old)
	a.Action = &event.Action{Type: event.ActionReadFile, Tool: "Read", Output: "old output"}
	p := newEv(event.KindAPITurn, "old-p", old.Add(time.Minute))
	p.Project = ""
	p.APITurn = &event.APITurn{Provider: "anthropic", Model: "claude-sonnet-4-5", Status: 200, Reliability: event.ReliabilityAccurate}
	for _, e := range []*event.Event{&a, &p} {
		e.SessionID, e.Project = "old-session", map[bool]string{true: "/old/proj"}[e.Kind == event.KindAction]
	}
	write(t, s, []event.Event{a, p}, nil)
	s.Now = time.Now
	if _, err := s.IndexOutputs(ctx, 1<<30); err != nil {
		t.Fatal(err)
	}
	return s
}

func countWhere(t *testing.T, s *store.Store, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := s.DB.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestStore_Prune: a dry run counts exactly what the prune then deletes; nothing older than the
// cutoff is left and nothing newer is touched; the rollups equal a rebuild from the raw rows
// that are left; the full-text index loses the pruned outputs and stays consistent; small chunks
// give the same result as one big one.
func TestStore_Prune(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 4, 10, 10, 59, 45, 0, time.UTC) // 15 s before an hour's end: turns join across it
	s := pruneFixture(t, base)
	cut := base.UnixMilli()
	timeCol := map[string]string{"quarantine": "received_at"}
	tables := []string{"actions", "token_usage", "api_turns", "compression_events", "hook_events", "mcp_calls", "session_events", "quarantine"}
	newer := map[string]int64{}
	for _, tb := range tables {
		col := timeCol[tb]
		if col == "" {
			col = "ts"
		}
		old := countWhere(t, s, "SELECT count(*) FROM "+tb+" WHERE "+col+" < ?", cut)
		newer[tb] = countWhere(t, s, "SELECT count(*) FROM "+tb+" WHERE "+col+" >= ?", cut)
		if old == 0 || newer[tb] == 0 {
			t.Fatalf("fixture: %s has %d rows before the cutoff and %d after; want both", tb, old, newer[tb])
		}
	}
	// A pruned and a kept output, by a term only each has.
	var gone, kept string
	if err := s.DB.QueryRow(`SELECT a.event_id FROM actions a WHERE a.ts < ? LIMIT 1`, cut).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.QueryRow(`SELECT a.event_id FROM actions a WHERE a.ts >= ? LIMIT 1`, cut).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	term := func(id string) string {
		var out string
		if err := s.DB.QueryRow(`SELECT unpack(output) FROM action_outputs WHERE event_id = ?`, id).Scan(&out); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`"%s"`, out[len("output "):len(out)-len(" common")])
	}
	goneTerm, keptTerm := term(gone), term(kept)

	dry, err := s.Prune(ctx, store.PruneOptions{Before: base, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		col := timeCol[tb]
		if col == "" {
			col = "ts"
		}
		if n := countWhere(t, s, "SELECT count(*) FROM "+tb+" WHERE "+col+" < ?", cut); n != dry.Deleted[tb] {
			t.Errorf("dry run counts %d %s, %d are older than the cutoff", dry.Deleted[tb], tb, n)
		}
	}
	if dry.Deleted["action_outputs"] == 0 || dry.Deleted["sessions"] != 1 || dry.Deleted["projects"] != 1 {
		t.Errorf("dry run: %+v", dry.Deleted)
	}
	if countWhere(t, s, "SELECT count(*) FROM actions WHERE ts < ?", cut) == 0 {
		t.Fatal("the dry run deleted rows")
	}

	res, err := s.Prune(ctx, store.PruneOptions{Before: base, ChunkSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(res.Deleted, dry.Deleted) || res.Total != dry.Total || res.Total == 0 {
		t.Errorf("prune deleted %v (%d), the dry run said %v (%d)", res.Deleted, res.Total, dry.Deleted, dry.Total)
	}
	if res.RollupHours == 0 {
		t.Error("no rollup hour was recomputed")
	}
	for _, tb := range tables {
		col := timeCol[tb]
		if col == "" {
			col = "ts"
		}
		if n := countWhere(t, s, "SELECT count(*) FROM "+tb+" WHERE "+col+" < ?", cut); n != 0 {
			t.Errorf("%s: %d rows older than the cutoff are left", tb, n)
		}
		if n := countWhere(t, s, "SELECT count(*) FROM "+tb); n != newer[tb] {
			t.Errorf("%s: %d rows left, want the %d newer ones", tb, n, newer[tb])
		}
	}
	if n := countWhere(t, s, `SELECT count(*) FROM action_outputs o WHERE NOT EXISTS (SELECT 1 FROM actions a WHERE a.event_id = o.event_id)`); n != 0 {
		t.Errorf("%d outputs of pruned actions are left", n)
	}
	if n := countWhere(t, s, `SELECT count(*) FROM sessions WHERE last_seen < ?`, cut); n != 0 {
		t.Errorf("%d sessions last seen before the cutoff are left", n)
	}
	if n := countWhere(t, s, `SELECT count(*) FROM sessions`); n != 6 {
		t.Errorf("%d sessions left, want the 6 seen after the cutoff", n)
	}

	got := dumpRollups(t, s)
	if err := s.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("after prune the rollups (%d rows) differ from a rebuild (%d rows)", len(got), len(want))
	}

	if _, err := s.DB.Exec(`INSERT INTO tool_output_fts (tool_output_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("full-text index after prune: %v", err)
	}
	if n := countWhere(t, s, `SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH ?`, goneTerm); n != 0 {
		t.Errorf("a pruned output is still found by %s", goneTerm)
	}
	if n := countWhere(t, s, `SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH ?`, keptTerm); n != 1 {
		t.Errorf("a kept output is found %d times by %s, want 1", n, keptTerm)
	}
	if n, m := countWhere(t, s, `SELECT count(*) FROM tool_output_fts WHERE tool_output_fts MATCH 'common'`),
		countWhere(t, s, `SELECT count(*) FROM action_outputs`); n != m {
		t.Errorf("the index finds %d outputs, %d are stored", n, m)
	}

	again, err := s.Prune(ctx, store.PruneOptions{Before: base})
	if err != nil || again.Total != 0 {
		t.Errorf("second prune: %+v, %v; want nothing", again, err)
	}
}

// TestStore_PruneMaxActions keeps the newest N actions, counted the same by a dry run, and
// keeps the rollups exact.
func TestStore_PruneMaxActions(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 4, 10, 10, 0, 0, 0, time.UTC)
	s := pruneFixture(t, base)
	total := countWhere(t, s, "SELECT count(*) FROM actions")
	const keep = 25
	if total <= keep {
		t.Fatalf("fixture has %d actions", total)
	}
	var oldestKept int64
	if err := s.DB.QueryRow(`SELECT ts FROM actions ORDER BY ts DESC, id DESC LIMIT 1 OFFSET ?`, keep-1).Scan(&oldestKept); err != nil {
		t.Fatal(err)
	}
	outputs := countWhere(t, s, "SELECT count(*) FROM action_outputs")
	dry, err := s.Prune(ctx, store.PruneOptions{MaxActions: keep, DryRun: true})
	if err != nil || dry.Deleted["actions"] != total-keep || dry.Deleted["action_outputs"] != total-keep {
		t.Fatalf("dry run: %+v, %v; want %d actions and outputs", dry.Deleted, err, total-keep)
	}
	res, err := s.Prune(ctx, store.PruneOptions{MaxActions: keep, ChunkSize: 10})
	if err != nil || !maps.Equal(res.Deleted, dry.Deleted) {
		t.Fatalf("prune: %+v, %v; the dry run said %+v", res.Deleted, err, dry.Deleted)
	}
	if n := countWhere(t, s, "SELECT count(*) FROM actions"); n != keep {
		t.Errorf("%d actions left, want %d", n, keep)
	}
	if n := countWhere(t, s, "SELECT count(*) FROM actions WHERE ts < ?", oldestKept); n != 0 {
		t.Errorf("%d actions older than the newest %d are left", n, keep)
	}
	if n := countWhere(t, s, "SELECT count(*) FROM action_outputs"); n != outputs-(total-keep) {
		t.Errorf("%d outputs left, want %d", n, outputs-(total-keep))
	}
	if n := countWhere(t, s, "SELECT count(*) FROM token_usage"); n == 0 {
		t.Error("--max-actions deleted usage")
	}
	got := dumpRollups(t, s)
	if err := s.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
		t.Errorf("after prune the rollups (%d rows) differ from a rebuild (%d rows)", len(got), len(want))
	}
}

// TestStore_PruneDryRunReadOnly: a dry run works on a read-only store (while a writer holds it).
func TestStore_PruneDryRunReadOnly(t *testing.T) {
	base := time.Date(2026, 4, 10, 10, 0, 0, 0, time.UTC)
	w := pruneFixture(t, base)
	r := openReader(t, w.Path())
	res, err := r.Prune(context.Background(), store.PruneOptions{Before: base, MaxActions: 5, DryRun: true})
	if err != nil || res.Deleted["actions"] == 0 {
		t.Fatalf("dry run on a reader: %+v, %v", res, err)
	}
	if _, err := r.Prune(context.Background(), store.PruneOptions{Before: base}); err == nil {
		t.Error("a prune through a read-only store succeeded")
	}
}

func TestLatestSchemaVersion(t *testing.T) {
	s := newWriter(t)
	v, err := s.SchemaVersion(context.Background())
	if err != nil || v != store.LatestSchemaVersion() || v < 5 {
		t.Errorf("a new store is at version %d (%v); LatestSchemaVersion says %d", v, err, store.LatestSchemaVersion())
	}
}
