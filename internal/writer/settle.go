package writer

import (
	"context"
	"time"
)

// settleAfter is how long after the last batch, with every catch-up done, bulk work is settled.
const settleAfter = 2 * time.Second

// settleLoop settles the store (store.Store.Settle: the write-ahead log checkpointed and
// truncated, SQLite's caches given back) once bulk work is over: a history ingested and caught
// up (rollups, full-text index, analysis), and no batch for settleAfter. Without it the log
// stays at tens of megabytes beside the store, and the writer at its peak memory, for as long as
// it runs. A reader's long transaction makes a settle partial; it is tried again at the next tick.
func (w *Writer) settleLoop(ctx context.Context) {
	t := time.NewTicker(settleAfter)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if !w.unsettled.Load() || w.catchingUp() != "" ||
			time.Since(time.UnixMilli(w.lastWrite.Load())) < settleAfter {
			continue
		}
		r, err := w.Store.Settle(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("settling the store after bulk work failed; will retry", "err", err)
			}
			continue
		}
		w.unsettled.Store(r.Busy)
		w.Logger.Debug("store settled after bulk work", "wal_before", r.WALBefore, "wal_after", r.WALAfter, "busy", r.Busy)
	}
}
