package query

import "context"

// ProjectNamed reads the path of the most recently active recorded project of a base name; ok is
// false when there is none.
func ProjectNamed(ctx context.Context, db Querier, name string) (path string, ok bool, err error) {
	err = db.QueryRowContext(ctx, `SELECT path FROM projects WHERE name = ? ORDER BY last_seen DESC LIMIT 1`, name).Scan(&path)
	return rowFound(path, err)
}

// ProjectRecorded reports whether the store records a project at path.
func ProjectRecorded(ctx context.Context, db Querier, path string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM projects WHERE path = ?`, path).Scan(&n)
	return n > 0, err
}
