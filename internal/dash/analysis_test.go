package dash

import (
	"context"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

type analysisJSON struct {
	Store         bool               `json:"store"`
	Total         Totals             `json:"total"`
	Prior         *Totals            `json:"prior"`
	ChangePct     *float64           `json:"change_pct"`
	PerTurnUSD    float64            `json:"per_turn_usd"`
	ActiveHours   int64              `json:"active_hours"`
	BurnPerHour   float64            `json:"burn_per_active_hour_usd"`
	CacheSavedUSD float64            `json:"cache_savings_usd"`
	CacheHitRate  float64            `json:"cache_hit_rate"`
	TopSessions   []ExpensiveSess    `json:"top_sessions"`
	Heatmap       [7][24]HeatCell    `json:"heatmap"`
	Cheaper       []CheaperCandidate `json:"cheaper"`
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

// TestAPI_Analysis: the Analysis figures recomputed from query.Cost on the corpus store.
func TestAPI_Analysis(t *testing.T) {
	path := corpusStore(t)
	st := openReader(t, path)
	ctx := context.Background()
	var last int64
	if err := st.DB.QueryRow("SELECT max(ts) FROM token_usage").Scan(&last); err != nil {
		t.Fatal(err)
	}
	// Now sits a day after the last turn, so a 30-day window and its prior period both hold data
	// when the corpus spans more than the window.
	now := time.UnixMilli(last).Add(24 * time.Hour)
	srv := startServer(t, Options{StorePath: path, Now: func() time.Time { return now }})

	var all analysisJSON
	mustGet(t, srv.URL, "/api/analysis?window=all", &all)
	want, err := query.Cost(ctx, st.DB, query.CostQuery{GroupBy: []string{"hour"}})
	if err != nil {
		t.Fatal(err)
	}
	if want.Total.Turns == 0 {
		t.Fatal("the corpus store has no turns")
	}
	sameTotals(t, "analysis total", all.Total, want.Total)
	if !near(all.PerTurnUSD, want.Total.CostUSD/float64(want.Total.Turns)) {
		t.Errorf("$/turn %v, want %v", all.PerTurnUSD, want.Total.CostUSD/float64(want.Total.Turns))
	}
	if all.ActiveHours != int64(len(want.Rows)) || !near(all.BurnPerHour, want.Total.CostUSD/float64(len(want.Rows))) {
		t.Errorf("active hours %d burn %v; query.Cost has %d hours", all.ActiveHours, all.BurnPerHour, len(want.Rows))
	}
	if all.Prior != nil || all.ChangePct != nil {
		t.Errorf("all time has no prior period: %+v", all.Prior)
	}
	var heatTurns int64
	var heatCost float64
	for _, d := range all.Heatmap {
		for _, c := range d {
			heatTurns += c.Turns
			heatCost += c.CostUSD
		}
	}
	if heatTurns != want.Total.Turns || !near(heatCost, want.Total.CostUSD) {
		t.Errorf("heatmap sums to %d turns $%v, want %d $%v", heatTurns, heatCost, want.Total.Turns, want.Total.CostUSD)
	}
	tot := want.Total
	if den := tot.InputTokens + tot.CacheReadTokens + tot.CacheCreationTokens; den > 0 && !near(all.CacheHitRate, float64(tot.CacheReadTokens)/float64(den)) {
		t.Errorf("hit rate %v", all.CacheHitRate)
	}
	if tot.CacheReadTokens > 0 && all.CacheSavedUSD <= 0 {
		t.Errorf("cache reads %d but no savings", tot.CacheReadTokens)
	}

	// Top sessions: the costliest session per query.Cost, its reason a bucket and a share.
	bySess, err := query.Cost(ctx, st.DB, query.CostQuery{GroupBy: []string{"session", "client"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.TopSessions) == 0 || all.TopSessions[0].SessionID != bySess.Rows[0].SessionID || !near(all.TopSessions[0].CostUSD, bySess.Rows[0].CostUSD) {
		t.Fatalf("top session %+v, query.Cost's costliest %+v", all.TopSessions, bySess.Rows[0])
	}
	if all.TopSessions[0].Title == "" || all.TopSessions[0].Title != bySess.Rows[0].Title {
		t.Errorf("the costliest session's title %q, the store's %q", all.TopSessions[0].Title, bySess.Rows[0].Title)
	}
	for _, s := range all.TopSessions {
		if s.CostUSD > 0 && !near(bucketSum(s.Buckets), s.CostUSD) || s.Reason == "" {
			t.Errorf("session %s: buckets %+v reason %q for $%v", s.SessionID, s.Buckets, s.Reason, s.CostUSD)
		}
	}
	for _, c := range all.Cheaper {
		if c.ToolCalls > cheapMaxTools || c.OutputPerTrn > cheapMaxOutput || c.SavingUSD <= 0 || !near(c.CostUSD-c.CheaperUSD, c.SavingUSD) {
			t.Errorf("cheaper candidate breaks the rule: %+v", c)
		}
	}

	// A 30-day window: the prior period is query.Cost over the 30 days before it.
	var w analysisJSON
	mustGet(t, srv.URL, "/api/analysis?window=30d", &w)
	since := now.AddDate(0, 0, -30)
	prior, err := query.Cost(ctx, st.DB, query.CostQuery{Filter: query.Filter{Since: since.Add(-now.Sub(since)), Until: since}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Prior == nil {
		t.Fatal("a 30-day window has a prior period")
	}
	sameTotals(t, "prior period", *w.Prior, prior.Total)
	cur, _ := query.Cost(ctx, st.DB, query.CostQuery{Filter: query.Filter{Since: since}})
	sameTotals(t, "30d total", w.Total, cur.Total)
	if prior.Total.CostUSD > 0 {
		if w.ChangePct == nil || !near(*w.ChangePct, 100*(cur.Total.CostUSD-prior.Total.CostUSD)/prior.Total.CostUSD) {
			t.Errorf("change %v", w.ChangePct)
		}
	}
	t.Logf("all: $%.4f over %d turns, $%.4f/turn, %d active hours, $%.4f/h, cache saved $%.4f, hit %.3f, %d cheaper candidates; 30d $%.4f vs prior $%.4f",
		all.Total.CostUSD, all.Total.Turns, all.PerTurnUSD, all.ActiveHours, all.BurnPerHour, all.CacheSavedUSD, all.CacheHitRate, len(all.Cheaper), w.Total.CostUSD, w.Prior.CostUSD)

	for _, bad := range []string{"?window=forever", "?window=7d&x=1", "?client=BAD%20NAME"} {
		if code := get(t, srv.URL, "/api/analysis"+bad, nil); code != 400 {
			t.Errorf("GET /api/analysis%s: %d, want 400", bad, code)
		}
	}
}

// TestCost_SplitFollowsPriceTable: the billing-bucket split uses the price table in force at each
// request (config.toml's overrides change it without a restart), not the one at start.
func TestCost_SplitFollowsPriceTable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	e := event.New(event.KindTokenUsage, "test")
	e.ID, e.Client, e.SessionID, e.Project, e.Time = "u1", "claude-code", "s1", "/p", time.Now().Add(-time.Hour)
	e.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1000, Output: 1000}, Model: "house-model", MessageID: "m1",
		CostUSD: 1, Reliability: event.ReliabilityApproximate}
	if _, err := st.WriteBatch(ctx, []event.Event{e}, nil); err != nil {
		t.Fatal(err)
	}
	st.Close()
	var cur atomic.Pointer[pricing.Table]
	cur.Store(pricing.Default().WithOverrides(map[string]pricing.Price{"house-model": {Input: 1, Output: 3}}))
	srv := startServer(t, Options{StorePath: path, PriceTable: cur.Load})
	var c struct {
		Buckets Buckets `json:"buckets"`
	}
	mustGet(t, srv.URL, "/api/cost?window=all", &c)
	if math.Abs(c.Buckets.Input-0.25) > 1e-9 || math.Abs(c.Buckets.Output-0.75) > 1e-9 {
		t.Errorf("split at 1:3 = %+v, want input 0.25 output 0.75", c.Buckets)
	}
	cur.Store(pricing.Default().WithOverrides(map[string]pricing.Price{"house-model": {Input: 1, Output: 1}}))
	mustGet(t, srv.URL, "/api/cost?window=all", &c)
	if math.Abs(c.Buckets.Input-0.5) > 1e-9 || math.Abs(c.Buckets.Output-0.5) > 1e-9 {
		t.Errorf("split after the table changed to 1:1 = %+v, want 0.5 and 0.5", c.Buckets)
	}
}
