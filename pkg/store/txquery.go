package store

import (
	"context"
	"database/sql"
)

// txQuery is a statement of a transaction on the writer's connection, used as a prepared one:
// each call runs its query through tx, and the connection keeps the statements it compiled
// (WriterStmtCache), so that a query is compiled once per connection, not once per transaction.
// A prepared statement of database/sql lives and dies with its transaction: the writer compiled
// every statement of a batch again for each batch, which cost more than storing a few of the
// proxy's turns. A query that does not compile fails when it is run.
type txQuery struct {
	tx    *sql.Tx
	query string
}

// prepare gives query as a statement of tx.
func prepare(tx *sql.Tx, query string) *txQuery { return &txQuery{tx, query} }

func (q *txQuery) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return q.tx.ExecContext(ctx, q.query, args...)
}

func (q *txQuery) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return q.tx.QueryContext(ctx, q.query, args...)
}

func (q *txQuery) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return q.tx.QueryRowContext(ctx, q.query, args...)
}
