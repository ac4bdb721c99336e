package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Retention: Prune deletes what is older than a cutoff, and the oldest actions beyond a cap, in
// chunks of ChunkSize rows, each chunk its own transaction, so that the writer, which shares the
// one connection, waits at most one chunk. Each chunk recomputes the rollup hours it deleted from
// in its own transaction (the rollups' refreshRollups, which RefreshRollups also runs), so the
// rollups equal a rebuild from the raw rows after every commit, and a prune stopped half-way
// leaves a consistent store.
//
// What goes, by age (event time, or received_at for quarantine): actions with their outputs and
// the outputs' full-text index entries, token_usage, api_turns, compression_events, hook_events,
// mcp_calls, session_events, quarantine; then sessions and projects last seen before the cutoff
// (a session only once no proxy turn of it is left, since a proxy turn takes its session's
// project). By count: the oldest actions beyond MaxActions, with their outputs. Derived tables
// the analysis keeps (patterns, failure_context, file_state) are left to their owners. SQLite
// reuses the freed pages; the file does not shrink.

// PruneOptions says what Prune deletes.
type PruneOptions struct {
	// Before deletes rows older than this time; zero keeps every age.
	Before time.Time
	// MaxActions keeps at most this many actions, the newest; 0 keeps all.
	MaxActions int64
	// DryRun only counts what would go; it works on a read-only store.
	DryRun bool
	// ChunkSize is the number of rows deleted per transaction; default 5000.
	ChunkSize int
}

// PruneResult counts the rows Prune deleted (or would delete), per table.
type PruneResult struct {
	Deleted map[string]int64 `json:"deleted"`
	Total   int64            `json:"total"`
	// RollupHours is how many hourly buckets were recomputed (0 in a dry run).
	RollupHours int `json:"rollup_hours"`
}

// pruneTable is an event table pruned by age: its time column.
type pruneTable struct{ name, col string }

// ageTables are pruned in this order; actions (with their outputs) come first.
var ageTables = []pruneTable{
	{"actions", "ts"}, {"token_usage", "ts"}, {"api_turns", "ts"}, {"compression_events", "ts"},
	{"compression_stash", "ts"}, {"hook_events", "ts"}, {"mcp_calls", "ts"}, {"session_events", "ts"}, {"messages", "ts"}, {"limit_snapshots", "last_seen"}, {"quarantine", "received_at"},
}

// PruneTables lists the tables Prune may delete from, in its order, for reports.
var PruneTables = []string{"actions", "action_outputs", "token_usage", "api_turns", "compression_events",
	"compression_stash", "hook_events", "mcp_calls", "session_events", "messages", "limit_snapshots", "quarantine", "sessions", "projects"}

// Prune applies the retention opts describes. It stops between chunks when ctx ends, returning
// what it did so far and ctx's error.
func (s *Store) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	res := PruneResult{Deleted: map[string]int64{}}
	for _, t := range PruneTables {
		res.Deleted[t] = 0
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 5000
	}
	if opts.MaxActions < 0 {
		return res, fmt.Errorf("prune: MaxActions %d is negative", opts.MaxActions)
	}
	var err error
	if opts.DryRun {
		err = s.countPrune(ctx, opts, &res)
	} else {
		err = s.prune(ctx, opts, &res)
	}
	for _, n := range res.Deleted {
		res.Total += n
	}
	return res, err
}

func (s *Store) prune(ctx context.Context, opts PruneOptions, res *PruneResult) error {
	hours := newDirtyHours()
	run := func(table string, sel string, args ...any) error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := s.pruneChunk(ctx, table, sel, append(args, opts.ChunkSize), res, hours)
			if err != nil {
				return fmt.Errorf("prune %s: %w", table, err)
			}
			if n < opts.ChunkSize {
				return nil
			}
		}
	}
	if !opts.Before.IsZero() {
		cut := opts.Before.UnixMilli()
		for _, t := range ageTables {
			// No ORDER BY: the time index serves the tables that have one, and the others
			// (session_events, quarantine) find their old rows first in rowid order.
			if err := run(t.name, "SELECT "+pruneCols(t.name)+" FROM "+t.name+" WHERE "+t.col+" < ? LIMIT ?", cut); err != nil {
				return err
			}
		}
	}
	if opts.MaxActions > 0 {
		var n int64
		if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM actions").Scan(&n); err != nil {
			return fmt.Errorf("prune: count actions: %w", err)
		}
		for excess := n - opts.MaxActions; excess > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			lim := min(excess, int64(opts.ChunkSize))
			got, err := s.pruneChunk(ctx, "actions", "SELECT "+pruneCols("actions")+" FROM actions ORDER BY ts, id LIMIT ?",
				[]any{lim}, res, hours)
			if err != nil {
				return fmt.Errorf("prune actions: %w", err)
			}
			if got == 0 {
				break
			}
			excess -= int64(got)
		}
	}
	if !opts.Before.IsZero() {
		cut := opts.Before.UnixMilli()
		for _, q := range []struct{ table, sql string }{
			{"sessions", `DELETE FROM sessions WHERE last_seen < ? AND NOT EXISTS (SELECT 1 FROM api_turns a
				WHERE a.session_id = sessions.session_id AND a.client = sessions.client)`},
			{"projects", `DELETE FROM projects WHERE last_seen < ?`},
		} {
			r, err := s.DB.ExecContext(ctx, q.sql, cut)
			if err != nil {
				return fmt.Errorf("prune %s: %w", q.table, err)
			}
			n, _ := r.RowsAffected()
			res.Deleted[q.table] += n
		}
	}
	res.RollupHours = len(hours.usage) + len(hours.actions)
	return nil
}

// pruneCols are the columns a chunk reads of the rows it deletes: the id, and what the rollups
// and the outputs need.
func pruneCols(table string) string {
	switch table {
	case "actions":
		return "id, ts, event_id"
	case "token_usage":
		return "id, ts, ''"
	case "api_turns":
		return "id, ts, message_id"
	}
	return "id, 0, ''"
}

// pruneChunk deletes the rows sel (with args) selects from table, in one transaction that also
// removes their outputs and recomputes their rollup hours. It returns how many rows it deleted.
func (s *Store) pruneChunk(ctx context.Context, table, sel string, args []any, res *PruneResult, hours *dirtyHours) (int, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	type victim struct {
		id, ts int64
		key    string // an action's event id, an API turn's message id
	}
	rows, err := tx.QueryContext(ctx, sel, args...)
	if err != nil {
		return 0, err
	}
	var vs []victim
	for rows.Next() {
		var v victim
		if err := rows.Scan(&v.id, &v.ts, &v.key); err != nil {
			rows.Close()
			return 0, err
		}
		vs = append(vs, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(vs) == 0 {
		return 0, nil
	}
	d := newDirtyHours()
	var ftsLast int64
	if fts := map[string]string{"actions": "tool_output", "messages": "message"}[table]; fts != "" {
		err := tx.QueryRowContext(ctx, `SELECT last_id FROM fts_progress WHERE name = ?`, fts).Scan(&ftsLast)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
	}
	del, err := tx.PrepareContext(ctx, "DELETE FROM "+table+" WHERE id = ?")
	if err != nil {
		return 0, err
	}
	defer del.Close()
	var pa prunedActions
	messages := map[string]bool{} // of the turns pruned
	for _, v := range vs {
		switch table {
		case "actions":
			if err := pa.note(ctx, tx, v.id); err != nil {
				return 0, err
			}
			d.action(v.ts)
			n, err := deleteOutput(ctx, tx, v.key, ftsLast)
			if err != nil {
				return 0, err
			}
			res.Deleted["action_outputs"] += n
		case "messages":
			// An indexed message leaves the full-text index with it (the index holds its own copy
			// of the terms, removed given the original text).
			if v.id <= ftsLast {
				if _, err := tx.ExecContext(ctx, `INSERT INTO message_fts (message_fts, rowid, text)
					SELECT 'delete', id, unpack(text) FROM messages WHERE id = ? AND text != ''`, v.id); err != nil {
					return 0, fmt.Errorf("full-text index: %w", err)
				}
			}
		case "token_usage":
			d.turn(v.ts)
		case "api_turns":
			d.turn(v.ts)
			// The transcript rows of its message count again, wherever their hour.
			if v.key != "" {
				messages[v.key] = true
			}
		}
		if _, err := del.ExecContext(ctx, v.id); err != nil {
			return 0, err
		}
	}
	if err := markMessages(ctx, txStmt(tx), d, messages); err != nil {
		return 0, err
	}
	if err := refreshRollups(ctx, tx, d); err != nil {
		return 0, err
	}
	if err := pa.apply(ctx, tx); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	res.Deleted[table] += int64(len(vs))
	for h := range d.usage {
		hours.usage[h] = true
	}
	for h := range d.actions {
		hours.actions[h] = true
	}
	return len(vs), nil
}

// deleteOutput deletes an action's output, and its full-text index entry when the output was
// indexed already (rowid up to ftsLast): the index holds its own copy of the terms, which the
// external-content table's 'delete' command removes given the original text.
func deleteOutput(ctx context.Context, tx *sql.Tx, eventID string, ftsLast int64) (int64, error) {
	var rowid int64
	var output string
	err := tx.QueryRowContext(ctx, `SELECT rowid, unpack(output) FROM action_outputs WHERE event_id = ?`, eventID).Scan(&rowid, &output)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if rowid <= ftsLast {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_output_fts (tool_output_fts, rowid, output) VALUES ('delete', ?, ?)`,
			rowid, output); err != nil {
			return 0, fmt.Errorf("full-text index: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM action_outputs WHERE rowid = ?`, rowid); err != nil {
		return 0, err
	}
	return 1, nil
}

// countPrune counts what prune would delete, with read-only queries.
func (s *Store) countPrune(ctx context.Context, opts PruneOptions, res *PruneResult) error {
	count := func(key, q string, args ...any) error {
		var n int64
		if err := s.DB.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			return fmt.Errorf("prune: count %s: %w", key, err)
		}
		res.Deleted[key] += n
		return nil
	}
	cut := int64(0)
	if !opts.Before.IsZero() {
		cut = opts.Before.UnixMilli()
		for _, t := range ageTables {
			if err := count(t.name, "SELECT count(*) FROM "+t.name+" WHERE "+t.col+" < ?", cut); err != nil {
				return err
			}
		}
		if err := count("action_outputs", `SELECT count(*) FROM action_outputs o JOIN actions a ON a.event_id = o.event_id
			WHERE a.ts < ?`, cut); err != nil {
			return err
		}
		if err := count("sessions", `SELECT count(*) FROM sessions WHERE last_seen < ? AND NOT EXISTS (SELECT 1 FROM api_turns a
			WHERE a.session_id = sessions.session_id AND a.client = sessions.client AND a.ts >= ?)`, cut, cut); err != nil {
			return err
		}
		if err := count("projects", `SELECT count(*) FROM projects WHERE last_seen < ?`, cut); err != nil {
			return err
		}
	}
	if opts.MaxActions > 0 {
		var left int64
		if opts.Before.IsZero() {
			cut = -1 << 62
		}
		if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM actions WHERE ts >= ?", cut).Scan(&left); err != nil {
			return fmt.Errorf("prune: count actions: %w", err)
		}
		if excess := left - opts.MaxActions; excess > 0 {
			res.Deleted["actions"] += excess
			if err := count("action_outputs", `SELECT count(*) FROM action_outputs WHERE event_id IN
				(SELECT event_id FROM actions WHERE ts >= ? ORDER BY ts, id LIMIT ?)`, cut, excess); err != nil {
				return err
			}
		}
	}
	return nil
}
