package dash

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

// The SQL the pages that still query the store themselves build (sessions.go, actions.go and
// tools.go): the filters' conditions and the window's tool calls, as internal/query builds them
// for its own reads (query/overview.go's envelopeConds, query/rollups.go's actionsSource). They go
// once those pages read through internal/query.
//
// Tool calls over a window are read from the writer's hourly rollup (store's actions_hourly) for
// whole hours and from the actions table only for the window's partial first hour: a 90-day
// window of 5 million actions is ~180,000 rollup rows and a few thousand raw ones. Both parts
// have the columns of actionCols, so a query sums them alike.

// actionCols are the columns of actionsSource's rows.
const actionCols = "ts, client, session_id, project, type, tool, actions, failures, pending, timed, duration_ms"

// actionsSource returns a subquery over the window's tool calls (for FROM (...)) and its
// arguments. With a store the writer has not migrated to rollups yet, every row is raw. With
// daily set (a chart by day), whole local days come from actions_daily when the writer kept it in
// this zone and no project is asked (it has no project column); those rows have session_id and
// project empty.
func actionsSource(ctx context.Context, db *sql.DB, f filters, daily bool) (string, []any, error) {
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
			where(f, c)
	}
	hourly := func(from, to int64) string {
		c := []string{}
		if from != 0 {
			c = append(c, fmt.Sprintf("hour >= %d", from))
		}
		if to != 0 {
			c = append(c, fmt.Sprintf("hour < %d", to))
		}
		return "SELECT hour AS ts, client, session_id, project, type, tool, actions, failures, pending, timed, duration_ms FROM actions_hourly" + where(f, c)
	}
	args := []any{sql.Named("project", f.Project), sql.Named("client", f.Client), sql.Named("member", f.Member)}
	from := f.sinceMs()
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

// where adds the project, client and member filters to conditions (a member only on the raw
// actions: actionsSource reads no rollup for a member).
func where(f filters, c []string) string {
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

func hasRollups(ctx context.Context, db *sql.DB) (bool, error) {
	ok, _, err := rollupsFor(ctx, db)
	return ok, err
}

// rollupsFor reports whether the store has the hourly rollups, and a daily one kept in this zone.
func rollupsFor(ctx context.Context, db *sql.DB) (hourly, daily bool, err error) {
	return query.RollupsKept(ctx, db)
}

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

// bucketLabel is a store.LocalBucketSQL value's label and the Unix time of its local start. On a day the
// offset changes, LocalBucketSQL gives the day two starts; both get the same label, and callers add
// buckets by label.
func bucketLabel(ms int64, unit string) (string, int64) {
	if unit == "hour" {
		t := time.UnixMilli(ms).In(time.Local)
		return t.Format("2006-01-02 15:04"), t.Unix()
	}
	t := time.UnixMilli(ms + 12*store.HourMs).In(time.Local)
	y, m, d := t.Date()
	return t.Format("2006-01-02"), time.Date(y, m, d, 0, 0, 0, 0, time.Local).Unix()
}
