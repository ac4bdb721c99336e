package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// dumpRollups reads the rollup tables whole, in key order.
func dumpRollups(t *testing.T, s *store.Store) [][]any {
	t.Helper()
	var out [][]any
	for _, q := range []string{
		"SELECT * FROM usage_hourly ORDER BY hour, client, session_id, project, model",
		"SELECT * FROM actions_hourly ORDER BY hour, client, session_id, project, type, tool",
		"SELECT * FROM actions_daily ORDER BY day, client, type, tool",
		"SELECT * FROM usage_daily ORDER BY day, client, project, model",
		"SELECT * FROM usage_sessions ORDER BY client, session_id, project, model",
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
			for i, v := range vals { // sums of floats may differ in the last bits by order
				if f, ok := v.(float64); ok {
					vals[i] = fmt.Sprintf("%.9f", f)
				}
			}
			out = append(out, vals)
		}
		rows.Close()
	}
	return out
}

// writeEqualsRebuild writes the batches in turn and checks after each that the rollups the writer
// kept equal a rebuild from the raw rows.
func writeEqualsRebuild(t *testing.T, s *store.Store, batches [][]event.Event) {
	t.Helper()
	for i, evs := range batches {
		write(t, s, evs, nil)
		got := dumpRollups(t, s)
		if err := s.RebuildRollups(context.Background()); err != nil {
			t.Fatal(err)
		}
		if want := dumpRollups(t, s); !reflect.DeepEqual(got, want) {
			t.Fatalf("after batch %d the kept rollups differ from a rebuild:\n got %v\nwant %v", i, got, want)
		}
	}
}

// TestRollups_IncrementalEqualsRebuild writes random batches that exercise every rule the rollups
// must follow (a call and its result in different hours and either order, a message's usage
// growing across lines, a proxy turn arriving after the transcript row it replaces, by message id
// and by time near an hour's edge, a session whose project is learned after its proxy turns, a
// session of proxy turns alone until another row joins it) and
// checks after each batch that the rollups the writer kept equal a rebuild from the raw rows, and
// that they sum to the raw totals.
func TestRollups_IncrementalEqualsRebuild(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 5, 1, 9, 58, 0, 0, time.UTC)
	at := func() time.Time { return base.Add(time.Duration(rng.IntN(3*3600)) * time.Second) }
	// px talks through the proxy alone, but for a row of another kind now and then: its hours'
	// sums grow by its turns' until then (addProxyTurns), and are recomputed after.
	sessions := []string{"s1", "s2", "s3", "px"}
	var batches [][]event.Event
	for b := 0; b < 40; b++ {
		var evs []event.Event
		for i := 0; i < 25; i++ {
			sid := sessions[rng.IntN(len(sessions))]
			key := fmt.Sprintf("k%d", rng.IntN(120)) // ids repeat: merges and duplicates
			ts := at()
			var e event.Event
			kind := rng.IntN(4)
			if sid == "px" && rng.IntN(12) > 0 {
				kind = 2
			}
			switch kind {
			case 0:
				ok := rng.IntN(3) > 0
				a := event.Action{Type: event.ActionType([]string{"read_file", "run_command", "edit_file"}[rng.IntN(3)]), Tool: "Bash"}
				if rng.IntN(2) == 0 {
					a.Success = &ok
				}
				e = newEv(event.KindAction, "a"+key, ts)
				e.Action = &a
			case 1:
				e = newEv(event.KindTokenUsage, "u"+key, ts)
				msg := ""
				if rng.IntN(3) > 0 {
					msg = "msg-" + key
				}
				e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: int64(rng.IntN(100)), Output: int64(rng.IntN(1000))},
					MessageID: msg, Model: "claude-sonnet-4-5", CostUSD: rng.Float64(), Reliability: event.ReliabilityApproximate, Origin: "transcript"}
				if rng.IntN(3) == 0 {
					e.TokenUsage.RequestID = "req-" + key
				}
			case 2:
				e = newEv(event.KindAPITurn, "p"+key, ts)
				e.Project = ""
				msg := "msg-" + key
				if rng.IntN(3) == 0 {
					msg = "resp-" + key
				}
				e.APITurn = &event.APITurn{Tokens: event.Tokens{Input: int64(rng.IntN(100)), Output: int64(rng.IntN(1000))},
					Provider: "anthropic", Endpoint: "/v1/messages", Model: "claude-sonnet-4-5", MessageID: msg, Status: 200,
					CostUSD: rng.Float64(), Reliability: event.ReliabilityAccurate}
				switch rng.IntN(4) {
				case 0: // the same request seen by OTLP (its session may differ: joined by request id)
					e.ID = event.ID("store-test", "o"+key)
					e.APITurn.Origin, e.APITurn.MessageID, e.APITurn.RequestID = "otlp", "", "req-"+key
				case 1:
					e.APITurn.RequestID = "req-" + key
				}
			case 3:
				e = newEv(event.KindSession, "s"+key, ts)
				e.Project = fmt.Sprintf("/p/%d", rng.IntN(3))
				e.Session = &event.Session{State: "active"}
			}
			e.SessionID = sid
			evs = append(evs, e)
		}
		batches = append(batches, evs)
	}
	writeEqualsRebuild(t, s, batches)
	var raw, rolled int64
	if err := s.DB.QueryRow("SELECT count(*) FROM actions").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.QueryRow("SELECT sum(actions) FROM actions_hourly").Scan(&rolled); err != nil {
		t.Fatal(err)
	}
	if raw == 0 || raw != rolled {
		t.Fatalf("actions: %d raw, %d in the rollup", raw, rolled)
	}
	if err := s.DB.QueryRow("SELECT sum(actions) FROM actions_daily").Scan(&rolled); err != nil {
		t.Fatal(err)
	}
	if raw != rolled {
		t.Fatalf("actions: %d raw, %d in the daily rollup", raw, rolled)
	}
	var turns, rolledTurns int64
	q := fmt.Sprintf("SELECT count(*) FROM ("+store.TurnsSQL+")", "1", "1")
	if err := s.DB.QueryRow(q, sqlNamed("window", store.JoinWindowMs)).Scan(&turns); err != nil {
		t.Fatal(err)
	}
	if err := s.DB.QueryRow("SELECT sum(turns) FROM usage_hourly").Scan(&rolledTurns); err != nil {
		t.Fatal(err)
	}
	if turns == 0 || turns != rolledTurns {
		t.Fatalf("turns: %d raw, %d in the rollup", turns, rolledTurns)
	}
	for _, table := range []string{"usage_daily", "usage_sessions"} {
		if err := s.DB.QueryRow("SELECT sum(turns) FROM " + table).Scan(&rolledTurns); err != nil {
			t.Fatal(err)
		}
		if turns != rolledTurns {
			t.Fatalf("turns: %d raw, %d in %s", turns, rolledTurns, table)
		}
	}
}

// TestRollups_ProxyTurnsAddedToAnHourThatHasOtherRows: a proxy turn of a session whose hour
// already counts other rows may make them stop counting (a transcript row without a message id
// within JoinWindowMs, an OTLP turn without a request id with the same figures), so that hour is
// recomputed, not added to; an hour of proxy turns alone is added to (and must still agree).
func TestRollups_ProxyTurnsAddedToAnHourThatHasOtherRows(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 5, 1, 10, 20, 0, 0, time.UTC)
	turn := func(key, session string, ts time.Time, in, out int64, origin string) event.Event {
		e := newEv(event.KindAPITurn, key, ts)
		e.SessionID, e.Project = session, ""
		e.APITurn = &event.APITurn{Tokens: event.Tokens{Input: in, Output: out}, Provider: "anthropic",
			Endpoint: "/v1/messages", Model: "claude-sonnet-4-5", Status: 200, CostUSD: 0.25,
			Reliability: event.ReliabilityAccurate, Origin: origin}
		return e
	}
	usage := newEv(event.KindTokenUsage, "u1", at)
	usage.SessionID = "x1"
	usage.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 5, Output: 7}, Model: "claude-sonnet-4-5",
		CostUSD: 0.5, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	batches := [][]event.Event{
		{usage, turn("o1", "x2", at, 9, 11, "otlp"), turn("p0", "x3", at, 1, 2, "")},
		{turn("p1", "x1", at.Add(10*time.Second), 5, 7, ""), turn("p2", "x2", at.Add(11*time.Second), 9, 11, ""),
			turn("p3", "x3", at.Add(12*time.Second), 3, 4, "")},
	}
	writeEqualsRebuild(t, s, batches)
	for session, want := range map[string][3]int64{"x1": {1, 5, 7}, "x2": {1, 9, 11}, "x3": {2, 4, 6}} {
		var got [3]int64
		if err := s.DB.QueryRow(`SELECT sum(turns), sum(input_tokens), sum(output_tokens) FROM usage_hourly
			WHERE session_id = ?`, session).Scan(&got[0], &got[1], &got[2]); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("session %s: turns, input, output %v, want %v", session, got, want)
		}
	}
}

func sqlNamed(name string, v any) any { return sql.Named(name, v) }
