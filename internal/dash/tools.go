package dash

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// toolRow is one client's use of one tool in the window.
type toolRow = query.ToolUse

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
	tools, err := query.ToolUses(ctx, db, f.readFilter(), out.Unit == "day")
	if err != nil {
		return nil, err
	}
	out.Tools = append(out.Tools, tools...)
	out.Labels, out.Mix, err = actionMix(ctx, db, f, out.Unit, q.now)
	return out, err
}

// actionMix counts actions per type and local hour or day; the maxMixTypes largest types keep
// their own series.
func actionMix(ctx context.Context, db query.Querier, f filters, unit string, now time.Time) ([]string, []mixSeries, error) {
	buckets, err := query.ActionTypeBuckets(ctx, db, f.readFilter(), unit, now)
	if err != nil {
		return nil, nil, err
	}
	labels := []string{}
	byType := map[string]map[int]int64{}
	totals := map[string]int64{}
	for _, tb := range buckets {
		typ, n := tb.Type, tb.Actions
		b, _ := bucketLabel(tb.Start, unit)
		if len(labels) == 0 || labels[len(labels)-1] != b {
			labels = append(labels, b)
		}
		if byType[typ] == nil {
			byType[typ] = map[int]int64{}
		}
		byType[typ][len(labels)-1] += n
		totals[typ] += n
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
type compressionEvent = query.CompressionEvent

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
	groups, err := query.CompressionGroups(ctx, db, f.readFilter())
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		r := compressionRow{Mechanism: g.Mechanism, Model: g.Model, Events: g.Events, BytesBefore: g.BytesBefore, BytesAfter: g.BytesAfter,
			TokensBefore: g.TokensBefore, TokensAfter: g.TokensAfter, SavedUSD: g.SavedUSD}
		r.SavedRatio = savedRatio(r.BytesBefore, r.BytesAfter)
		out.Groups = append(out.Groups, r)
		out.Total.Events += r.Events
		out.Total.BytesBefore += r.BytesBefore
		out.Total.BytesAfter += r.BytesAfter
		out.Total.TokensBefore += r.TokensBefore
		out.Total.TokensAfter += r.TokensAfter
		out.Total.SavedUSD += r.SavedUSD
	}
	out.Total.SavedRatio = savedRatio(out.Total.BytesBefore, out.Total.BytesAfter)
	recent, err := query.CompressionEvents(ctx, db, f.readFilter(), 50)
	if err != nil {
		return nil, err
	}
	out.Recent = append(out.Recent, recent...)
	return out, nil
}

func savedRatio(before, after int64) float64 {
	if before <= 0 {
		return 0
	}
	return float64(before-after) / float64(before)
}
