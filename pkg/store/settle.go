package store

import (
	"context"
	"fmt"
	"os"
)

// SettleResult is what Settle did.
type SettleResult struct {
	WALBefore, WALAfter int64 // the write-ahead log's size, bytes
	Busy                bool  // a reader's transaction kept part of the log: try again later
}

// Settle ends bulk work (a history ingested): it checkpoints the write-ahead log into the database
// and truncates it, so that the store takes its size on disk again rather than the log's tens of
// megabytes beside it, and gives back the memory SQLite's caches held (PRAGMA shrink_memory on the
// writer's connections, then C's freed heap). A reader in a long transaction (the dashboard)
// makes the checkpoint partial: Busy says so, and the caller may settle again later. Only the
// writer calls it, between batches.
func (s *Store) Settle(ctx context.Context) (SettleResult, error) {
	var r SettleResult
	wal := s.path + "-wal"
	if fi, err := os.Stat(wal); err == nil {
		r.WALBefore = fi.Size()
	}
	var busy, logPages, done int
	if err := s.DB.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logPages, &done); err != nil {
		return r, fmt.Errorf("checkpoint: %w", err)
	}
	r.Busy = busy != 0
	if fi, err := os.Stat(wal); err == nil {
		r.WALAfter = fi.Size()
	}
	if _, err := s.DB.ExecContext(ctx, "PRAGMA shrink_memory"); err != nil {
		return r, fmt.Errorf("shrink memory: %w", err)
	}
	s.readMu.Lock()
	if s.read != nil {
		s.read.ExecContext(ctx, "PRAGMA shrink_memory")
	}
	s.readMu.Unlock()
	trimMalloc()
	return r, nil
}
