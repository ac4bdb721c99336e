package query

import (
	"context"
	"database/sql"
)

// DB is the read connection a surface holds (store.OpenReader's) and hands to the reads: the
// surfaces name it without importing database/sql, and run no statement of their own.
type DB = *sql.DB

// Querier is what the session, action, file and command reads run their statements on: a
// *sql.DB, or a Traced one.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Traced is a *sql.DB that shows each statement and its arguments to Trace, when set, before
// running it. The MCP server's tests check the query plan of every statement a tool runs
// through it.
type Traced struct {
	*sql.DB
	Trace func(query string, args []any)
}

// QueryContext traces the statement and runs it.
func (d *Traced) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if d.Trace != nil {
		d.Trace(query, args)
	}
	return d.DB.QueryContext(ctx, query, args...)
}

// QueryRowContext traces the statement and runs it.
func (d *Traced) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if d.Trace != nil {
		d.Trace(query, args)
	}
	return d.DB.QueryRowContext(ctx, query, args...)
}

// hasTable reports whether the store has table name: a store that the running version's writer
// has not migrated yet lacks the tables that came later, and a read of one has nothing.
func hasTable(ctx context.Context, db Querier, name string) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, name).Scan(&n)
	return n > 0, err
}
