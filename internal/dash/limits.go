package dash

import (
	"context"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// Plan usage limits (issue 31): the providers' own figures of each window of a subscription's
// usage limit, as observer-proxy and the Codex reader keep them (query.Limits), and their history
// (query.LimitHistory). The Overview shows one gauge per window and a chart of the history.

// limitsJSON is /api/limits's answer.
type limitsJSON struct {
	Store bool `json:"store"`
	// Since is the start of the history (zero: all of it).
	Since time.Time `json:"since,omitzero"`
	// Seen says a provider figure was ever seen: without one, Limits is empty and Estimated holds
	// observer's token-based estimate.
	Seen bool `json:"seen"`
	// Limits are the latest figure of every window, measured by the provider.
	Limits []query.Limit `json:"limits"`
	// History is every distinct snapshot still seen after Since, oldest first.
	History []query.LimitPoint `json:"history"`
	// Estimated is set only when no provider figure was ever seen: the token-based 5-hour blocks
	// active now, observer's estimate, never the provider's figure.
	Estimated *estimatedBlocks `json:"estimated,omitempty"`
}

type estimatedBlocks struct {
	Estimated bool          `json:"estimated"` // always true: these are not measured
	Note      string        `json:"note"`
	Blocks    []query.Block `json:"blocks"`
}

// limitsAPI answers /api/limits: since (a window as the other endpoints take it: 7d by default,
// all for the whole history) bounds the history; member keeps one team member's windows (on a
// team hub's store; "" keeps every window).
func (s *Server) limitsAPI(ctx context.Context, q *reqParams) (any, error) {
	window := q.str("since")
	if window == "" {
		window = "7d"
	}
	since, err := parseWindow(window, q.now)
	if err != nil {
		q.fail(badParam("since", "%v", err))
	}
	member := q.name("member")
	if err := q.done(); err != nil {
		return nil, err
	}
	if !since.IsZero() {
		since = since.UTC()
	}
	out := limitsJSON{Since: since, Limits: []query.Limit{}, History: []query.LimitPoint{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	ls, err := query.Limits(ctx, db, q.now)
	if err != nil {
		return nil, err
	}
	out.Seen = len(ls) > 0
	for _, l := range ls {
		if member == "" || l.Member == member {
			out.Limits = append(out.Limits, l)
		}
	}
	hist, err := query.LimitHistory(ctx, db, since)
	if err != nil {
		return nil, err
	}
	for _, p := range hist {
		if member == "" || p.Member == member {
			out.History = append(out.History, p)
		}
	}
	if !out.Seen {
		blocks, err := query.ActiveBlocks(ctx, db, q.now)
		if err != nil {
			return nil, err
		}
		out.Estimated = &estimatedBlocks{Estimated: true, Note: query.EstimatedBlocksNote, Blocks: blocks}
	}
	return out, nil
}
