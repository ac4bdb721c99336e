package query

import (
	"context"
	"database/sql"
	"strings"
)

// EditedFiles lists the files a session edited or wrote, the most recently touched first.
func EditedFiles(ctx context.Context, db Querier, sessionID string) ([]FileEdits, error) {
	rows, err := db.QueryContext(ctx, `SELECT target, count(*), max(ts) FROM actions
		WHERE session_id = ? AND +type IN ('edit_file', 'write_file') AND target != '' GROUP BY target ORDER BY max(ts) DESC`, sessionID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FileEdits
	for rows.Next() {
		var f FileEdits
		if err := rows.Scan(&f.Path, &f.N, &f.Last); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FileAction is an action on a file.
type FileAction struct {
	ID        int64
	TS        int64 // ms
	SessionID string
	Type      string
	Success   *bool
	Error     string // FileActions only
	Freshness string // FileActions only
}

// FileRef is a file of a project, in the two forms the store may record it under: relative to
// the project and absolute.
type FileRef struct {
	Project, Rel, Abs string
}

// LastActionOn reads the latest action of one of types on a file (of one session when
// sessionID is set); ok is false when there is none.
func LastActionOn(ctx context.Context, db Querier, f FileRef, types []string, sessionID string) (a FileAction, ok bool, err error) {
	quoted := make([]string, len(types))
	for i, t := range types {
		quoted[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	// +type: the file's few actions through actions(project, target, ts), not the project's every
	// read newest first through actions(project, type, ts) until one is of this file.
	q := `SELECT id, ts, session_id, type, success FROM actions WHERE project = ? AND target IN (?, ?) AND +type IN (` +
		strings.Join(quoted, ",") + `)`
	args := []any{f.Project, f.Rel, f.Abs}
	if sessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, sessionID)
	}
	var success sql.NullBool
	err = db.QueryRowContext(ctx, q+` ORDER BY ts DESC, id DESC LIMIT 1`, args...).Scan(&a.ID, &a.TS, &a.SessionID, &a.Type, &success)
	a.Success = boolOf(success)
	return rowFound(a, err)
}

// FileState is the content hash observer-watch took of a file at a live read, edit or write.
type FileState struct {
	SessionID, Hash string // Hash "": the file was missing
	Size, SeenAt    int64
}

// LastFileState reads the latest state recorded of a file (by one session when sessionID is
// set); ok is false when there is none.
func LastFileState(ctx context.Context, db Querier, f FileRef, sessionID string) (s FileState, ok bool, err error) {
	q := `SELECT session_id, hash, size, seen_at FROM file_state WHERE project = ? AND path IN (?, ?)`
	args := []any{f.Project, f.Rel, f.Abs}
	if sessionID != "" {
		q += ` AND session_id = ?`
		args = append(args, sessionID)
	}
	err = db.QueryRowContext(ctx, q+` ORDER BY seen_at DESC LIMIT 1`, args...).Scan(&s.SessionID, &s.Hash, &s.Size, &s.SeenAt)
	return rowFound(s, err)
}

// CountFileActions counts the actions recorded on a file.
func CountFileActions(ctx context.Context, db Querier, f FileRef) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND target IN (?, ?)`,
		f.Project, f.Rel, f.Abs).Scan(&n)
	return n, err
}

// FileActions lists the actions on a file, the newest first, at most limit.
func FileActions(ctx context.Context, db Querier, f FileRef, limit int) ([]FileAction, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, ts, session_id, type, success, error, freshness FROM actions
		WHERE project = ? AND target IN (?, ?) ORDER BY ts DESC, id DESC LIMIT ?`, f.Project, f.Rel, f.Abs, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []FileAction
	for rows.Next() {
		var a FileAction
		var success sql.NullBool
		if err := rows.Scan(&a.ID, &a.TS, &a.SessionID, &a.Type, &success, &a.Error, &a.Freshness); err != nil {
			return nil, err
		}
		a.Success = boolOf(success)
		out = append(out, a)
	}
	return out, rows.Err()
}

// boolOf is a nullable column's value: nil for NULL.
func boolOf(v sql.NullBool) *bool {
	if !v.Valid {
		return nil
	}
	b := v.Bool
	return &b
}
