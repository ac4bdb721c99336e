package writer

import (
	"context"
	"time"
)

// deferIndexes, at the first bulk batch of a writer's run (a scan's own, or a backlog on the
// bus: the suite's first start over a history), drops the store's BulkIndexes when the store is
// empty or small (store.DeferIndexes): a history loaded into it then builds them once at the end
// instead of row by row. It is tried once per run.
func (w *Writer) deferIndexes(ctx context.Context) {
	w.deferMu.Lock()
	defer w.deferMu.Unlock()
	if w.deferTried {
		return
	}
	w.deferTried = true
	ok, err := w.Store.DeferIndexes(context.WithoutCancel(ctx))
	if err != nil {
		w.Logger.Warn("indexes not deferred for the bulk load; it goes on with them", "err", err)
		return
	}
	if ok {
		w.deferred.Store(true)
		w.Logger.Debug("indexes deferred for a bulk load into an empty store")
	}
}

// restoreIndexes makes the deferred indexes again (store.RestoreIndexes), once the bulk load is
// over: before a live batch, a catch-up step, or the catch-ups at stop. A failure is retried at
// the next call, and at the next start (OpenWriter) in any case.
func (w *Writer) restoreIndexes(ctx context.Context) {
	if !w.deferred.Load() {
		return
	}
	w.deferMu.Lock()
	defer w.deferMu.Unlock()
	if !w.deferred.Load() {
		return
	}
	start := time.Now()
	n, err := w.Store.RestoreIndexes(context.WithoutCancel(ctx))
	if err != nil {
		w.Logger.Warn("deferred indexes not made yet; will retry", "err", err)
		return
	}
	w.deferred.Store(false)
	w.Logger.Debug("deferred indexes made", "indexes", n, "took", time.Since(start))
}

// deferHold is how long after a backlog's last bulk batch its indexes stay deferred while live
// batches come in (a watcher that reads slower than the writer stores sends some mid-history):
// those are stored on the bulk path, and the catch-ups wait, until the backlog has ended (no batch
// waits and none came for drainQuiet) or deferHold has passed.
const deferHold = 2 * time.Second

// holdsIndexes reports whether the indexes are deferred and a bulk batch came within deferHold.
func (w *Writer) holdsIndexes() bool {
	return w.deferred.Load() && time.Since(time.UnixMilli(w.lastBulk.Load())) < deferHold
}
