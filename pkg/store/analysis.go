package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
)

// fillAnalysisSQL marks what is stored for the analysis (internal/analysis, migration 0006):
// file_clients and shared_files are counted here in one pass, every session is marked with a
// since_ts past its last action (its files are counted already) and every project's patterns are
// due. The writer's analysis loop does the rest.
var fillAnalysisSQL = []string{
	fileClientsSQL("target != ''"),
	sharedFilesSQL("1"),
	`INSERT INTO analysis_dirty (client, session_id, since_ts)
	 SELECT client, session_id, max(ts) + 1 FROM actions WHERE session_id != '' GROUP BY client, session_id`,
	`INSERT INTO pattern_state (project, dirty, computed_at) SELECT DISTINCT project, 1, 0 FROM actions`,
}

// fileClientsSQL counts the file actions (read, edit, write) per file and client of the files
// cond selects; sharedFilesSQL keeps those of them that more than one client touched. The unary +
// keeps SQLite on the (project, target) index for one file, not on (project, type), which reads
// every file action of the project.
func fileClientsSQL(cond string) string {
	return `INSERT INTO file_clients (project, target, client, actions, first_ts, last_ts)
	 SELECT project, target, client, count(*), min(ts), max(ts) FROM actions
	  WHERE ` + cond + ` AND +type IN ('read_file', 'edit_file', 'write_file')
	  GROUP BY project, target, client`
}

func sharedFilesSQL(cond string) string {
	return `INSERT INTO shared_files (project, target, clients, n_clients, actions, first_ts, last_ts)
	 SELECT project, target, group_concat(client, ','), count(*), sum(actions), min(first_ts), max(last_ts)
	   FROM (SELECT * FROM file_clients WHERE ` + cond + ` ORDER BY project, target, client)
	  GROUP BY project, target HAVING count(*) > 1`
}

// markPatternsSQL marks a project's patterns for the writer's analysis loop.
const markPatternsSQL = `INSERT INTO pattern_state (project, dirty, computed_at) VALUES (?, 1, 0)
	ON CONFLICT (project) DO UPDATE SET dirty = 1`

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

// RefreshFileClients recomputes one file's per-client counts (file_clients) and whether several
// clients touched it (shared_files) from its actions.
func RefreshFileClients(ctx context.Context, tx *sql.Tx, project, target string) error {
	f, err := NewFileClients(ctx, tx)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Refresh(ctx, project, target)
}

// FileClients is RefreshFileClients for many files in one transaction: its statements are
// prepared once (preparing them for each file cost more than running them).
type FileClients struct{ stmts []*sql.Stmt }

// NewFileClients prepares the statements in tx; Close releases them.
func NewFileClients(ctx context.Context, tx *sql.Tx) (*FileClients, error) {
	const file = "project = ? AND target = ?"
	f := &FileClients{}
	for _, q := range []string{"DELETE FROM file_clients WHERE " + file, fileClientsSQL(file),
		"DELETE FROM shared_files WHERE " + file, sharedFilesSQL(file)} {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("refresh files: %w", err)
		}
		f.stmts = append(f.stmts, st)
	}
	return f, nil
}

// Refresh recomputes one file's rows.
func (f *FileClients) Refresh(ctx context.Context, project, target string) error {
	for _, st := range f.stmts {
		if _, err := st.ExecContext(ctx, project, target); err != nil {
			return fmt.Errorf("refresh file %s: %w", target, err)
		}
	}
	return nil
}

// Close releases the statements.
func (f *FileClients) Close() {
	for _, st := range f.stmts {
		st.Close()
	}
}

// prunedActions collects what deleting actions changes in the analysis: their sessions are marked
// for the writer's analysis loop, their files recounted, in the deleting transaction.
type prunedActions struct {
	sessions map[sessionKey]bool
	files    map[[2]string]bool
	projects map[string]bool
}

// note reads what the analysis needs of the action with this id before it is deleted.
func (p *prunedActions) note(ctx context.Context, tx *sql.Tx, id int64) error {
	var client, session, project, target, typ string
	err := tx.QueryRowContext(ctx, `SELECT client, session_id, project, target, type FROM actions WHERE id = ?`, id).
		Scan(&client, &session, &project, &target, &typ)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.sessions == nil {
		p.sessions, p.files, p.projects = map[sessionKey]bool{}, map[[2]string]bool{}, map[string]bool{}
	}
	if session != "" {
		p.sessions[sessionKey{client, session}] = true
	}
	p.projects[project] = true
	if target != "" && (typ == "read_file" || typ == "edit_file" || typ == "write_file") {
		p.files[[2]string{project, target}] = true
	}
	return nil
}

// apply, after the deletes, recounts the files and marks the sessions (their files are counted
// here, so the mark's since_ts is past any action) and their projects' patterns.
func (p *prunedActions) apply(ctx context.Context, tx *sql.Tx) error {
	if len(p.files) > 0 {
		fc, err := NewFileClients(ctx, tx)
		if err != nil {
			return err
		}
		defer fc.Close()
		for f := range p.files {
			if err := fc.Refresh(ctx, f[0], f[1]); err != nil {
				return err
			}
		}
	}
	for k := range p.sessions {
		if _, err := tx.ExecContext(ctx, analysisDirtySQL, k.client, k.id, int64(math.MaxInt64)); err != nil {
			return err
		}
	}
	// Their projects' patterns were counted from the deleted actions too.
	for pr := range p.projects {
		if _, err := tx.ExecContext(ctx, markPatternsSQL, pr); err != nil {
			return err
		}
	}
	return nil
}

// MarkPatterns marks a project's patterns for the writer's analysis loop, in the writer's
// transaction.
func MarkPatterns(ctx context.Context, tx *sql.Tx, project string) error {
	_, err := tx.ExecContext(ctx, markPatternsSQL, project)
	return err
}

// ClearAnalysisMark clears a session's mark for the analysis (analysis_dirty) unless a batch marked
// it again since it was read (its generation is no longer gen).
func ClearAnalysisMark(ctx context.Context, tx *sql.Tx, client, sessionID string, gen int64) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM analysis_dirty WHERE client = ? AND session_id = ? AND gen = ?`, client, sessionID, gen)
	return err
}

// SessionAnalysis is a session's session_analysis row, as the writer's analysis loop computes it.
type SessionAnalysis struct {
	Project                                            string
	FirstTs, LastTs                                    int64
	Actions, Failures, Completed                       int64
	Reads, Edits, Commands, Searches, Files, Agents    int64
	StaleRereads, UnclassifiedRereads, CrossAgentFiles int64
	RepeatedCommands                                   int64
	ErrorRate, Redundancy, Exploration                 float64
	Score                                              int64
}

// SessionReread is a session_rereads row: a file the session read more than once.
type SessionReread struct {
	Target, Project                    string
	Reads, Stale, Unclassified, Agents int64
	LastTs                             int64
}

// SessionRepeat is a session_repeats row: a command the session ran more than once.
type SessionRepeat struct {
	Command, Project      string
	Runs, Repeats, LastTs int64
}

// ReplaceSessionAnalysis replaces a session's analysis rows (session_analysis, session_rereads,
// session_repeats) in the writer's transaction: s nil deletes them (the session has no action
// left). analyzedAt is the row's analyzed_at (Unix ms).
func ReplaceSessionAnalysis(ctx context.Context, tx *sql.Tx, client, sessionID string, s *SessionAnalysis,
	rereads []SessionReread, repeats []SessionRepeat, analyzedAt int64) error {
	for _, q := range []string{`DELETE FROM session_rereads WHERE client = ? AND session_id = ?`,
		`DELETE FROM session_repeats WHERE client = ? AND session_id = ?`,
		`DELETE FROM session_analysis WHERE client = ? AND session_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, client, sessionID); err != nil {
			return err
		}
	}
	if s != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_analysis (client, session_id, project, first_ts, last_ts,
			actions, failures, completed, reads, edits, commands, searches, files, agents, stale_rereads,
			unclassified_rereads, cross_agent_files, repeated_commands, error_rate, redundancy, exploration, score,
			analyzed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			client, sessionID, s.Project, s.FirstTs, s.LastTs, s.Actions, s.Failures, s.Completed, s.Reads, s.Edits,
			s.Commands, s.Searches, s.Files, s.Agents, s.StaleRereads, s.UnclassifiedRereads, s.CrossAgentFiles,
			s.RepeatedCommands, s.ErrorRate, s.Redundancy, s.Exploration, s.Score, analyzedAt); err != nil {
			return err
		}
	}
	if len(rereads) > 0 {
		st, err := tx.PrepareContext(ctx, `INSERT INTO session_rereads (client, session_id, target, project, reads,
			stale, unclassified, agents, last_ts) VALUES (?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range rereads {
			if _, err := st.ExecContext(ctx, client, sessionID, r.Target, r.Project, r.Reads, r.Stale, r.Unclassified, r.Agents, r.LastTs); err != nil {
				return err
			}
		}
	}
	if len(repeats) > 0 {
		st, err := tx.PrepareContext(ctx, `INSERT INTO session_repeats (client, session_id, command, project, runs,
			repeats, last_ts) VALUES (?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, r := range repeats {
			if _, err := st.ExecContext(ctx, client, sessionID, r.Command, r.Project, r.Runs, r.Repeats, r.LastTs); err != nil {
				return err
			}
		}
	}
	return nil
}

// Pattern is a patterns row: a habit the writer's analysis loop found in a project's sessions.
type Pattern struct {
	Kind, Key, Detail string
	Confidence        float64 // the ratio of support over opportunities, undecayed
	Occurrences       int64
	LastSeen          int64
}

// ReplacePatterns replaces a project's patterns and clears its mark (pattern_state), recording
// computedAt (Unix ms, when the computation began) in the writer's transaction.
func ReplacePatterns(ctx context.Context, tx *sql.Tx, project string, patterns []Pattern, computedAt int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM patterns WHERE project = ?`, project); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO patterns (project, kind, key, detail, confidence, occurrences, last_seen)
		VALUES (?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, p := range patterns {
		if _, err := st.ExecContext(ctx, project, p.Kind, p.Key, p.Detail, p.Confidence, p.Occurrences, p.LastSeen); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pattern_state SET dirty = 0, computed_at = ? WHERE project = ?`, computedAt, project); err != nil {
		return err
	}
	return nil
}
