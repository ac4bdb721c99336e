package store

import (
	"context"
	"fmt"
	"strings"
)

// BulkIndexes are the secondary indexes of the two largest tables a history fills, actions and
// messages: none is used to store a batch (rows are found by their primary keys), all of them by
// the catch-ups and the readers. Loading a history into an empty store updates each of them row by
// row, in random order, in every transaction: on the ~300 MB benchmark history that was a third
// of the writer's time in its batches, while building the eleven of them once at the end, sorted,
// takes a fraction of a second.
var BulkIndexes = []string{
	"actions_ts", "actions_session", "actions_type", "actions_freshness", "actions_project_target",
	"actions_project_type", "actions_project_failed", "actions_prompts", "actions_member",
	"messages_session", "messages_ts",
}

// DeferSmallStore is how many actions and messages together a store may hold for DeferIndexes to
// drop its indexes: building them again over that many rows takes a fraction of a second (0.3 s
// for the benchmark history's 68,000), which a bulk load of a history saves several times over: a
// scan into a store that holds a few sessions gains as one into an empty store does.
const DeferSmallStore = 20000

// DeferIndexes drops BulkIndexes for a bulk load into an empty or small store (a cold scan: at
// most DeferSmallStore actions and messages), keeping their definitions in deferred_indexes so
// that RestoreIndexes, or the next OpenWriter after a crash, makes them again. It reports whether
// it dropped them. Only the writer calls it, before its first bulk batch.
func (s *Store) DeferIndexes(ctx context.Context) (bool, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var rows int
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM actions LIMIT ?1))
		+ (SELECT count(*) FROM (SELECT 1 FROM messages LIMIT ?1))`, DeferSmallStore+1).Scan(&rows); err != nil {
		return false, fmt.Errorf("defer indexes: %w", err)
	}
	if rows > DeferSmallStore {
		return false, nil
	}
	n := 0
	for _, name := range BulkIndexes {
		var sql string
		err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?`, name).Scan(&sql)
		if err != nil || sql == "" {
			continue // not in this schema (an older store): nothing to defer
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO deferred_indexes (name, sql) VALUES (?, ?)`, name, sql); err != nil {
			return false, fmt.Errorf("defer index %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, `DROP INDEX `+quoteIdent(name)); err != nil {
			return false, fmt.Errorf("defer index %s: %w", name, err)
		}
		n++
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("defer indexes: %w", err)
	}
	return n > 0, nil
}

// RestoreIndexes makes every deferred index again, in one transaction, and returns how many. It
// is a no-op when none is deferred.
func (s *Store) RestoreIndexes(ctx context.Context) (int, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT name, sql FROM deferred_indexes ORDER BY name`)
	if err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	var defs [][2]string
	for rows.Next() {
		var d [2]string
		if err := rows.Scan(&d[0], &d[1]); err != nil {
			rows.Close()
			return 0, fmt.Errorf("restore indexes: %w", err)
		}
		defs = append(defs, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	if len(defs) == 0 {
		return 0, nil
	}
	for _, d := range defs {
		sql := d[1]
		if !strings.Contains(strings.ToUpper(sql), "IF NOT EXISTS") {
			sql = strings.Replace(sql, "INDEX ", "INDEX IF NOT EXISTS ", 1)
		}
		if _, err := tx.ExecContext(ctx, sql); err != nil {
			return 0, fmt.Errorf("restore index %s: %w", d[0], err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM deferred_indexes`); err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	return len(defs), nil
}

func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
