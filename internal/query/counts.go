package query

import (
	"context"
	"database/sql"
	"fmt"
)

// Counts are the store's all-time counters, for the metrics endpoint: actions by client and
// type, model turns by client and model (Cost's figures), sessions by client, and the
// quarantined messages and sessions waiting for analysis.
type Counts struct {
	Actions         []ActionCount
	Turns           []CostRow // grouped by client and model
	Sessions        map[string]int64
	Quarantined     int64
	AnalysisPending int64
}

// ActionCount is the actions of one client and type, and how many of them failed.
type ActionCount struct {
	Client, Type      string
	Actions, Failures int64
}

// StoreCounts reads Counts from the writer's rollups (actions_daily, or actions_hourly where the
// writer keeps no daily rollup), or from the raw rows of a store without them.
func StoreCounts(ctx context.Context, db *sql.DB) (*Counts, error) {
	tables, err := tableSet(ctx, db)
	if err != nil {
		return nil, err
	}
	c := &Counts{Sessions: map[string]int64{}}
	actions := "SELECT client, type, count(*), coalesce(sum(success = 0), 0) FROM actions GROUP BY client, type"
	var zone string
	if tables["actions_daily"] {
		db.QueryRowContext(ctx, "SELECT value FROM rollup_state WHERE key = 'zone'").Scan(&zone)
	}
	switch {
	case zone != "":
		actions = "SELECT client, type, sum(actions), sum(failures) FROM actions_daily GROUP BY client, type"
	case tables["actions_hourly"]:
		actions = "SELECT client, type, sum(actions), sum(failures) FROM actions_hourly GROUP BY client, type"
	}
	rows, err := db.QueryContext(ctx, actions)
	if err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	for rows.Next() {
		var a ActionCount
		var n, f sql.NullInt64
		if err := rows.Scan(&a.Client, &a.Type, &n, &f); err != nil {
			rows.Close()
			return nil, fmt.Errorf("actions: %w", err)
		}
		a.Actions, a.Failures = n.Int64, f.Int64
		c.Actions = append(c.Actions, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("actions: %w", err)
	}
	turns, err := Cost(ctx, db, CostQuery{GroupBy: []string{"client", "model"}})
	if err != nil {
		return nil, fmt.Errorf("turns: %w", err)
	}
	c.Turns = turns.Rows
	rows, err = db.QueryContext(ctx, "SELECT client, count(*) FROM sessions GROUP BY client")
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	for rows.Next() {
		var client string
		var n int64
		if err := rows.Scan(&client, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sessions: %w", err)
		}
		c.Sessions[client] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	for _, t := range []struct {
		table string
		n     *int64
	}{{"quarantine", &c.Quarantined}, {"analysis_dirty", &c.AnalysisPending}} {
		if tables[t.table] {
			if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+t.table).Scan(t.n); err != nil {
				return nil, fmt.Errorf("%s: %w", t.table, err)
			}
		}
	}
	return c, nil
}

// tableSet lists the store's tables.
func tableSet(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}
