package dash

// Discovery (/api/discovery): work the agents did twice, read through internal/query (where the
// findings are defined) from the analysis tables the writer keeps (internal/analysis). A session
// counts in the window when it acted in it, with all its findings; shared files are listed when
// touched in the window.

import (
	"context"

	"github.com/observerhq/observer/internal/query"
)

// Discovery is the answer of /api/discovery.
type Discovery struct {
	Store   bool                `json:"store"`
	Filters filters             `json:"filters"`
	Rereads []query.Reread      `json:"rereads"`
	Repeats []query.Repeat      `json:"repeats"`
	Shared  []query.SharedFile  `json:"shared_files"`
	Totals  query.DiscoveryTots `json:"totals"`
	Pending int64               `json:"pending_sessions"`
}

// analysis is the filters as the analysis reads take them (no member: the analysis has none).
func (f filters) analysis() query.AnalysisQuery {
	return query.AnalysisQuery{Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client}}
}

func (s *Server) discoveryAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	d := &Discovery{Filters: f, Rereads: []query.Reread{}, Repeats: []query.Repeat{}, Shared: []query.SharedFile{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return d, err
	}
	d.Store = true
	a, err := query.Discover(ctx, db, f.analysis())
	if err != nil {
		return nil, err
	}
	d.Rereads, d.Repeats, d.Shared, d.Totals, d.Pending = a.Rereads, a.Repeats, a.Shared, a.Totals, a.Pending
	return d, nil
}
