package dash

import (
	"context"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// plansAPI answers /api/plans: for each local calendar month the window touches, whole, and each
// provider, the API-equivalent dollars of its turns beside the provider's plan ([plans] in
// config.toml) and their ratio (query.PlanValue). A plan is a monthly price, so the months are
// read whole whatever the window: a 24h window shows the current month so far. "plans_set" is
// false without [plans]; the page then shows no panel. The rows of the same months add up to
// /api/cost's total over those months.
func (s *Server) plansAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	if err := q.done(); err != nil {
		return nil, err
	}
	plans := map[string]query.Plan{}
	if s.opts.Plans != nil {
		plans = s.opts.Plans()
	}
	out := struct {
		filters
		Store    bool                  `json:"store"`
		PlansSet bool                  `json:"plans_set"`
		From     string                `json:"from,omitempty"` // the first month's start (RFC 3339), "" for all time
		Report   *query.PlanReport     `json:"report"`
		Plans    map[string]query.Plan `json:"plans"`
	}{filters: f, PlansSet: len(plans) > 0, Plans: plans, Report: &query.PlanReport{Rows: []query.PlanRow{}, Plans: plans}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	var from time.Time
	if !f.Since.IsZero() {
		l := f.Since.In(time.Local)
		from = time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, time.Local)
		out.From = from.Format(time.RFC3339)
	}
	rep, err := query.PlanValue(ctx, db, query.CostQuery{Filter: query.Filter{Since: from, Project: f.Project, Client: f.Client, Member: f.Member}}, plans)
	if err != nil {
		return nil, err
	}
	out.Report = rep
	return out, nil
}
