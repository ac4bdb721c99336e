package dash

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// Counts are the Overview's headline figures for the window.
type Counts = query.WindowFigures

// activityPoint is one bucket of actions over time.
type activityPoint struct {
	Label    string `json:"label"`
	T        int64  `json:"t"` // Unix seconds of the bucket's start
	Actions  int64  `json:"actions"`
	Failures int64  `json:"failures"`
}

// clientActivity is one client's share of the window.
type clientActivity struct {
	Client   string  `json:"client"`
	Sessions int64   `json:"sessions"`
	Actions  int64   `json:"actions"`
	Failures int64   `json:"failures"`
	Turns    int64   `json:"turns"`
	Tokens   int64   `json:"tokens"`
	CostUSD  float64 `json:"cost_usd"`
}

// overview answers /api/overview.
func (s *Server) overview(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store         bool             `json:"store"`
		Counts        Counts           `json:"counts"`
		Total         Totals           `json:"total"`
		Buckets       Buckets          `json:"buckets"`
		CostOverTime  []dayCost        `json:"cost_over_time"` // by activity_unit
		ActivityUnit  string           `json:"activity_unit"`  // hour or day
		Activity      []activityPoint  `json:"activity"`
		TopModels     []ModelCost      `json:"top_models"`
		Clients       []clientActivity `json:"clients"`
		ModelsInTotal int              `json:"models_in_total"`
	}{filters: f, CostOverTime: []dayCost{}, Activity: []activityPoint{}, TopModels: []ModelCost{}, Clients: []clientActivity{}, ActivityUnit: activityUnit(f, q.now)}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	if out.Counts, err = query.WindowCounts(ctx, db, f.readFilter()); err != nil {
		return nil, err
	}
	rows, total, err := costRows(ctx, db, f, timeKey(f, q.now), "model", "client")
	if err != nil {
		return nil, err
	}
	out.Total = totalsOf(total)
	// The proxy's turns, under their sessions' projects (each is in the cost figures once).
	out.Counts.APITurns = total.ProxyTurns
	days := map[string]*dayCost{}
	byModel := map[string]*query.CostRow{}
	modelBuckets := map[string]*Buckets{}
	clients := map[string]*clientActivity{}
	for _, r := range rows {
		b := s.split(r)
		out.Buckets.add(b)
		dayInto(days, bucketOf(r), r, b)
		if byModel[r.Model] == nil {
			byModel[r.Model], modelBuckets[r.Model] = &query.CostRow{Model: r.Model}, &Buckets{}
		}
		byModel[r.Model].Add(r)
		modelBuckets[r.Model].add(b)
		c := clientOf(clients, r.Client)
		c.Turns += r.Turns
		c.Tokens += r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheCreationTokens
		c.CostUSD += r.CostUSD
	}
	out.CostOverTime = sortedDays(days)
	for _, m := range byModel {
		mc := s.modelCost(*m)
		mc.Buckets = *modelBuckets[m.Model]
		out.TopModels = append(out.TopModels, mc)
	}
	slices.SortFunc(out.TopModels, func(a, b ModelCost) int { return cmpCost(a.CostUSD, b.CostUSD, a.Model, b.Model) })
	out.ModelsInTotal = len(out.TopModels)
	out.TopModels = out.TopModels[:min(len(out.TopModels), 8)]
	if out.Activity, err = actionActivity(ctx, db, f, out.ActivityUnit, q.now, &out.Counts, clients); err != nil {
		return nil, err
	}
	if err := clientCounts(ctx, db, f, clients); err != nil {
		return nil, err
	}
	for _, c := range clients {
		out.Clients = append(out.Clients, *c)
	}
	slices.SortFunc(out.Clients, func(a, b clientActivity) int {
		return cmp.Or(cmp.Compare(b.Actions+b.Turns, a.Actions+a.Turns), strings.Compare(a.Client, b.Client))
	})
	return out, nil
}

func clientOf(m map[string]*clientActivity, client string) *clientActivity {
	c := m[client]
	if c == nil {
		c = &clientActivity{Client: client}
		m[client] = c
	}
	return c
}

// activityUnit buckets by hour up to two days, by day beyond.
func activityUnit(f filters, now time.Time) string {
	if f.span(now) <= 48*time.Hour {
		return "hour"
	}
	return "day"
}

// actionActivity reads the window's tool calls by local hour or day and client
// (query.ActionActivity): the headline counts, the activity chart and each client's share.
func actionActivity(ctx context.Context, db query.DB, f filters, unit string, now time.Time, c *Counts, m map[string]*clientActivity) ([]activityPoint, error) {
	rows, err := query.ActionActivity(ctx, db, f.readFilter(), unit, now)
	if err != nil {
		return nil, err
	}
	out := []activityPoint{}
	for _, r := range rows {
		label, t := bucketLabel(r.Bucket, unit)
		if len(out) == 0 || out[len(out)-1].Label != label {
			out = append(out, activityPoint{Label: label, T: t})
		}
		p := &out[len(out)-1]
		p.Actions += r.Actions
		p.Failures += r.Failures
		c.Actions += r.Actions
		c.Failures += r.Failures
		ca := clientOf(m, r.Client)
		ca.Actions += r.Actions
		ca.Failures += r.Failures
	}
	return out, nil
}

// clientCounts adds each client's sessions in the window.
func clientCounts(ctx context.Context, db query.DB, f filters, m map[string]*clientActivity) error {
	n, err := query.ClientSessionCounts(ctx, db, f.readFilter())
	if err != nil {
		return err
	}
	for client, sessions := range n {
		clientOf(m, client).Sessions = sessions
	}
	return nil
}

// filtersAPI answers /api/filters: the projects and clients to choose from.
func (s *Server) filtersAPI(ctx context.Context, q *reqParams) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		Store    bool                 `json:"store"`
		Projects []query.KnownProject `json:"projects"`
		Clients  []string             `json:"clients"`
		Windows  []string             `json:"windows"`
	}{Projects: []query.KnownProject{}, Clients: []string{}, Windows: []string{"1h", "24h", "7d", "30d", "90d", "all"}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	if out.Projects, err = query.RecentProjects(ctx, db, 1000); err != nil {
		return nil, err
	}
	if out.Clients, err = query.SessionClients(ctx, db); err != nil {
		return nil, err
	}
	return out, nil
}
