package dash

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/internal/query"
)

// plansResponse is /api/plans as a browser reads it.
type plansResponse struct {
	Store    bool                  `json:"store"`
	PlansSet bool                  `json:"plans_set"`
	From     string                `json:"from"`
	Report   query.PlanReport      `json:"report"`
	Plans    map[string]query.Plan `json:"plans"`
}

var testPlans = map[string]query.Plan{"anthropic": {Name: "max-20x", USDMonth: 200}}

// TestPlansAPI_Corpus: on the corpus, /api/plans over all time adds up to /api/cost's total, a
// provider with a plan carries its ratio, and without [plans] plans_set is false.
func TestPlansAPI_Corpus(t *testing.T) {
	path := corpusStore(t)
	srv := startServer(t, Options{StorePath: path, Version: "test", Plans: func() map[string]query.Plan { return testPlans }})
	var pv plansResponse
	mustGet(t, srv.URL, "/api/plans?window=all", &pv)
	var co struct {
		Total Totals `json:"total"`
	}
	mustGet(t, srv.URL, "/api/cost?window=all", &co)
	if !pv.Store || !pv.PlansSet || pv.From != "" || len(pv.Report.Rows) == 0 {
		t.Fatalf("/api/plans = %+v", pv)
	}
	var usd float64
	var turns int64
	ratios := 0
	for _, r := range pv.Report.Rows {
		usd += r.APIUSD
		turns += r.Turns
		if r.Provider == "anthropic" {
			ratios++
			if r.Plan != "max-20x" || r.PlanUSD != 200 || math.Abs(r.Ratio-r.APIUSD/200) > 1e-12 {
				t.Errorf("anthropic row %+v", r)
			}
		} else if r.Ratio != 0 || r.Plan != "" {
			t.Errorf("row without a plan %+v", r)
		}
	}
	if turns != co.Total.Turns || math.Abs(usd-co.Total.CostUSD) > 1e-9 {
		t.Errorf("/api/plans: $%.6f over %d turns, /api/cost $%.6f over %d", usd, turns, co.Total.CostUSD, co.Total.Turns)
	}
	if ratios == 0 {
		t.Error("the corpus has no Claude month")
	}
	// A window reads whole months: 1 day back starts at the month's first day.
	var day plansResponse
	mustGet(t, srv.URL, "/api/plans?window=1d", &day)
	if from, err := time.Parse(time.RFC3339, day.From); err != nil || from.In(time.Local).Day() != 1 || from.In(time.Local).Hour() != 0 {
		t.Errorf("window=1d: from %q (%v), want a month's first local midnight", day.From, err)
	}
	bare := startServer(t, Options{StorePath: path, Version: "test"})
	var none plansResponse
	mustGet(t, bare.URL, "/api/plans?window=all", &none)
	if none.PlansSet || len(none.Plans) != 0 || len(none.Report.Rows) != len(pv.Report.Rows) {
		t.Errorf("without plans: plans_set %v, plans %v, %d rows", none.PlansSet, none.Plans, len(none.Report.Rows))
	}
	if code := get(t, srv.URL, "/api/plans?window=1y", nil); code != 400 {
		t.Errorf("/api/plans?window=1y: %d, want 400", code)
	}
}

// TestBrowser_PlanValue: with [plans] the Cost tab shows the plan value panel, each Claude month
// with its ratio; without, no panel.
func TestBrowser_PlanValue(t *testing.T) {
	path := corpusStore(t)
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: path, Version: "test", Plans: func() map[string]query.Plan { return testPlans }})
	var pv plansResponse
	mustGet(t, srv.URL, "/api/plans?window=all", &pv)
	var want []string
	for _, r := range pv.Report.Rows {
		if r.PlanUSD > 0 {
			want = append(want, ratioText(r.Ratio))
		}
	}
	b.open(t, srv.URL+"/?window=all&tab=cost", "cost")
	run(t, b, "plan panel", chromedp.Poll[bool](`document.querySelector('table[data-table="plans"]') !== null`, chromedp.WithPollingTimeout(5*time.Second)))
	got := run(t, b, "ratios", chromedp.Evaluate[[]string](`[...document.querySelectorAll('table[data-table="plans"] [data-ratio]')].map((e) => e.textContent)`))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("the panel shows ratios %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("ratio %d: %q, want %q", i, got[i], want[i])
		}
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
	b.screenshot(t, artifactDir(t), "cost-plans")
	bare := startServer(t, Options{StorePath: path, Version: "test"})
	b.open(t, bare.URL+"/?window=all&tab=cost", "cost")
	if n := run(t, b, "no panel", chromedp.Evaluate[int](`document.querySelectorAll('table[data-table="plans"]').length`)); n != 0 {
		t.Errorf("without plans the Cost tab shows %d plan tables", n)
	}
}

// ratioText formats a ratio as the page does: "12.4x", "0.35x".
func ratioText(r float64) string {
	if r >= 1 {
		return strconv.FormatFloat(r, 'f', 1, 64) + "x"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "x"
}
