package analysis

import (
	"context"
	"database/sql"
	"time"

	"github.com/observerhq/observer/internal/query"
)

// Filter selects what Scores reads: sessions active since Since (zero: all time), of one project
// or client when set. Limit caps the list (0: query.AnalysisLimit).
type Filter struct {
	Since   time.Time
	Project string
	Client  string
	Limit   int
}

// Scores is query.Scores for f, a non-empty sessionID selecting that session. The analysis tables
// are read by internal/query; this remains for the dashboard's session detail until it calls
// query.Scores itself.
func Scores(ctx context.Context, db *sql.DB, f Filter, sessionID string) ([]Session, error) {
	return query.Scores(ctx, db, query.AnalysisQuery{Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client, SessionID: sessionID}, Limit: f.Limit})
}
