package query

import (
	"cmp"
	"context"
	"slices"

	"github.com/observerhq/observer/pkg/pricing"
)

// UnknownProvider is the provider of a turn whose model names none (PlanProvider).
const UnknownProvider = "unknown"

// copilotClients are the clients whose turns a GitHub Copilot plan pays for, whatever the model.
var copilotClients = map[string]bool{"copilot-cli": true, "copilot-vscode": true}

// PlanProvider is the provider whose monthly plan pays for a turn of client with model: "github"
// for the Copilot clients (Copilot bills its own plan for every model it serves), else the
// provider that sells the model (pricing.ModelProvider), else UnknownProvider. It is derived from
// the model for every turn, the proxy's too: the rollups keep no provider, and the proxy's
// provider column is the API's wire format (an OpenAI-compatible gateway serving Claude is
// "openai" there), not whose plan the turn is worth.
func PlanProvider(client, model string) string {
	if copilotClients[client] {
		return "github"
	}
	return cmp.Or(pricing.ModelProvider(model), UnknownProvider)
}

// Plan is a monthly subscription: a name and its price in USD per month ([plans] in config.toml).
type Plan struct {
	Name     string  `json:"name"`
	USDMonth float64 `json:"usd_month"`
}

// PlanRow is one provider's turns in one local calendar month: their API-equivalent dollars
// (what Cost prices them at) beside the provider's plan, when it has one.
type PlanRow struct {
	Month         string  `json:"month"` // local, "2026-11"
	Provider      string  `json:"provider"`
	APIUSD        float64 `json:"api_usd"`
	Turns         int64   `json:"turns"`
	UnpricedTurns int64   `json:"unpriced_turns"` // of Turns, of a model without a price ($0)
	Reliability   string  `json:"reliability"`
	// Plan and PlanUSD are the provider's plan ("" and 0: it has none).
	Plan    string  `json:"plan,omitempty"`
	PlanUSD float64 `json:"plan_usd,omitempty"`
	// Ratio is APIUSD / PlanUSD: how many times its price the plan was worth that month at API
	// rates (0 without a plan).
	Ratio float64 `json:"ratio,omitempty"`
}

// PlanReport is PlanValue's answer: the rows by month, then by API dollars, highest first; and
// the total of all rows, which is Cost's total for the same query.
type PlanReport struct {
	Since string    `json:"since,omitempty"`
	Until string    `json:"until,omitempty"`
	Rows  []PlanRow `json:"rows"`
	// Plans are the plans that were set, by provider.
	Plans    map[string]Plan `json:"plans"`
	TotalUSD float64         `json:"total_api_usd"`
	Turns    int64           `json:"turns"`
}

// PlanValue is Cost's turns of q (its GroupBy ignored) by local calendar month and PlanProvider,
// each with the provider's plan from plans and the ratio of the two. Every turn is counted once
// and none is left out: a turn whose provider is unknown is under UnknownProvider, so the rows
// add up to Cost's total. A month cut by q's window, or the current one, is compared with a
// whole month's price all the same.
func PlanValue(ctx context.Context, db Querier, q CostQuery, plans map[string]Plan) (*PlanReport, error) {
	q.GroupBy = []string{"day", "client", "model"}
	q.Last = false
	rep, err := Cost(ctx, db, q)
	if err != nil {
		return nil, err
	}
	out := &PlanReport{Since: rep.Since, Until: rep.Until, Rows: []PlanRow{}, Plans: map[string]Plan{}}
	for p, plan := range plans {
		out.Plans[p] = plan
	}
	type key struct{ month, provider string }
	sums := map[key]*CostRow{}
	var keys []key
	for _, r := range rep.Rows {
		k := key{r.Day[:min(len(r.Day), 7)], PlanProvider(r.Client, r.Model)}
		s := sums[k]
		if s == nil {
			s = &CostRow{}
			sums[k] = s
			keys = append(keys, k)
		}
		s.Add(r)
	}
	for _, k := range keys {
		s := sums[k]
		row := PlanRow{Month: k.month, Provider: k.provider, APIUSD: s.CostUSD, Turns: s.Turns,
			UnpricedTurns: s.UnpricedTurns, Reliability: s.reliability()}
		if plan, ok := plans[k.provider]; ok && plan.USDMonth > 0 {
			row.Plan, row.PlanUSD, row.Ratio = plan.Name, plan.USDMonth, s.CostUSD/plan.USDMonth
		}
		out.Rows = append(out.Rows, row)
		out.TotalUSD += s.CostUSD
		out.Turns += s.Turns
	}
	slices.SortFunc(out.Rows, func(a, b PlanRow) int {
		return cmp.Or(cmp.Compare(a.Month, b.Month), cmp.Compare(b.APIUSD, a.APIUSD), cmp.Compare(a.Provider, b.Provider))
	})
	return out, nil
}
