package store_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/observerhq/observer/pkg/store"
)

// inTx runs f in a transaction of the writer's connection and commits it.
func inTx(tb testing.TB, db *sql.DB, f func(tx *sql.Tx) error) {
	tb.Helper()
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

func TestReplaceSessionAnalysis(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	rr := []store.SessionReread{{Target: "a.go", Project: "/p", Reads: 3, Stale: 1, Agents: 1, LastTs: 9}}
	rp := []store.SessionRepeat{{Command: "go test", Project: "/p", Runs: 2, Repeats: 1, LastTs: 8}}
	inTx(t, s.DB, func(tx *sql.Tx) error {
		return store.ReplaceSessionAnalysis(ctx, tx, "claude-code", "s1",
			&store.SessionAnalysis{Project: "/p", FirstTs: 1, LastTs: 9, Actions: 5, Score: 80}, rr, rp, 100)
	})
	checkRow(t, s.DB, []any{"/p", int64(5), int64(80), int64(100)},
		`SELECT project, actions, score, analyzed_at FROM session_analysis WHERE client = 'claude-code' AND session_id = 's1'`)
	checkRow(t, s.DB, []any{int64(3), int64(1)}, `SELECT reads, stale FROM session_rereads WHERE target = 'a.go'`)
	checkRow(t, s.DB, []any{int64(2), int64(1)}, `SELECT runs, repeats FROM session_repeats WHERE command = 'go test'`)

	t.Run("NoActionsLeft", func(t *testing.T) {
		inTx(t, s.DB, func(tx *sql.Tx) error {
			return store.ReplaceSessionAnalysis(ctx, tx, "claude-code", "s1", nil, nil, nil, 200)
		})
		for _, table := range []string{"session_analysis", "session_rereads", "session_repeats"} {
			if n := count(t, s.DB, `SELECT count(*) FROM `+table); n != 0 {
				t.Errorf("%s: %d rows left, want none", table, n)
			}
		}
	})
}

func TestReplacePatterns(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	inTx(t, s.DB, func(tx *sql.Tx) error {
		if err := store.MarkPatterns(ctx, tx, "/p"); err != nil {
			return err
		}
		return store.ReplacePatterns(ctx, tx, "/p", []store.Pattern{
			{Kind: "hot_file", Key: "a.go", Detail: "d", Confidence: 0.5, Occurrences: 4, LastSeen: 7}}, 1000)
	})
	checkRow(t, s.DB, []any{0.5, int64(4)}, `SELECT confidence, occurrences FROM patterns WHERE project = '/p' AND key = 'a.go'`)
	checkRow(t, s.DB, []any{int64(0), int64(1000)}, `SELECT dirty, computed_at FROM pattern_state WHERE project = '/p'`)
	inTx(t, s.DB, func(tx *sql.Tx) error { return store.ReplacePatterns(ctx, tx, "/p", nil, 2000) })
	if n := count(t, s.DB, `SELECT count(*) FROM patterns WHERE project = '/p'`); n != 0 {
		t.Errorf("%d patterns left, want none", n)
	}
}

func TestReplaceObservations_ForgottenStayForgotten(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	obs := []store.Observation{
		{Kind: "k", Key: "keep", Text: "kept", Support: 2, Confidence: 0.9, FirstSeen: 1, LastSeen: 2, Evidence: "[]"},
		{Kind: "k", Key: "forget", Text: "forgotten", Support: 2, Confidence: 0.9, FirstSeen: 1, LastSeen: 2, Evidence: "[]"},
		{Kind: "k", Key: "gone", Text: "gone", Support: 1, Confidence: 0.5, FirstSeen: 1, LastSeen: 2, Evidence: "[]"},
	}
	inTx(t, s.DB, func(tx *sql.Tx) error { return store.ReplaceObservations(ctx, tx, "/p", obs, 10) })
	var id int64
	if err := s.DB.QueryRow(`SELECT id FROM observations WHERE key = 'forget'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.ForgetObservation(ctx, s.DB, id); !ok || err != nil {
		t.Fatalf("ForgetObservation = %v, %v; want true, nil", ok, err)
	}
	if ok, err := store.ForgetObservation(ctx, s.DB, id); ok || err != nil {
		t.Fatalf("ForgetObservation again = %v, %v; want false, nil", ok, err)
	}
	// The next computation finds "keep" (changed) and "forget" again, not "gone".
	obs[0].Support, obs[1].Support = 3, 3
	inTx(t, s.DB, func(tx *sql.Tx) error { return store.ReplaceObservations(ctx, tx, "/p", obs[:2], 20) })
	checkRow(t, s.DB, []any{int64(3), int64(20), int64(0)}, `SELECT support, updated_at, forgotten FROM observations WHERE key = 'keep'`)
	checkRow(t, s.DB, []any{int64(2), int64(10), int64(1)}, `SELECT support, updated_at, forgotten FROM observations WHERE key = 'forget'`)
	if n := count(t, s.DB, `SELECT count(*) FROM observations WHERE key = 'gone'`); n != 0 {
		t.Errorf("the observation no longer found is still there")
	}
}

func TestSaveSummaries(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	sum := store.SessionSummary{Client: "codex", SessionID: "s", Epoch: 0, Project: "/p", FirstTs: 1, LastTs: 2,
		EndedBy: "idle", Actions: 3, Text: "extractive", Facts: "{}", Model: "ignored", CostUSD: 9, CreatedAt: 5}
	if err := store.SaveExtractiveSummary(ctx, s.DB, sum); err != nil {
		t.Fatal(err)
	}
	sum.Text, sum.Model, sum.CostUSD = "by a model", "m", 0.25
	if err := store.SaveModelSummary(ctx, s.DB, sum); err != nil {
		t.Fatal(err)
	}
	checkRow(t, s.DB, []any{"extractive", 0.0}, `SELECT text, cost_usd FROM session_summaries WHERE source = 'extractive'`)
	checkRow(t, s.DB, []any{"by a model", "m", 0.25}, `SELECT text, model, cost_usd FROM session_summaries WHERE source = 'model'`)
}

func TestModelTables(t *testing.T) {
	ctx := context.Background()
	s := newWriter(t)
	for range 2 {
		if err := store.EnsureModelTables(ctx, s.DB); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SaveModelState(ctx, s.DB, "codex", "s", 1, 100, "words", 5); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveModelState(ctx, s.DB, "codex", "s", 1, 200, "more words", 6); err != nil {
		t.Fatal(err)
	}
	checkRow(t, s.DB, []any{int64(200), "more words", int64(6)}, `SELECT raw_bytes, text, called_at FROM memory_model_state`)
	for _, c := range []struct {
		id string
		ts int64
	}{{"old", 1}, {"new", 100}, {"new", 200}} {
		if err := store.RecordModelCall(ctx, s.DB, c.id, c.ts, 0.5); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.PruneModelCalls(ctx, s.DB, 50); err != nil {
		t.Fatal(err)
	}
	checkRow(t, s.DB, []any{"new", int64(100)}, `SELECT event_id, ts FROM memory_model_calls`)
}
