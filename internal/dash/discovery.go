package dash

// Discovery (/api/discovery): work the agents did twice, read from the analysis tables the writer
// keeps (internal/analysis, where the findings are defined). A session counts in the window when it
// acted in it, with all its findings; shared files are listed when touched in the window.

import (
	"context"

	"github.com/observerhq/observer/internal/analysis"
)

// Discovery is the answer of /api/discovery.
type Discovery struct {
	Store   bool                   `json:"store"`
	Filters filters                `json:"filters"`
	Rereads []analysis.Reread      `json:"rereads"`
	Repeats []analysis.Repeat      `json:"repeats"`
	Shared  []analysis.SharedFile  `json:"shared_files"`
	Totals  analysis.DiscoveryTots `json:"totals"`
	Pending int64                  `json:"pending_sessions"`
}

func (f filters) analysis() analysis.Filter {
	return analysis.Filter{Since: f.Since, Project: f.Project, Client: f.Client}
}

func (s *Server) discoveryAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	if err := q.done(); err != nil {
		return nil, err
	}
	d := &Discovery{Filters: f, Rereads: []analysis.Reread{}, Repeats: []analysis.Repeat{}, Shared: []analysis.SharedFile{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return d, err
	}
	d.Store = true
	a, err := analysis.Discover(ctx, db, f.analysis())
	if err != nil {
		return nil, err
	}
	d.Rereads, d.Repeats, d.Shared, d.Totals, d.Pending = a.Rereads, a.Repeats, a.Shared, a.Totals, a.Pending
	return d, nil
}
