package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// mergingBatches are random batches whose ids repeat within and across batches (a call and its
// result, in either order and in different hours; a message's usage growing; proxy turns replacing
// transcript rows), over three hours and three sessions.
func mergingBatches(rng *rand.Rand, n int) [][]event.Event {
	base := time.Date(2026, 5, 1, 9, 58, 0, 0, time.UTC)
	at := func() time.Time { return base.Add(time.Duration(rng.IntN(3*3600)) * time.Second) }
	var batches [][]event.Event
	for range n {
		var evs []event.Event
		for range 25 {
			key := fmt.Sprintf("k%d", rng.IntN(120))
			var e event.Event
			switch rng.IntN(4) {
			case 0, 1:
				ok := rng.IntN(3) > 0
				a := event.Action{Type: event.ActionType([]string{"read_file", "run_command", "edit_file"}[rng.IntN(3)]), Tool: "Bash",
					Target: "t" + key, DurationMs: int64(rng.IntN(50))}
				if rng.IntN(2) == 0 {
					a.Success = &ok
				}
				e = newEv(event.KindAction, "a"+key, at())
				e.Action = &a
			case 2:
				e = newEv(event.KindTokenUsage, "u"+key, at())
				e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: int64(rng.IntN(100)), Output: int64(rng.IntN(1000))},
					MessageID: "msg-" + key, Model: "claude-sonnet-4-5", CostUSD: rng.Float64(), Reliability: event.ReliabilityApproximate, Origin: "transcript"}
			case 3:
				e = newEv(event.KindAPITurn, "p"+key, at())
				e.Project = ""
				e.APITurn = &event.APITurn{Tokens: event.Tokens{Input: int64(rng.IntN(100)), Output: int64(rng.IntN(1000))},
					Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-sonnet-4-5", MessageID: "msg-" + key, Status: 200,
					CostUSD: rng.Float64(), Reliability: event.ReliabilityAccurate}
			}
			e.SessionID = []string{"s1", "s2", "s3"}[rng.IntN(3)]
			evs = append(evs, e)
		}
		batches = append(batches, evs)
	}
	return batches
}

// TestWriteBatch_BulkThenCatchUp: batches written on the bulk path leave the rollups of their
// hours pending (recorded in the store, counted by RollupsPending) and the raw rows exactly as the
// live path does; CatchUpRollups, a few hours at a time, then brings the rollups to what a rebuild
// gives, and live batches in between keep them exact for their own hours.
func TestWriteBatch_BulkThenCatchUp(t *testing.T) {
	ctx := context.Background()
	open := func(name string) *store.Store {
		s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	bulk, live := open("bulk.db"), open("live.db")
	batches := mergingBatches(rand.New(rand.NewPCG(3, 4)), 30)
	raw := func(s *store.Store) [][]any {
		var out [][]any
		for _, q := range []string{
			"SELECT event_id, ts, type, target, success, duration_ms FROM actions ORDER BY event_id",
			"SELECT event_id, ts, input_tokens, output_tokens FROM token_usage ORDER BY event_id",
			"SELECT event_id, ts, session_id, transcript_message_id FROM api_turns ORDER BY event_id",
			"SELECT client, session_id, since_ts FROM analysis_dirty ORDER BY client, session_id",
		} {
			rows, err := s.DB.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				out = append(out, vals)
			}
			rows.Close()
		}
		return out
	}
	for i, evs := range batches {
		// Runs of bulk batches with a live one every seventh batch.
		isBulk := i%7 != 6
		want, err := live.WriteBatch(ctx, evs, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bulk.WriteBatchWith(ctx, evs, nil, store.WriteOptions{Bulk: isBulk})
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("batch %d: bulk wrote %+v, live %+v", i, got, want)
		}
		if !reflect.DeepEqual(raw(bulk), raw(live)) {
			t.Fatalf("batch %d: the raw rows differ between the bulk and the live path", i)
		}
		if isBulk {
			if n, err := bulk.RollupsPending(ctx); err != nil || n == 0 {
				t.Fatalf("batch %d: %d hours pending after a bulk batch (%v)", i, n, err)
			}
		}
	}
	for {
		left, err := bulk.CatchUpRollups(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
	}
	if n, _ := bulk.RollupsPending(ctx); n != 0 {
		t.Fatalf("%d hours still pending after the catch-up", n)
	}
	got := dumpRollups(t, bulk)
	if want := dumpRollups(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("caught-up rollups (%d rows) differ from those the live path kept (%d rows)", len(got), len(want))
	}
	if err := bulk.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if want := dumpRollups(t, bulk); !reflect.DeepEqual(got, want) {
		t.Fatalf("caught-up rollups (%d rows) differ from a rebuild (%d rows)", len(got), len(want))
	}
}

// TestWriteBatch_BulkPendingSurvivesReopen: the hours a bulk batch left pending are in the store,
// so a writer that stopped before its catch-up (killed) finds them when it opens the store again.
func TestWriteBatch_BulkPendingSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "o.db")
	s, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	evs := mergingBatches(rand.New(rand.NewPCG(5, 6)), 1)[0]
	if _, err := s.WriteBatchWith(ctx, evs, nil, store.WriteOptions{Bulk: true}); err != nil {
		t.Fatal(err)
	}
	var rolled int64
	s.DB.QueryRow("SELECT count(*) FROM actions_hourly").Scan(&rolled)
	if rolled != 0 {
		t.Fatalf("a bulk batch updated actions_hourly (%d rows)", rolled)
	}
	s.Close()
	if s, err = store.OpenWriter(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.RollupsPending(ctx)
	if err != nil || n == 0 {
		t.Fatalf("pending hours after reopening: %d, %v", n, err)
	}
	if left, err := s.CatchUpRollups(ctx, 1000); err != nil || left != 0 {
		t.Fatalf("catch-up: %d left, %v", left, err)
	}
	got := dumpRollups(t, s)
	if err := s.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if want := dumpRollups(t, s); len(got) == 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("caught-up rollups (%d rows) differ from a rebuild (%d rows)", len(got), len(want))
	}
}
