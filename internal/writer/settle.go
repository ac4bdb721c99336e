package writer

import (
	"context"
	"time"
)

// settleAfter is how long after the last batch, with every catch-up done, bulk work is settled.
const settleAfter = 2 * time.Second

// idleSettleAfter is how long a writer stays quiet after live work before it settles the store.
const idleSettleAfter = 30 * time.Second

// settleLoop settles the store (store.Store.Settle: the write-ahead log checkpointed and
// truncated, SQLite's caches given back) once bulk work is over: a history ingested and caught
// up (rollups, full-text index, analysis), and no batch for settleAfter. Without it the log
// stays at tens of megabytes beside the store, and the writer at its peak memory, for as long as
// it runs. Live work settles too, once the writer has been quiet for IdleSettle (no batch stored,
// no catch-up step run, 30 s by default): the analysis and the session memory that follow a
// settle, and a day's live batches, fill the page caches again (about 20 MiB) and leave up to
// SQLite's 4 MiB checkpoint threshold in the log, which an idle writer has no use for. A reader's
// long transaction makes a settle partial; it is tried again at the next tick.
func (w *Writer) settleLoop(ctx context.Context) {
	t := time.NewTicker(settleAfter)
	defer t.Stop()
	idleAfter := w.IdleSettle
	if idleAfter <= 0 {
		idleAfter = idleSettleAfter
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		lastWork := w.lastWork.Load()
		bulk := w.unsettled.Load() && w.catchingUp() == "" && now.Sub(time.UnixMilli(w.lastWrite.Load())) >= settleAfter
		idle := lastWork > 0 && lastWork >= w.settledAt.Load() && now.Sub(time.UnixMilli(lastWork)) >= idleAfter
		if !bulk && !idle {
			continue
		}
		w.settledAt.Store(now.UnixMilli() + 1) // work from here on comes after this settle
		r, err := w.Store.Settle(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("settling the store failed; will retry", "err", err)
			}
			w.settledAt.Store(0)
			continue
		}
		if r.Busy {
			w.settledAt.Store(0)
		}
		w.unsettled.Store(w.unsettled.Load() && r.Busy)
		after := "live work"
		if bulk {
			after = "bulk work"
		}
		w.Logger.Debug("store settled", "after", after, "wal_before", r.WALBefore, "wal_after", r.WALAfter, "busy", r.Busy)
	}
}
