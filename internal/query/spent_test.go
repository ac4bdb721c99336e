package query

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// TestSpent_EqualsRunsTotal: whatever the window (whole hours or not), the filters and the
// source (rollups or raw rows), Spent is Run's total dollars.
func TestSpent_EqualsRunsTotal(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	var evs []event.Event
	for i := range 200 {
		at := t0.Add(time.Duration(i*131) * time.Second)
		client, sess, msg := "claude-code", fmt.Sprintf("c%d", i%3), fmt.Sprintf("msg_%d", i)
		if i%4 == 0 {
			client, sess, msg = "codex", "x1", ""
		}
		tok := event.Tokens{Input: int64(i), Output: 1}
		evs = append(evs, usage(fmt.Sprintf("u%d", i), client, sess, fmt.Sprintf("/p%d", i%2), "m", msg, at, tok, float64(i)/100))
		if i%3 == 0 { // also seen by the proxy: counted once, at its figure
			pm := msg
			if pm == "" {
				pm = fmt.Sprintf("resp_%d", i)
			}
			evs = append(evs, turn(fmt.Sprintf("p%d", i), client, sess, "m", pm, at.Add(-10*time.Second), tok, float64(i)/70))
		}
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	windows := [][2]time.Time{{}, {t0.Add(17 * time.Minute), time.Time{}}, {t0.Add(time.Hour), t0.Add(4 * time.Hour)},
		{t0.Add(59 * time.Minute), t0.Add(3*time.Hour + 10*time.Second)}, {t0.Add(61 * time.Minute), t0.Add(62 * time.Minute)}}
	for _, rollups := range []bool{true, false} {
		useRollups = rollups
		for _, w := range windows {
			for _, f := range []CostQuery{{}, {Filter: Filter{Client: "codex"}}, {Filter: Filter{Project: "/p1"}}, {Filter: Filter{SessionID: "c1"}}, {Filter: Filter{SessionIDs: []string{"c0", "x1"}}}, {GroupBy: []string{"day"}}} {
				f.Since, f.Until = w[0], w[1]
				rep, err := Cost(ctx, st.DB, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Spent(ctx, st.DB, f)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got-rep.Total.CostUSD) > 1e-9 {
					t.Errorf("rollups %v, %+v: Spent $%.6f, Run $%.6f", rollups, f, got, rep.Total.CostUSD)
				}
			}
		}
	}
	useRollups = true
}
