package query

import (
	"context"
	"database/sql"
	"strings"
	"unicode/utf8"
)

// LastTestRun reads the latest command of a session or, without one, of a project whose
// command line contains one of patterns (a test runner's name: "go test", "pytest", ...);
// ok is false when there is none. A project's commands are walked newest first through
// actions(project, type, ts), a session's through its own index.
func LastTestRun(ctx context.Context, db Querier, in ActionScope, patterns []string) (a ActionRow, ok bool, err error) {
	var where string
	var args []any
	if in.SessionID != "" {
		where, args = `session_id = ? AND +type = 'run_command'`, []any{in.SessionID}
	} else {
		where, args = `project = ? AND type = 'run_command'`, []any{in.Project}
	}
	conds := make([]string, len(patterns))
	for i, p := range patterns {
		conds[i] = "target LIKE ?"
		args = append(args, "%"+p+"%")
	}
	acts, err := queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE `+where+` AND (`+strings.Join(conds, " OR ")+`)`+
		` ORDER BY ts DESC, id DESC LIMIT 1`, args...)
	if err != nil || len(acts) == 0 {
		return a, false, err
	}
	return acts[0], true, nil
}

// LastCommandRun reads the latest run of command cmd in a project (of one session when
// sessionID is set), or with prefix the latest command that starts with cmd; ok is false when
// there is none.
func LastCommandRun(ctx context.Context, db Querier, project, cmd, sessionID string, prefix bool) (a ActionRow, ok bool, err error) {
	sessCond, sessArgs := "", []any{}
	if sessionID != "" {
		sessCond, sessArgs = ` AND session_id = ?`, []any{sessionID}
	}
	var acts []ActionRow
	if !prefix {
		acts, err = queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE project = ? AND target = ?
		AND +type = 'run_command'`+sessCond+` ORDER BY ts DESC, id DESC LIMIT 1`, append([]any{project, cmd}, sessArgs...)...)
	} else {
		// U+10FFFF sorts after every character of a command: the target index serves the prefix as a range.
		acts, err = queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE project = ? AND target >= ? AND target < ?
			AND +type = 'run_command'`+sessCond+` ORDER BY ts DESC, id DESC LIMIT 1`, append([]any{project, cmd, cmd + string(utf8.MaxRune)}, sessArgs...)...)
	}
	if err != nil || len(acts) == 0 {
		return a, false, err
	}
	return acts[0], true, nil
}

// CommandRuns counts the runs of command target in a project.
func CommandRuns(ctx context.Context, db Querier, project, target string) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND target = ? AND +type = 'run_command'`,
		project, target).Scan(&n)
	return n, err
}

// CommandsSince counts the commands run in a project after ts.
func CommandsSince(ctx context.Context, db Querier, project string, ts int64) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND type = 'run_command' AND ts > ?`,
		project, ts).Scan(&n)
	return n, err
}

// FileEdits is the edits and writes of one file.
type FileEdits struct {
	Path string
	N    int
	Last int64 // ms, the latest (EditedFiles only)
}

// EditsSince lists the files a project's agents edited or wrote after ts, the most recently
// touched first. The edits are selected in a materialized CTE: grouped in one query, the planner
// would rather walk the project's every action in target order through actions(project, target,
// ts) than sort the few rows after ts.
func EditsSince(ctx context.Context, db Querier, project string, ts int64) ([]FileEdits, error) {
	rows, err := db.QueryContext(ctx, `WITH r AS MATERIALIZED (SELECT target, ts FROM actions WHERE project = ?
		AND type IN ('edit_file', 'write_file') AND ts > ?)
		SELECT target, count(*) FROM r GROUP BY target ORDER BY max(ts) DESC`, project, ts)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FileEdits
	for rows.Next() {
		var f FileEdits
		if err := rows.Scan(&f.Path, &f.N); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FailureContext is an analysis of a failure, from the failure_context table.
type FailureContext struct {
	TS                                      int64 // ms
	SessionID, Kind, Target, Error, Context string
}

// FailureContexts lists a project's failure analyses, the newest first, at most n; none until an
// analysis fills the table.
func FailureContexts(ctx context.Context, db Querier, project string, n int) ([]FailureContext, error) {
	rows, err := db.QueryContext(ctx, `SELECT ts, session_id, kind, target, error, context FROM failure_context
		WHERE project = ? ORDER BY ts DESC, id DESC LIMIT ?`, project, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FailureContext
	for rows.Next() {
		var c FailureContext
		if err := rows.Scan(&c.TS, &c.SessionID, &c.Kind, &c.Target, &c.Error, &c.Context); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Prompt is a user prompt of a session.
type Prompt struct {
	TS   int64 // ms
	Text string
}

// LastPrompts lists a session's latest user prompts, the newest first, at most n.
func LastPrompts(ctx context.Context, db Querier, sessionID string, n int) ([]Prompt, error) {
	rows, err := db.QueryContext(ctx, `SELECT ts, target FROM actions WHERE session_id = ? AND +type = 'user_prompt'
		ORDER BY ts DESC, id DESC LIMIT ?`, sessionID, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Prompt
	for rows.Next() {
		var p Prompt
		if err := rows.Scan(&p.TS, &p.Text); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Compactions counts a session's context compactions and reads the time of the last (when n > 0).
func Compactions(ctx context.Context, db Querier, sessionID string) (n int, last int64, err error) {
	var max sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT count(*), max(ts) FROM actions WHERE session_id = ? AND +type = 'context_compacted'`,
		sessionID).Scan(&n, &max)
	return n, max.Int64, err
}
