package dash

// Session memory (internal/memory, store migration 0016), read-only through internal/query: the
// summaries the writer keeps of each ended session epoch, shown in a session's detail
// (/api/sessions/{id}, summaries) and on the Memory tab with the observations it learned per
// project (/api/memory). query/memory.go says how each is chosen and ordered; a store written
// before session memory existed answers empty lists with memory false, rather than an error.

import (
	"context"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

const (
	memorySessions = 5   // the last sessions' summaries /api/memory lists
	maxSummaries   = 200 // a session's summaries in its detail (100 epochs, both sources)
)

// The rows of /api/memory and of a session's summaries.
type (
	SessionSummary    = query.EpochSummary
	EvidenceAction    = query.EvidenceAction
	MemoryObservation = query.MemoryObservation
	MemoryProject     = query.MemoryProject
)

// Memory is the answer of /api/memory.
type Memory struct {
	Store        bool                `json:"store"`
	Memory       bool                `json:"memory"` // the store has session memory's tables
	Filters      filters             `json:"filters"`
	Projects     []MemoryProject     `json:"projects"`
	Observations []MemoryObservation `json:"observations"`
	Total        int                 `json:"total_observations"` // before the limit
	Summaries    []SessionSummary    `json:"summaries"`          // the last sessions'
}

// memoryAPI answers /api/memory: the observations of the project (of every project without one),
// and the last sessions' summaries.
func (s *Server) memoryAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.filters()
	kind := q.name("kind")
	limit := q.intParam("limit", 50, 1, maxPageSize)
	if err := q.done(); err != nil {
		return nil, err
	}
	if kind != "" && !slices.Contains(query.ObservationKinds, kind) {
		return nil, badParam("kind", "one of %s", strings.Join(query.ObservationKinds, ", "))
	}
	m := &Memory{Filters: f, Projects: []MemoryProject{}, Observations: []MemoryObservation{}, Summaries: []SessionSummary{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return m, err
	}
	m.Store = true
	if m.Memory, err = query.HasMemory(ctx, db); err != nil || !m.Memory {
		return m, err
	}
	if m.Projects, err = query.MemoryProjects(ctx, db, f.Since); err != nil {
		return nil, err
	}
	qf := query.Filter{Since: f.Since, Project: f.Project, Client: f.Client}
	if m.Observations, m.Total, err = query.RankedObservations(ctx, db, qf, kind, limit, targetPreview, q.now); err != nil {
		return nil, err
	}
	if m.Summaries, err = query.LastSummaries(ctx, db, qf, memorySessions); err != nil {
		return nil, err
	}
	return m, nil
}

// sessionSummaries reads a session's summaries, newest epoch first; none on a store without
// session memory.
func sessionSummaries(ctx context.Context, db query.DB, sess Session) ([]SessionSummary, error) {
	return query.EpochSummaries(ctx, db, sess.Client, sess.SessionID, maxSummaries)
}
