package dash

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// toolRow is one client's use of one tool in the window.
type toolRow struct {
	Client        string  `json:"client"`
	Tool          string  `json:"tool"`
	Calls         int64   `json:"calls"`
	Failures      int64   `json:"failures"`
	Unknown       int64   `json:"unknown"` // calls whose result was not seen
	SuccessRate   float64 `json:"success_rate"`
	AvgDurationMs float64 `json:"avg_duration_ms"`
}

// mixSeries is one action type's count per bucket.
type mixSeries struct {
	Type   string  `json:"type"`
	Total  int64   `json:"total"`
	Counts []int64 `json:"counts"`
}

// maxMixTypes is how many action types the mix chart draws; the rest are summed as "other".
const maxMixTypes = 8

// toolsAPI answers /api/tools: per client, each tool's volume, failures and success rate, and
// the mix of action types per hour or day.
func (s *Server) toolsAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store  bool        `json:"store"`
		Tools  []toolRow   `json:"tools"`
		Unit   string      `json:"unit"`
		Labels []string    `json:"labels"`
		Mix    []mixSeries `json:"mix"`
	}{filters: f, Tools: []toolRow{}, Unit: activityUnit(f, q.now), Labels: []string{}, Mix: []mixSeries{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	src, args, err := actionsSource(ctx, db, f, out.Unit == "day")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT client, tool, sum(actions), sum(failures), sum(pending),
       coalesce(sum(duration_ms) * 1.0 / nullif(sum(timed), 0), 0)
  FROM (`+src+`) WHERE tool != '' AND type NOT IN `+lifecycleTypes+` GROUP BY client, tool ORDER BY sum(actions) DESC, client, tool LIMIT 500`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r toolRow
		if err := rows.Scan(&r.Client, &r.Tool, &r.Calls, &r.Failures, &r.Unknown, &r.AvgDurationMs); err != nil {
			rows.Close()
			return nil, err
		}
		if known := r.Calls - r.Unknown; known > 0 {
			r.SuccessRate = float64(known-r.Failures) / float64(known)
		}
		out.Tools = append(out.Tools, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out.Labels, out.Mix, err = actionMix(ctx, db, f, out.Unit, q.now)
	return out, err
}

// actionMix counts actions per type and local hour or day; the maxMixTypes largest types keep
// their own series.
func actionMix(ctx context.Context, db *sql.DB, f filters, unit string, now time.Time) ([]string, []mixSeries, error) {
	src, args, err := actionsSource(ctx, db, f, unit == "day")
	if err != nil {
		return nil, nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+store.LocalBucketSQL("ts", unit, f.Since, now)+" AS b, type, sum(actions) FROM ("+src+") GROUP BY b, type ORDER BY b", args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	labels := []string{}
	byType := map[string]map[int]int64{}
	totals := map[string]int64{}
	for rows.Next() {
		var ms int64
		var typ string
		var n int64
		if err := rows.Scan(&ms, &typ, &n); err != nil {
			return nil, nil, err
		}
		b, _ := bucketLabel(ms, unit)
		if len(labels) == 0 || labels[len(labels)-1] != b {
			labels = append(labels, b)
		}
		if byType[typ] == nil {
			byType[typ] = map[int]int64{}
		}
		byType[typ][len(labels)-1] += n
		totals[typ] += n
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	types := make([]string, 0, len(totals))
	for t := range totals {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b)) })
	series := []mixSeries{}
	var other *mixSeries
	for i, t := range types {
		target := &mixSeries{Type: t, Counts: make([]int64, len(labels))}
		if i >= maxMixTypes {
			if other == nil {
				other = &mixSeries{Type: "other", Counts: make([]int64, len(labels))}
			}
			target = other
		}
		for j, n := range byType[t] {
			target.Counts[j] += n
			target.Total += n
		}
		if i < maxMixTypes {
			series = append(series, *target)
		}
	}
	if other != nil {
		series = append(series, *other)
	}
	return labels, series, nil
}

// compressionRow sums one mechanism's savings on one model.
type compressionRow struct {
	Mechanism    string  `json:"mechanism"`
	Model        string  `json:"model"`
	Events       int64   `json:"events"`
	BytesBefore  int64   `json:"bytes_before"`
	BytesAfter   int64   `json:"bytes_after"`
	TokensBefore int64   `json:"tokens_before"`
	TokensAfter  int64   `json:"tokens_after"`
	SavedRatio   float64 `json:"saved_ratio"` // of the bytes
	// SavedUSD prices the tokens saved at the model's input price (estimates: a quarter of the bytes).
	SavedUSD float64 `json:"saved_usd"`
}

// compressionEvent is one recent request the proxy rewrote.
type compressionEvent struct {
	T            int64   `json:"t"` // ms
	Client       string  `json:"client"`
	SessionID    string  `json:"session_id"`
	Mechanism    string  `json:"mechanism"`
	Mode         string  `json:"mode"`
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	BytesBefore  int64   `json:"bytes_before"`
	BytesAfter   int64   `json:"bytes_after"`
	TokensBefore int64   `json:"tokens_before"`
	TokensAfter  int64   `json:"tokens_after"`
	SavedUSD     float64 `json:"saved_usd"`
	StashID      string  `json:"stash_id,omitempty"`
}

// compressionAPI answers /api/compression: what the proxy's request compression saved, by
// mechanism and model, and the latest events.
func (s *Server) compressionAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store  bool               `json:"store"`
		Total  compressionRow     `json:"total"`
		Groups []compressionRow   `json:"groups"`
		Recent []compressionEvent `json:"recent"`
	}{filters: f, Groups: []compressionRow{}, Recent: []compressionEvent{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	w, args := filterWhere(f, "ts")
	rows, err := db.QueryContext(ctx, `SELECT mechanism, model, count(*), sum(bytes_before), sum(bytes_after), sum(tokens_before), sum(tokens_after), sum(saved_usd)
  FROM compression_events`+w+` GROUP BY mechanism, model ORDER BY sum(bytes_before) - sum(bytes_after) DESC, mechanism, model`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var r compressionRow
		if err := rows.Scan(&r.Mechanism, &r.Model, &r.Events, &r.BytesBefore, &r.BytesAfter, &r.TokensBefore, &r.TokensAfter, &r.SavedUSD); err != nil {
			rows.Close()
			return nil, err
		}
		r.SavedRatio = savedRatio(r.BytesBefore, r.BytesAfter)
		out.Groups = append(out.Groups, r)
		out.Total.Events += r.Events
		out.Total.BytesBefore += r.BytesBefore
		out.Total.BytesAfter += r.BytesAfter
		out.Total.TokensBefore += r.TokensBefore
		out.Total.TokensAfter += r.TokensAfter
		out.Total.SavedUSD += r.SavedUSD
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out.Total.SavedRatio = savedRatio(out.Total.BytesBefore, out.Total.BytesAfter)
	rows, err = db.QueryContext(ctx, `SELECT ts, client, session_id, mechanism, mode, provider, model, bytes_before, bytes_after, tokens_before, tokens_after, saved_usd, stash_id
  FROM compression_events`+w+` ORDER BY ts DESC, id DESC LIMIT 50`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var e compressionEvent
		if err := rows.Scan(&e.T, &e.Client, &e.SessionID, &e.Mechanism, &e.Mode, &e.Provider, &e.Model, &e.BytesBefore, &e.BytesAfter, &e.TokensBefore, &e.TokensAfter, &e.SavedUSD, &e.StashID); err != nil {
			return nil, err
		}
		out.Recent = append(out.Recent, e)
	}
	return out, rows.Err()
}

func savedRatio(before, after int64) float64 {
	if before <= 0 {
		return 0
	}
	return float64(before-after) / float64(before)
}
