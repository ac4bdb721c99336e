package query

import (
	"context"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// ToolUse is one client's use of one tool in a window.
type ToolUse struct {
	Client        string  `json:"client"`
	Tool          string  `json:"tool"`
	Calls         int64   `json:"calls"`
	Failures      int64   `json:"failures"`
	Unknown       int64   `json:"unknown"` // calls whose result was not seen
	SuccessRate   float64 `json:"success_rate"`
	AvgDurationMs float64 `json:"avg_duration_ms"`
}

// ToolUses reads, per client, each tool's calls, failures, success rate and mean duration in f's
// window, project, client and member, the most used first, at most 500: not the actions that name
// no tool, nor the lifecycle records. daily reads whole local days from the daily rollup where it
// can (a window charted by day).
func ToolUses(ctx context.Context, db Querier, f Filter, daily bool) ([]ToolUse, error) {
	src, args, err := actionsSource(ctx, db, f, daily)
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT client, tool, sum(actions), sum(failures), sum(pending),
       coalesce(sum(duration_ms) * 1.0 / nullif(sum(timed), 0), 0)
  FROM (`+src+`) WHERE tool != '' AND type NOT IN `+lifecycleTypes+` GROUP BY client, tool ORDER BY sum(actions) DESC, client, tool LIMIT 500`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ToolUse
	for rows.Next() {
		var r ToolUse
		if err := rows.Scan(&r.Client, &r.Tool, &r.Calls, &r.Failures, &r.Unknown, &r.AvgDurationMs); err != nil {
			return nil, err
		}
		if known := r.Calls - r.Unknown; known > 0 {
			r.SuccessRate = float64(known-r.Failures) / float64(known)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// TypeBucket is the actions of one type in one local hour or day.
type TypeBucket struct {
	Start   int64 // ms: store.LocalBucketSQL's start of the hour or day
	Type    string
	Actions int64
}

// ActionTypeBuckets counts the actions of f's window, project, client and member per type and
// local hour or day (unit), the earliest bucket first; now bounds the zone offsets it reads.
func ActionTypeBuckets(ctx context.Context, db Querier, f Filter, unit string, now time.Time) ([]TypeBucket, error) {
	src, args, err := actionsSource(ctx, db, f, unit == "day")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+store.LocalBucketSQL("ts", unit, f.Since, now)+" AS b, type, sum(actions) FROM ("+src+") GROUP BY b, type ORDER BY b", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []TypeBucket
	for rows.Next() {
		var b TypeBucket
		if err := rows.Scan(&b.Start, &b.Type, &b.Actions); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
