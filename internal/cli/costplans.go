package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/store"
)

// queryPlans is config.toml's [plans] as the read model takes them.
func queryPlans(p config.Plans) map[string]query.Plan {
	out := map[string]query.Plan{}
	for provider, plan := range p.ByProvider() {
		out[provider] = query.Plan{Name: plan.Name, USDMonth: plan.USDMonth}
	}
	return out
}

// costPlans prints `observerctl cost --plans`: query.PlanValue's rows, and how to set a plan
// when config.toml has none.
func costPlans(ctx context.Context, e *env, st *store.Store, q query.CostQuery, asJSON bool) error {
	rep, err := query.PlanValue(ctx, st.DB, q, queryPlans(e.cfg.Plans))
	if err != nil {
		return err
	}
	if asJSON {
		writeJSON(e.stdout, rep)
		return nil
	}
	if rep.Turns == 0 {
		if hint := windowHint(ctx, st, q.Since, q.Until); hint != "" {
			fmt.Fprintln(e.stdout, hint)
			return nil
		}
	}
	printPlans(e, rep)
	return nil
}

func printPlans(e *env, rep *query.PlanReport) {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "MONTH\tPROVIDER\tTURNS\tAPI $\tPLAN\tPLAN $/MONTH\tVALUE\tRELIABILITY\t")
	unpriced := int64(0)
	for _, r := range rep.Rows {
		usd := fmt.Sprintf("%.2f", r.APIUSD)
		if r.UnpricedTurns > 0 {
			usd += " *"
			unpriced += r.UnpricedTurns
		}
		plan, price, value := "no plan", "-", "-"
		if r.PlanUSD > 0 {
			plan, price, value = r.Plan, fmt.Sprintf("%.2f", r.PlanUSD), ratio(r.Ratio)
			if plan == "" {
				plan = "(unnamed)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Month, r.Provider, n(r.Turns), usd, plan, price, value, r.Reliability)
	}
	fmt.Fprintf(tw, "TOTAL\t\t%s\t%.2f\t\t\t\t\t\n", n(rep.Turns), rep.TotalUSD)
	tw.Flush()
	if unpriced > 0 {
		fmt.Fprintf(e.stdout, "* %d turn(s) of models without a price are counted as $0: observerctl prices list --unpriced\n", unpriced)
	}
	if len(rep.Plans) == 0 {
		fmt.Fprintf(e.stdout, "\nNo plan is set: add what you pay each provider to %s, for example\n\n"+
			"  [plans]\n  anthropic = { name = \"max-20x\", usd_month = 200 }\n  openai = { name = \"pro\", usd_month = 200 }\n\n"+
			"(providers: %s), or set OBSERVER_PLANS_ANTHROPIC='{ name = \"max-20x\", usd_month = 200 }'.\n",
			config.Path(e.cfg.Home), strings.Join(config.PlanProviders(), ", "))
	}
}

// ratio formats a plan's value, API-equivalent dollars over the plan's price: "12.4x", "0.35x".
func ratio(r float64) string {
	if r >= 1 {
		return fmt.Sprintf("%.1fx", r)
	}
	return fmt.Sprintf("%.2fx", r)
}
