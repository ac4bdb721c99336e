package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// RollupsKept reports whether the store has the hourly rollups, and a daily one kept in this zone.
func RollupsKept(ctx context.Context, db Querier) (hourly, daily bool, err error) {
	return rollupsFor(ctx, db)
}

// ToolCallsBySession counts the tool calls of each of sessions (by id, of any client) in f's
// window (from Since to now), project, client and member, keyed by client and session id.
func ToolCallsBySession(ctx context.Context, db Querier, f Filter, sessions []string) (map[[2]string]int64, error) {
	out := map[[2]string]int64{}
	if len(sessions) == 0 {
		return out, nil
	}
	src, args, err := actionsSource(ctx, db, f, false)
	if err != nil {
		return nil, err
	}
	ph := make([]string, len(sessions))
	for i, id := range sessions {
		ph[i] = fmt.Sprintf(":tc%d", i)
		args = append(args, sql.Named(fmt.Sprintf("tc%d", i), id))
	}
	src = "SELECT * FROM (" + src + ") WHERE session_id IN (" + strings.Join(ph, ", ") + ")"
	rows, err := db.QueryContext(ctx, "SELECT client, session_id, sum(actions) FROM ("+src+") GROUP BY client, session_id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var cl, id string
		var n int64
		if err := rows.Scan(&cl, &id, &n); err != nil {
			return nil, err
		}
		out[[2]string{cl, id}] = n
	}
	return out, rows.Err()
}

// ActivityRow is one client's tool calls in one bucket of time.
type ActivityRow struct {
	Bucket   int64 // store.LocalBucketSQL's value: the bucket's local start, ms
	Client   string
	Actions  int64
	Failures int64
}

// ActionActivity reads f's tool calls (window, project, client, member) by local hour or day
// (unit) and client, in bucket order, in one pass over the rollups and the raw edge. now is the
// end of the window the buckets are placed in (store.LocalBucketSQL).
func ActionActivity(ctx context.Context, db Querier, f Filter, unit string, now time.Time) ([]ActivityRow, error) {
	src, args, err := actionsSource(ctx, db, f, unit == "day")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+store.LocalBucketSQL("ts", unit, f.Since, now)+" AS b, client, sum(actions), sum(failures) FROM ("+src+") GROUP BY b, client ORDER BY b", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActivityRow
	for rows.Next() {
		var r ActivityRow
		if err := rows.Scan(&r.Bucket, &r.Client, &r.Actions, &r.Failures); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
