package query

import (
	"context"
	"database/sql"
	"strings"
)

// sqlConds builds a WHERE clause from conditions and their named arguments.
type sqlConds struct {
	parts []string
	args  []any
}

func (c *sqlConds) add(cond string, args ...any) {
	c.parts = append(c.parts, cond)
	c.args = append(c.args, args...)
}

func (c *sqlConds) sql() string {
	if len(c.parts) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c.parts, " AND ")
}

// envelopeConds holds f's conditions on a table with the envelope columns (project, client,
// member), its time column named tsCol: since, until, project, client and member (not the
// session). A member filter needs
// the table's member column: sessions, actions, token_usage and api_turns have one, the rollups do
// not.
func envelopeConds(f Filter, tsCol string) *sqlConds {
	c := &sqlConds{}
	if ms := sinceMs(f); ms > 0 {
		c.add(tsCol+" >= :since", sql.Named("since", ms))
	}
	if !f.Until.IsZero() {
		c.add(tsCol+" < :until", sql.Named("until", f.Until.UnixMilli()))
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

// sinceMs is f's start in ms, 0 for all time.
func sinceMs(f Filter) int64 {
	if f.Since.IsZero() {
		return 0
	}
	return f.Since.UnixMilli()
}

// WindowFigures are the dashboard Overview's headline figures for a window.
type WindowFigures struct {
	Sessions  int64 `json:"sessions"`
	APITurns  int64 `json:"api_turns"`
	TokenRows int64 `json:"token_rows"`
	Actions   int64 `json:"actions"`
	Failures  int64 `json:"failures"`
}

// WindowCounts reads the sessions seen in f's window (their last event in it) and the transcript
// token rows in it, of f's project, client and member, into WindowFigures' Sessions and
// TokenRows. The proxy's turns come from Cost and the actions from ActionActivity.
func WindowCounts(ctx context.Context, db Querier, f Filter) (WindowFigures, error) {
	var c WindowFigures
	qs := []struct {
		table, ts string
		dst       []any
		sel       string
	}{
		{"sessions", "last_seen", []any{&c.Sessions}, "count(*)"},
		{"token_usage", "ts", []any{&c.TokenRows}, "count(*)"},
	}
	for _, x := range qs {
		w := envelopeConds(f, x.ts)
		if err := db.QueryRowContext(ctx, "SELECT "+x.sel+" FROM "+x.table+w.sql(), w.args...).Scan(x.dst...); err != nil {
			return c, err
		}
	}
	return c, nil
}

// ClientSessionCounts counts each client's sessions seen in f's window, of f's project, client and
// member.
func ClientSessionCounts(ctx context.Context, db Querier, f Filter) (map[string]int64, error) {
	w := envelopeConds(f, "last_seen")
	rows, err := db.QueryContext(ctx, "SELECT client, count(*) FROM sessions"+w.sql()+" GROUP BY client", w.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var client string
		var n int64
		if err := rows.Scan(&client, &n); err != nil {
			return nil, err
		}
		out[client] = n
	}
	return out, rows.Err()
}

// KnownProject is a project the store knows, as the filters offer it.
type KnownProject struct {
	Path     string `json:"path"`
	Name     string `json:"name"`
	LastSeen int64  `json:"last_seen"`
}

// RecentProjects lists the stored projects, most recently seen first, at most max.
func RecentProjects(ctx context.Context, db Querier, max int) ([]KnownProject, error) {
	rows, err := db.QueryContext(ctx, "SELECT path, name, last_seen FROM projects ORDER BY last_seen DESC LIMIT ?", max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []KnownProject{}
	for rows.Next() {
		var p KnownProject
		if err := rows.Scan(&p.Path, &p.Name, &p.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SessionClients lists the clients of the stored sessions, in name order: the distinct values of
// the sessions' primary key prefix, one index seek each.
func SessionClients(ctx context.Context, db Querier) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT DISTINCT client FROM sessions ORDER BY client")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
