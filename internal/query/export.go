package query

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/observerhq/observer/pkg/store"
)

// ExportTables are what Export reads: actions, turns (api_turns), sessions, and usage (every model
// turn once, as Cost counts it).
var ExportTables = []string{"actions", "turns", "sessions", "usage"}

// ExportRows are the rows of an Export, read one at a time: a table's columns as stored (Unix ms
// times, text, numbers), oldest first.
type ExportRows struct {
	rows *sql.Rows
	cols []string
	vals []any
	ptrs []any
}

// Export reads a table's rows under f (Since, Until, Project, Client; sessions match when they
// overlap the window; a proxy turn's project is its session's) without holding them in memory.
func Export(ctx context.Context, db *sql.DB, table string, f Filter) (*ExportRows, error) {
	if !slices.Contains(ExportTables, table) {
		return nil, fmt.Errorf("cannot export %q: choose one of %s", table, strings.Join(ExportTables, ", "))
	}
	if f.SessionID != "" || len(f.SessionIDs) > 0 || f.Member != "" {
		return nil, fmt.Errorf("export filters by time, project and client only")
	}
	stmt, args, err := exportSQL(ctx, db, table, f)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, err
	}
	r := &ExportRows{rows: rows, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

// Columns are the rows' column names, in order.
func (r *ExportRows) Columns() []string { return r.cols }

// Next advances to the next row; false at the end or on an error (Err).
func (r *ExportRows) Next() bool { return r.rows.Next() }

// Values are the current row's values, valid until the next call of Next.
func (r *ExportRows) Values() ([]any, error) {
	if err := r.rows.Scan(r.ptrs...); err != nil {
		return nil, err
	}
	return r.vals, nil
}

// Err is the error that ended the rows, if any.
func (r *ExportRows) Err() error { return r.rows.Err() }

// Close releases the rows.
func (r *ExportRows) Close() error { return r.rows.Close() }

// exportSQL builds the query of one ExportTables table under f.
func exportSQL(ctx context.Context, db *sql.DB, tbl string, f Filter) (string, []any, error) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	timeCol := "ts"
	switch tbl {
	case "usage":
		// The filters go inside both parts of the turn list, where the indexes serve them (as
		// cost does); a proxy turn's project is its session's.
		var proxy, trans []string
		args = []any{sql.Named("window", store.JoinWindowMs)}
		part := func(name string, v any, pc, tc string) {
			proxy, trans = append(proxy, pc), append(trans, tc)
			args = append(args, sql.Named(name, v))
		}
		if !f.Since.IsZero() {
			part("since", f.Since.UnixMilli(), "api_turns.ts >= :since", "t.ts >= :since")
		}
		if !f.Until.IsZero() {
			part("until", f.Until.UnixMilli(), "api_turns.ts < :until", "t.ts < :until")
		}
		if f.Client != "" {
			part("client", f.Client, "api_turns.client = :client", "t.client = :client")
		}
		if f.Project != "" {
			part("project", f.Project, store.ProxyProject+" = :project", "t.project = :project")
		}
		where := func(c []string) string {
			if len(c) == 0 {
				return "1"
			}
			return strings.Join(c, " AND ")
		}
		stmt := "SELECT * FROM (" + fmt.Sprintf(store.TurnsSQL, where(proxy), where(trans)) + ")"
		return stmt + " ORDER BY ts, proxy DESC", args, nil
	case "sessions":
		if !f.Since.IsZero() {
			add("last_seen >= ?", f.Since.UnixMilli())
		}
		if !f.Until.IsZero() {
			add("first_seen < ?", f.Until.UnixMilli())
		}
		timeCol = "first_seen"
	default:
		if !f.Since.IsZero() {
			add("ts >= ?", f.Since.UnixMilli())
		}
		if !f.Until.IsZero() {
			add("ts < ?", f.Until.UnixMilli())
		}
	}
	table := map[string]string{"actions": "actions", "turns": "api_turns", "sessions": "sessions"}[tbl]
	cols, err := tableColumns(ctx, db, table)
	if err != nil {
		return "", nil, err
	}
	project := "project"
	if table == "api_turns" {
		project = store.ProxyProject
	}
	var sel []string
	for _, c := range cols {
		switch {
		case c == "id":
			continue // the row's storage key; event_id identifies it
		case c == "project":
			sel = append(sel, project+" AS project")
		default:
			sel = append(sel, c)
		}
	}
	if f.Project != "" {
		add(project+" = ?", f.Project)
	}
	if f.Client != "" {
		add("client = ?", f.Client)
	}
	stmt := "SELECT " + strings.Join(sel, ", ") + " FROM " + table
	if len(conds) > 0 {
		stmt += " WHERE " + strings.Join(conds, " AND ")
	}
	order := timeCol
	if table != "sessions" {
		order += ", id"
	}
	return stmt + " ORDER BY " + order, args, nil
}

// tableColumns lists a table's columns in their order.
func tableColumns(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("the store has no table %s", table)
	}
	return cols, rows.Err()
}
