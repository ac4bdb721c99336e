package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// Tool calls over a window are read from the writer's hourly rollup (store's actions_hourly) for
// whole hours and from the actions table only for the window's partial first hour: a 90-day
// window of 5 million actions is ~180,000 rollup rows and a few thousand raw ones. Both parts
// have the same columns (ts, client, session_id, project, type, tool, actions, failures,
// pending, timed, duration_ms), so a query sums them alike.

// actionsSource returns a subquery over the tool calls of f's window, project, client and member
// (for FROM (...)) and its arguments; f's other fields are not applied. With a store the writer
// has not migrated to rollups yet, every row is raw. With daily set (a chart by day), whole local
// days come from actions_daily when the writer kept it in this zone and no project is asked (it
// has no project column); those rows have session_id and project empty.
func actionsSource(ctx context.Context, db Querier, f Filter, daily bool) (string, []any, error) {
	raw := func(from, to int64) string {
		c := []string{}
		if from != 0 {
			c = append(c, fmt.Sprintf("ts >= %d", from))
		}
		if to != 0 {
			c = append(c, fmt.Sprintf("ts < %d", to))
		}
		return "SELECT ts, client, session_id, project, type, tool, 1 AS actions, coalesce(success = 0, 0) AS failures, " +
			"success IS NULL AS pending, duration_ms > 0 AS timed, max(duration_ms, 0) AS duration_ms FROM actions" +
			sourceWhere(f, c)
	}
	hourly := func(from, to int64) string {
		c := []string{}
		if from != 0 {
			c = append(c, fmt.Sprintf("hour >= %d", from))
		}
		if to != 0 {
			c = append(c, fmt.Sprintf("hour < %d", to))
		}
		return "SELECT hour AS ts, client, session_id, project, type, tool, actions, failures, pending, timed, duration_ms FROM actions_hourly" + sourceWhere(f, c)
	}
	args := []any{sql.Named("project", f.Project), sql.Named("client", f.Client), sql.Named("member", f.Member)}
	var from int64 // the window's start, 0 for all time
	if !f.Since.IsZero() {
		from = f.Since.UnixMilli()
	}
	hourlyOK, dailyOK, err := rollupsFor(ctx, db)
	if err != nil || !hourlyOK || f.Member != "" {
		// A member's actions are the raw rows that name it: the rollups have no member.
		return raw(from, 0), args, err
	}
	h1 := from // the first whole hour
	if from != 0 {
		h1 = store.HourOf(from + store.HourMs - 1)
	}
	var parts []string
	if from != h1 {
		parts = append(parts, raw(from, h1))
	}
	if !daily || !dailyOK || f.Project != "" {
		return strings.Join(append(parts, hourly(h1, 0)), " UNION ALL "), args, nil
	}
	d1 := h1 // the first whole day
	if h1 != 0 && store.LocalDay(h1) != h1 {
		d1 = store.NextLocalDay(h1)
		parts = append(parts, hourly(h1, d1))
	}
	// Today's rows come from the hours: the writer keeps both, but the day's row is rewritten at
	// every batch, and reading the hourly rows of one day costs little.
	today := store.LocalDay(time.Now().UnixMilli())
	c := []string{fmt.Sprintf("day < %d", today)}
	if d1 != 0 {
		c = append(c, fmt.Sprintf("day >= %d", d1))
	}
	if f.Client != "" {
		c = append(c, "client = :client")
	}
	parts = append(parts, "SELECT day AS ts, client, '' AS session_id, '' AS project, type, tool, actions, failures, pending, timed, duration_ms FROM actions_daily WHERE "+
		strings.Join(c, " AND "), hourly(max(today, d1), 0))
	return strings.Join(parts, " UNION ALL "), args, nil
}

// sourceWhere adds the project, client and member filters to conditions (a member only on the
// raw actions: actionsSource reads no rollup for a member).
func sourceWhere(f Filter, c []string) string {
	if f.Project != "" {
		c = append(c, "project = :project")
	}
	if f.Client != "" {
		c = append(c, "client = :client")
	}
	if f.Member != "" {
		c = append(c, "member = :member")
	}
	if len(c) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(c, " AND ")
}

// rollupsFor reports whether the store has the hourly rollups, and a daily one kept in this zone.
func rollupsFor(ctx context.Context, db Querier) (hourly, daily bool, err error) {
	var zone sql.NullString
	err = db.QueryRowContext(ctx, `SELECT (SELECT value FROM rollup_state WHERE key = 'zone')
		WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'rollup_state')`).Scan(&zone)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return true, zone.Valid && zone.String != "" && zone.String == store.ZoneKey(), nil
}
