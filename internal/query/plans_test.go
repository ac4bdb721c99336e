package query

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func TestPlanProvider(t *testing.T) {
	for _, tc := range []struct{ client, model, want string }{
		{"claude-code", "claude-sonnet-4-5-20250929", "anthropic"},
		{"claude-code", "<synthetic>", UnknownProvider},
		{"codex", "gpt-5.2-codex", "openai"},
		{"gemini-cli", "gemini-2.5-pro", "google"},
		{"opencode", "openrouter/anthropic/claude-sonnet-4.5", "anthropic"},
		{"copilot-cli", "claude-sonnet-4.5", "github"}, // Copilot's plan pays, whatever the model
		{"copilot-vscode", "gpt-5", "github"},
		{"aider", "", UnknownProvider},
		{"aider", "my-local-llama", UnknownProvider},
	} {
		if got := PlanProvider(tc.client, tc.model); got != tc.want {
			t.Errorf("PlanProvider(%q, %q) = %q, want %q", tc.client, tc.model, got, tc.want)
		}
	}
}

// TestPlanValue_Months lays turns of three providers, one of them unknown, over two months: each
// month's rows add up to Cost's total for the month, a provider with a plan gets its ratio, the
// others none, and the unknown model's turns are kept under "unknown".
func TestPlanValue_Months(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	oct := time.Date(2026, 10, 20, 12, 0, 0, 0, time.Local)
	nov := time.Date(2026, 11, 2, 12, 0, 0, 0, time.Local)
	tok := event.Tokens{Input: 100, Output: 10}
	evs := []event.Event{
		turn("p1", "claude-code", "c1", "claude-sonnet-4-5", "msg_1", oct, tok, 30),
		usage("u1", "claude-code", "c1", "/p", "claude-sonnet-4-5", "msg_1", oct, tok, 29), // the same turn: once
		usage("u2", "claude-code", "c1", "/p", "claude-opus-4-5", "msg_2", nov, tok, 50),
		usage("u3", "codex", "x1", "/q", "gpt-5.2-codex", "", nov.Add(time.Hour), tok, 7),
		usage("u4", "aider", "a1", "/q", "my-local-llama", "", nov.Add(2*time.Hour), tok, 0),
		usage("u5", "copilot-cli", "g1", "/q", "claude-sonnet-4.5", "", nov.Add(3*time.Hour), tok, 4),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	plans := map[string]Plan{"anthropic": {Name: "max-20x", USDMonth: 200}, "github": {Name: "pro", USDMonth: 10}}
	rep, err := PlanValue(ctx, st.DB, CostQuery{}, plans)
	if err != nil {
		t.Fatal(err)
	}
	want := []PlanRow{
		{Month: "2026-10", Provider: "anthropic", APIUSD: 30, Turns: 1, Reliability: Accurate, Plan: "max-20x", PlanUSD: 200, Ratio: 0.15},
		{Month: "2026-11", Provider: "anthropic", APIUSD: 50, Turns: 1, Reliability: Approximate, Plan: "max-20x", PlanUSD: 200, Ratio: 0.25},
		{Month: "2026-11", Provider: "openai", APIUSD: 7, Turns: 1, Reliability: Approximate},
		{Month: "2026-11", Provider: "github", APIUSD: 4, Turns: 1, Reliability: Approximate, Plan: "pro", PlanUSD: 10, Ratio: 0.4},
		{Month: "2026-11", Provider: UnknownProvider, APIUSD: 0, Turns: 1, UnpricedTurns: 0, Reliability: Approximate},
	}
	if !slices.Equal(rep.Rows, want) {
		t.Errorf("rows:\n got %+v\nwant %+v", rep.Rows, want)
	}
	if rep.TotalUSD != 91 || rep.Turns != 5 {
		t.Errorf("total $%v over %d turns, want $91 over 5", rep.TotalUSD, rep.Turns)
	}
	// Without plans: the same dollars, no plan columns.
	bare, err := PlanValue(ctx, st.DB, CostQuery{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range bare.Rows {
		if r.Plan != "" || r.PlanUSD != 0 || r.Ratio != 0 || r.APIUSD != want[i].APIUSD {
			t.Errorf("row %d without plans: %+v", i, r)
		}
	}
}

// TestPlanValue_Corpus: on the corpus, every local month's rows add up to Cost's total for that
// month, and all months to Cost's total, turns and dollars, whether the rollups answer or not.
func TestPlanValue_Corpus(t *testing.T) {
	st := corpusStore(t)
	ctx := context.Background()
	plans := map[string]Plan{"anthropic": {Name: "max-20x", USDMonth: 200}, "openai": {Name: "pro", USDMonth: 200}}
	for _, rolled := range []bool{true, false} {
		useRollups = rolled
		rep, err := PlanValue(ctx, st.DB, CostQuery{}, plans)
		useRollups = true
		if err != nil {
			t.Fatal(err)
		}
		total, err := Cost(ctx, st.DB, CostQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if total.Total.Turns == 0 || len(rep.Rows) == 0 {
			t.Fatal("the corpus gave no turns")
		}
		if rep.Turns != total.Total.Turns || !nearUSD(rep.TotalUSD, total.Total.CostUSD) {
			t.Errorf("rollups %v: all months $%.6f over %d turns, Cost $%.6f over %d", rolled, rep.TotalUSD, rep.Turns, total.Total.CostUSD, total.Total.Turns)
		}
		months := map[string][]PlanRow{}
		for _, r := range rep.Rows {
			months[r.Month] = append(months[r.Month], r)
			if plan, ok := plans[r.Provider]; ok {
				if r.Plan != plan.Name || r.PlanUSD != plan.USDMonth || !nearUSD(r.Ratio, r.APIUSD/plan.USDMonth) {
					t.Errorf("%s %s: plan %q $%v ratio %v, want %q $%v ratio %v", r.Month, r.Provider, r.Plan, r.PlanUSD, r.Ratio, plan.Name, plan.USDMonth, r.APIUSD/plan.USDMonth)
				}
			} else if r.Plan != "" || r.Ratio != 0 {
				t.Errorf("%s %s has no plan, got %+v", r.Month, r.Provider, r)
			}
		}
		for m, rows := range months {
			start, err := time.ParseInLocation("2006-01", m, time.Local)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Cost(ctx, st.DB, CostQuery{Filter: Filter{Since: start, Until: start.AddDate(0, 1, 0)}})
			if err != nil {
				t.Fatal(err)
			}
			var usd float64
			var turns int64
			for _, r := range rows {
				usd += r.APIUSD
				turns += r.Turns
			}
			if turns != c.Total.Turns || !nearUSD(usd, c.Total.CostUSD) {
				t.Errorf("rollups %v: %s: providers $%.6f over %d turns, Cost $%.6f over %d", rolled, m, usd, turns, c.Total.CostUSD, c.Total.Turns)
			}
		}
		t.Logf("rollups %v: %d months, %d rows, $%.2f over %d turns: %+v", rolled, len(months), len(rep.Rows), rep.TotalUSD, rep.Turns, rep.Rows)
	}
}
