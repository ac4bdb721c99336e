package store

import (
	"context"
	"database/sql"
	"fmt"
)

// fillAnalysisSQL marks what is stored for the analysis (internal/analysis, migration 0006):
// file_clients and shared_files are counted here in one pass, every session is marked with a
// since_ts past its last action (its files are counted already) and every project's patterns are
// due. The writer's analysis loop does the rest.
var fillAnalysisSQL = []string{
	`INSERT INTO file_clients (project, target, client, actions, first_ts, last_ts)
	 SELECT project, target, client, count(*), min(ts), max(ts) FROM actions
	  WHERE type IN ('read_file', 'edit_file', 'write_file') AND target != ''
	  GROUP BY project, target, client`,
	`INSERT INTO shared_files (project, target, clients, n_clients, actions, first_ts, last_ts)
	 SELECT project, target, group_concat(client, ','), count(*), sum(actions), min(first_ts), max(last_ts)
	   FROM (SELECT * FROM file_clients ORDER BY project, target, client)
	  GROUP BY project, target HAVING count(*) > 1`,
	`INSERT INTO analysis_dirty (client, session_id, since_ts)
	 SELECT client, session_id, max(ts) + 1 FROM actions WHERE session_id != '' GROUP BY client, session_id`,
	`INSERT INTO pattern_state (project, dirty, computed_at) SELECT DISTINCT project, 1, 0 FROM actions`,
}

// analysisTables are the tables the analysis keeps.
var analysisTables = []string{"analysis_dirty", "session_analysis", "session_rereads", "session_repeats",
	"file_clients", "shared_files", "pattern_state", "patterns"}

func fillAnalysis(ctx context.Context, tx *sql.Tx) error {
	for _, q := range fillAnalysisSQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("fill analysis: %w", err)
		}
	}
	return nil
}

// ResetAnalysis empties the analysis tables and marks everything stored for the analysis again, in
// one transaction: for rows written around the writer (a benchmark's generator, a repair).
func (s *Store) ResetAnalysis(ctx context.Context) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, t := range analysisTables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return err
		}
	}
	if err := fillAnalysis(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
