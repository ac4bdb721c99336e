package query

import (
	"context"
	"database/sql"
)

// StoreReady reports whether the writer has created the tables the reads need: a store file
// whose schema is still being created reads as not ready.
func StoreReady(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('sessions', 'actions', 'token_usage', 'api_turns', 'action_outputs')").Scan(&n); err != nil {
		return false, err
	}
	return n >= 5, nil
}
