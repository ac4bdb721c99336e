package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// TestCost_ModelAndLast: a model filter gives that model's row of the same report grouped by
// model, and Last (read raw) gives the same figures as the rollups, each row with the time of its
// latest turn, for random filters on a random hub-like store.
func TestCost_ModelAndLast(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 32))
	st, times := randomStore(t, rng)
	ctx := context.Background()
	values := map[string][]string{}
	for k, col := range map[string]string{"project": "project", "client": "client", "session": "session_id", "member": "member"} {
		values[k] = distinct(t, st, col)
	}
	models := distinct(t, st, "model")

	// Every turn's latest time per member and model, from the raw turns.
	latest := map[[2]string]int64{}
	rows, err := st.DB.Query("SELECT member, model, max(ts) FROM ("+fmt.Sprintf(store.MemberTurnsSQL, "1", "1")+") GROUP BY member, model", window)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var member, model string
		var ts int64
		if err := rows.Scan(&member, &model, &ts); err != nil {
			t.Fatal(err)
		}
		latest[[2]string{member, model}] = ts
	}
	rows.Close()
	all, err := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"member", "model"}, Last: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Rows) != len(latest) {
		t.Fatalf("%d rows by member and model, the raw turns have %d", len(all.Rows), len(latest))
	}
	for _, r := range all.Rows {
		if want := latest[[2]string{r.Member, r.Model}]; r.LastTS != want {
			t.Errorf("member %q, model %s: last turn at %d, the raw turns say %d", r.Member, r.Model, r.LastTS, want)
		}
	}

	for range 60 {
		f := randomFilter(rng, times, values)
		byModel, err := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"model"}, Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range models {
			one, err := Cost(ctx, st.DB, CostQuery{Filter: f, Model: m})
			if err != nil {
				t.Fatal(err)
			}
			var want CostRow
			for _, r := range byModel.Rows {
				if r.Model == m {
					want = r
				}
			}
			if !sumOf(one.Total).equal(sumOf(want)) {
				t.Errorf("model %s, %+v: %+v, the report by model says %+v", m, f, sumOf(one.Total), sumOf(want))
			}
		}
		last, err := Cost(ctx, st.DB, CostQuery{GroupBy: []string{"model"}, Filter: f, Last: true})
		if err != nil {
			t.Fatal(err)
		}
		if !sumOf(last.Total).equal(sumOf(byModel.Total)) || len(last.Rows) != len(byModel.Rows) {
			t.Errorf("%+v: with Last %d rows, %+v; without %d rows, %+v", f, len(last.Rows), sumOf(last.Total), len(byModel.Rows), sumOf(byModel.Total))
		}
		for _, r := range last.Rows {
			if r.LastTS == 0 || !f.Since.IsZero() && r.LastTS < f.Since.UnixMilli() || !f.Until.IsZero() && r.LastTS >= f.Until.UnixMilli() {
				t.Errorf("%+v: model %s's last turn at %d is outside the window", f, r.Model, r.LastTS)
			}
			if r.LastTS > latest[[2]string{f.Member, r.Model}] && f.Member != "" {
				t.Errorf("%+v: model %s's last turn at %d is after the member's last", f, r.Model, r.LastTS)
			}
		}
		if last.Total.LastTS != 0 && len(last.Rows) == 0 {
			t.Errorf("%+v: a total's last turn without rows", f)
		}
	}
}
