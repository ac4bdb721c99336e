// Package writer is the single process that stores events: it consumes the bus's durable writer
// consumer, writes each batch in one transaction, and acknowledges the batch only after the commit.
// A message that does not decode goes to the quarantine table with the reason, in the same
// transaction, so it never blocks the stream. Full-text indexing of tool outputs runs between
// batches, off the insert path.
package writer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Writer moves events from the bus into the store.
type Writer struct {
	Store   *store.Store
	Bus     *bus.Client
	Options bus.ConsumeOptions
	Logger  *slog.Logger
	// Heartbeat is how often the writer reports its health on the bus. Zero disables it.
	Heartbeat time.Duration
	// Budget, when it sets a limit, is checked every BudgetEvery (zero: 30 s) (budget.go).
	Budget      config.Budget
	BudgetEvery time.Duration
	// BudgetSource, when set, is asked for the budgets at every check (config.toml as it is now),
	// so a change applies without a restart; an error keeps the last budgets.
	BudgetSource func() (config.Budget, error)
	// Prices, when set, is the price table that follows config.toml: the writer reprices stored
	// rows when its overrides change, and prices incoming events of overridden models (prices.go).
	Prices *prices.Follower
	pr     pricer

	stored    atomic.Int64
	dups      atomic.Int64
	quarant   atomic.Int64
	lastEvent atomic.Int64 // unix ms of the newest stored event's time
}

// Stats is a snapshot of what the writer has done since it started.
type Stats struct {
	Stored, Duplicates, Quarantined int64
	LastEvent                       time.Time
}

// Stats returns the counters.
func (w *Writer) Stats() Stats {
	s := Stats{Stored: w.stored.Load(), Duplicates: w.dups.Load(), Quarantined: w.quarant.Load()}
	if ms := w.lastEvent.Load(); ms > 0 {
		s.LastEvent = time.UnixMilli(ms).UTC()
	}
	return s
}

// Run consumes until ctx ends. It returns nil on a normal stop.
func (w *Writer) Run(ctx context.Context) error {
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w.Heartbeat > 0 {
		go w.heartbeat(ctx)
	}
	indexKick := make(chan struct{}, 1)
	indexed := make(chan struct{})
	go func() { w.indexLoop(ctx, indexKick); close(indexed) }()
	analyseKick := make(chan struct{}, 1)
	analysed := make(chan struct{})
	go func() { w.analysisLoop(ctx, analyseKick); close(analysed) }()
	defer func() { cancel(); <-indexed; <-analysed }() // the store stays open until the last catch-ups are done
	if w.Prices != nil {
		defer w.startPricing(ctx)()
	}
	if budget.Enabled(w.Budget) || w.BudgetSource != nil {
		defer w.startBudget(ctx)()
	}
	return w.Bus.Consume(ctx, w.Options, func(ctx context.Context, batch []bus.Message) error {
		if err := w.Handle(ctx, batch); err != nil {
			return err
		}
		for _, kick := range []chan struct{}{indexKick, analyseKick} {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		return nil
	})
}

// Handle decodes and stores one batch.
func (w *Writer) Handle(ctx context.Context, batch []bus.Message) error {
	evs := make([]event.Event, 0, len(batch))
	var rejected []store.Rejected
	var newest int64
	for _, m := range batch {
		ev, err := event.Decode(m.Data)
		if err != nil {
			rejected = append(rejected, store.Rejected{Subject: m.Subject, Reason: err.Error(), Data: m.Data})
			w.Logger.Warn("event quarantined", "subject", m.Subject, "reason", err.Error(), "bytes", len(m.Data))
			continue
		}
		evs = append(evs, ev)
		newest = max(newest, ev.Time.UnixMilli())
	}
	defer w.priceEvents(evs)()
	// A commit that fails for a moment (disk full, a reader's long checkpoint) is retried by the
	// bus's redelivery, not here: the batch stays unacked.
	res, err := w.Store.WriteBatch(context.WithoutCancel(ctx), evs, rejected)
	if err != nil {
		return fmt.Errorf("store batch of %d: %w", len(batch), err)
	}
	w.stored.Add(int64(res.Inserted))
	w.dups.Add(int64(res.Duplicates))
	w.quarant.Add(int64(res.Quarantined))
	if newest > w.lastEvent.Load() {
		w.lastEvent.Store(newest)
	}
	return nil
}

// indexLoop fills the full-text index of tool outputs off the insert path, every 2 s while outputs
// arrive. It starts with a catch-up (a previous writer may have stopped with outputs unindexed)
// and ends with one, bounded in time, so that a short-lived writer (the one `observerctl scan`
// hosts) leaves everything it stored searchable.
func (w *Writer) indexLoop(ctx context.Context, kick <-chan struct{}) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	pending := true
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			w.indexAll(fctx)
			cancel()
			return
		case <-kick:
			pending = true
			continue
		case <-t.C:
		}
		if pending {
			pending = !w.indexAll(ctx)
		}
	}
}

// indexAll indexes every output not indexed yet; it reports whether it got to the end.
func (w *Writer) indexAll(ctx context.Context) bool {
	for ctx.Err() == nil {
		n, err := w.Store.IndexOutputs(ctx, 5000)
		if err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				w.Logger.Warn("full-text indexing failed; will retry", "err", err)
			}
			return false
		}
		if n < 5000 {
			return true
		}
	}
	return false
}

// analysisLoop keeps the analysis tables current (internal/analysis): every 2 s while batches
// arrive it analyses the sessions they marked, 100 at a time between batches, and each project's
// patterns at most once a minute. It starts with whatever a previous writer (or a migration) left
// marked, and ends with a catch-up bounded in time, patterns included.
func (w *Writer) analysisLoop(ctx context.Context, kick <-chan struct{}) {
	a := &analysis.Analyzer{DB: w.Store.DB, Logger: w.Logger}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	pending := true
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if _, err := a.Run(fctx); err != nil && fctx.Err() == nil {
				w.Logger.Warn("analysis failed", "err", err)
			}
			cancel()
			return
		case <-kick:
			pending = true
			continue
		case <-t.C:
		}
		if !pending {
			continue
		}
		p, err := a.Step(ctx, 100, false)
		if err != nil {
			if ctx.Err() == nil {
				w.Logger.Warn("analysis failed; will retry", "err", err)
			}
			continue
		}
		if p.Sessions > 0 || p.Projects > 0 {
			w.Logger.Debug("analysed", "sessions", p.Sessions, "projects", p.Projects,
				"pending_sessions", p.PendingSessions, "pending_projects", p.PendingProjects)
		}
		pending = p.PendingSessions > 0 || p.PendingProjects > 0
	}
}

func (w *Writer) heartbeat(ctx context.Context) {
	w.Bus.Heartbeat(ctx, w.Heartbeat, func() bus.Health {
		st := w.Stats()
		return bus.Health{Component: "writer", OK: true, LastEvent: st.LastEvent, Events: st.Stored,
			Detail: fmt.Sprintf("stored %d, duplicates %d, quarantined %d", st.Stored, st.Duplicates, st.Quarantined)}
	})
}
