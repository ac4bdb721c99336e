package dash

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

// conds builds a WHERE clause from the filters and extra conditions, with named arguments.
type conds struct {
	parts []string
	args  []any
}

func (c *conds) add(cond string, args ...any) {
	c.parts = append(c.parts, cond)
	c.args = append(c.args, args...)
}

func (c *conds) sql() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

// filterConds holds the filters' conditions on a table with the envelope columns, its time column
// named tsCol. A member filter needs the table's member column: sessions, actions, token_usage
// and api_turns have one, the rollups do not (members.go).
func filterConds(f filters, tsCol string) *conds {
	c := &conds{}
	if ms := f.sinceMs(); ms > 0 {
		c.add(tsCol+" >= :since", sql.Named("since", ms))
	}
	if f.Project != "" {
		c.add("project = :project", sql.Named("project", f.Project))
	}
	if f.Client != "" {
		c.add("client = :client", sql.Named("client", f.Client))
	}
	if f.Member != "" {
		c.add("member = :member", sql.Named("member", f.Member))
	}
	return c
}

func filterWhere(f filters, tsCol string) (string, []any) {
	c := filterConds(f, tsCol)
	return c.sql(), c.args
}

// Counts are the Overview's headline figures for the window.
type Counts struct {
	Sessions  int64 `json:"sessions"`
	APITurns  int64 `json:"api_turns"`
	TokenRows int64 `json:"token_rows"`
	Actions   int64 `json:"actions"`
	Failures  int64 `json:"failures"`
}

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
	if out.Counts, err = counts(ctx, db, f); err != nil {
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

// counts reads the headline figures but the actions' (see actionActivity). A session counts when
// it was seen in the window.
func counts(ctx context.Context, db *sql.DB, f filters) (Counts, error) {
	var c Counts
	qs := []struct {
		table, ts string
		dst       []any
		sel       string
	}{
		{"sessions", "last_seen", []any{&c.Sessions}, "count(*)"},
		{"token_usage", "ts", []any{&c.TokenRows}, "count(*)"},
	}
	for _, x := range qs {
		w, args := filterWhere(f, x.ts)
		if err := db.QueryRowContext(ctx, "SELECT "+x.sel+" FROM "+x.table+w, args...).Scan(x.dst...); err != nil {
			return c, err
		}
	}
	return c, nil
}

// activityUnit buckets by hour up to two days, by day beyond.
func activityUnit(f filters, now time.Time) string {
	if f.span(now) <= 48*time.Hour {
		return "hour"
	}
	return "day"
}

// actionActivity reads the window's tool calls in one pass over actionsSource, by local hour or
// day and client: the headline counts, the activity chart and each client's share.
func actionActivity(ctx context.Context, db *sql.DB, f filters, unit string, now time.Time, c *Counts, m map[string]*clientActivity) ([]activityPoint, error) {
	src, args, err := actionsSource(ctx, db, f, unit == "day")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+store.LocalBucketSQL("ts", unit, f.Since, now)+" AS b, client, sum(actions), sum(failures) FROM ("+src+") GROUP BY b, client ORDER BY b", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []activityPoint{}
	for rows.Next() {
		var b int64
		var client string
		var n, fails int64
		if err := rows.Scan(&b, &client, &n, &fails); err != nil {
			return nil, err
		}
		label, t := bucketLabel(b, unit)
		if len(out) == 0 || out[len(out)-1].Label != label {
			out = append(out, activityPoint{Label: label, T: t})
		}
		p := &out[len(out)-1]
		p.Actions += n
		p.Failures += fails
		c.Actions += n
		c.Failures += fails
		ca := clientOf(m, client)
		ca.Actions += n
		ca.Failures += fails
	}
	return out, rows.Err()
}

// clientCounts adds each client's sessions in the window.
func clientCounts(ctx context.Context, db *sql.DB, f filters, m map[string]*clientActivity) error {
	w, args := filterWhere(f, "last_seen")
	rows, err := db.QueryContext(ctx, "SELECT client, count(*) FROM sessions"+w+" GROUP BY client", args...)
	if err != nil {
		return err
	}
	for rows.Next() {
		var client string
		var n int64
		if err := rows.Scan(&client, &n); err != nil {
			rows.Close()
			return err
		}
		clientOf(m, client).Sessions = n
	}
	rows.Close()
	return rows.Err()
}

// filtersAPI answers /api/filters: the projects and clients to choose from.
func (s *Server) filtersAPI(ctx context.Context, q *reqParams) (any, error) {
	if err := q.done(); err != nil {
		return nil, err
	}
	type project struct {
		Path     string `json:"path"`
		Name     string `json:"name"`
		LastSeen int64  `json:"last_seen"`
	}
	out := struct {
		Store    bool      `json:"store"`
		Projects []project `json:"projects"`
		Clients  []string  `json:"clients"`
		Windows  []string  `json:"windows"`
	}{Projects: []project{}, Clients: []string{}, Windows: []string{"1h", "24h", "7d", "30d", "90d", "all"}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	rows, err := db.QueryContext(ctx, "SELECT path, name, last_seen FROM projects ORDER BY last_seen DESC LIMIT 1000")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p project
		if err := rows.Scan(&p.Path, &p.Name, &p.LastSeen); err != nil {
			rows.Close()
			return nil, err
		}
		out.Projects = append(out.Projects, p)
	}
	rows.Close()
	// Clients: the distinct values of the sessions' primary key prefix, one index seek each.
	rows, err = db.QueryContext(ctx, "SELECT DISTINCT client FROM sessions ORDER BY client")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out.Clients = append(out.Clients, c)
	}
	return out, rows.Err()
}
