package query

import (
	"context"
	"database/sql"
	"fmt"
)

// Spent is the dollars Cost would total for q (its GroupBy is ignored), read several times faster:
// each part of the source (usage_hourly's whole hours, raw turns at the edges) is summed on its own
// over its one cost column. Summed over the UNION of the parts, SQLite would build every part's
// sixteen columns row by row (an aggregate over a compound subquery is not flattened). Budgets and
// the status line, which want one figure, use it.
func Spent(ctx context.Context, db Querier, q CostQuery) (float64, error) {
	q.GroupBy = nil
	parts, _, _, err := levels(ctx, db, q)
	if err != nil {
		return 0, fmt.Errorf("cost query: %w", err)
	}
	args := queryArgs(q)
	var total float64
	for _, p := range parts {
		var usd sql.NullFloat64
		if err := db.QueryRowContext(ctx, "SELECT sum(cost_usd) FROM ("+p+")", args...).Scan(&usd); err != nil {
			return 0, fmt.Errorf("cost query: %w", err)
		}
		total += usd.Float64
	}
	return total, nil
}
