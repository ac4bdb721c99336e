package dash

// Patterns (/api/patterns): habits found in the sessions, read through internal/query from the
// patterns the writer's analysis loop keeps per project (internal/analysis derives them), with
// their confidence decayed to now; patterns last seen before the window are left out.

import (
	"context"
	"slices"

	"github.com/observerhq/observer/internal/query"
)

// Patterns is the answer of /api/patterns.
type Patterns struct {
	Store    bool            `json:"store"`
	Filters  filters         `json:"filters"`
	Source   string          `json:"source"`
	Patterns []query.Pattern `json:"patterns"`
	Pending  int64           `json:"pending_projects"`
}

const patternLimit = 25

func (s *Server) patternsAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	kind := q.name("kind")
	if err := q.done(); err != nil {
		return nil, err
	}
	if kind != "" && !slices.Contains(query.PatternKinds, kind) {
		return nil, badParam("kind", "one of command_pair, co_edit, edit_then_test, hot_file")
	}
	p := &Patterns{Filters: f, Source: "analysis", Patterns: []query.Pattern{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return p, err
	}
	p.Store = true
	af := f.analysis()
	af.Limit = patternLimit
	set, err := query.Patterns(ctx, db, af, kind, 0, s.opts.Now())
	if err != nil {
		return nil, err
	}
	p.Patterns, p.Pending = set.Patterns, set.Pending
	return p, nil
}
