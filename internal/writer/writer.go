// Package writer is the single process that stores events: it consumes the bus's durable writer
// consumer, writes each batch in one transaction, and acknowledges the batch only after the commit.
// A one-shot scan with nothing running feeds it directly instead, with the same guarantee
// (Direct: a batch is acknowledged to its publisher after the commit).
// After each commit that stored something, and after its analysis or a repricing changed the store,
// it says so on the bus (bus.StoredNote), for the dashboard's open views to re-read.
// A message that does not decode goes to the quarantine table with the reason, in the same
// transaction, so it never blocks the stream. Full-text indexing of tool outputs runs between
// batches, off the insert path.
//
// Bulk path. While a backlog waits behind a batch (at least a batch's worth of events still on
// the bus: a scan, a backfill, a watcher reading history), or always with Bulk set (the writer
// `observerctl scan` hosts for its run), a batch stores its rows only: the hours its rows touched
// are recorded in the same transaction for the rollups to be recomputed later (store.WriteOptions.
// Bulk), and the full-text index, the rollups and the analysis wait until the backlog is stored
// (or the writer stops), then catch up, each hour and each session once. The guarantees do
// not change: a batch is acknowledged only after its transaction committed, and what waits to be
// caught up is recorded in the store, so a writer killed meanwhile catches it up at its next start.
// The heartbeat's detail says what is being caught up (`observerctl status`).
package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/internal/analysis"
	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/internal/memory"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/webhook"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/team"
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
	// Limits, when set, raises the alerts on the providers' plan usage limits at every budget
	// check (budget.RaiseLimits), and also as soon as a batch stored a limit figure: a warning
	// comes with the figure that calls for it, not up to BudgetEvery later.
	Limits *config.Limits
	// Webhook, when set, is handed every alert the writer publishes ([alerts] webhook_url;
	// alerts.go); Run runs its delivery, and the heartbeat reports it as a notice
	// ("alerts:webhook"), never as the writer's health.
	Webhook *webhook.Sender
	// ConfigSource, when set, is asked for config.toml as it is now at every budget check, once:
	// its [budget], [limits] and [alerts] then apply without a restart. An error keeps the
	// settings in force.
	ConfigSource func() (config.Config, error)
	// Prices, when set, is the price table that follows config.toml: the writer reprices stored
	// rows when its overrides change, and prices incoming events of overridden models (prices.go).
	Prices *prices.Follower
	pr     pricer
	// Bulk makes every batch take the bulk path (see the package doc), for a writer that only
	// stores a history and stops: the one `observerctl scan` hosts.
	Bulk bool
	// Team makes this a team hub's writer: each event belongs to the member the hub received it
	// from (its subject, team.<member>.<kind>.<client>), whatever the event says, and its id is
	// kept apart from other members' (team.Attribute). An event outside a member's subjects is
	// quarantined.
	Team bool
	// Model, when set, is offered each epoch's summary for a language model's account
	// ([memory] model; internal/memory).
	Model memory.ModelSummarizer
	// Direct, when set, is where Run takes its batches instead of the bus (direct.go): the
	// writer a one-shot `observerctl scan` hosts when nothing else runs. Bus may then be nil.
	Direct *Direct

	bulkAt   atomic.Int64  // unix ms of the last batch that took the bulk path; 0: the last one did not
	lastBulk atomic.Int64  // unix ms of the last batch that took the bulk path
	bulkSeq  atomic.Int64  // batches that took the bulk path, counted
	behind   atomic.Uint64 // messages waiting on the bus behind the last batch stored
	// backlogEnd says the last batch stored ended a backlog its publisher marked
	// (bus.BacklogHeader): the catch-ups start after it at once.
	backlogEnd atomic.Bool
	beat       chan struct{} // publishes the health at once (beatNow)
	lastWrite  atomic.Int64  // unix ms of the last batch stored
	unsettled  atomic.Bool   // bulk work was stored since the last Settle (settle.go)
	// The indexes deferred for a bulk load into an empty store (deferindex.go).
	deferMu    sync.Mutex
	deferTried bool
	deferred   atomic.Bool
	lastWork   atomic.Int64 // unix ms of the last batch stored or off-batch step run (settle.go)
	settledAt  atomic.Int64 // unix ms of the start of the last Settle
	// IdleSettle is how long a writer stays quiet (no batch, no catch-up step) before it settles
	// the store after live work (settle.go). Default idleSettleAfter; tests shorten it.
	IdleSettle  time.Duration
	pendRollups atomic.Int64  // hours whose rollups wait, as last counted
	pendIndex   atomic.Bool   // tool outputs wait for the full-text index
	pendAnalyse atomic.Int64  // sessions marked for the analysis, as last counted; -1: some
	pendMemory  atomic.Int64  // epochs due a summary, as last counted; -1: some
	limitKick   chan struct{} // a batch stored a limit figure: check the limits now (budget.go)

	stored    atomic.Int64
	dups      atomic.Int64
	quarant   atomic.Int64
	lastEvent atomic.Int64 // unix ms of the newest stored event's time

	// What the heartbeat tells about a store that does not take batches: the write in progress
	// (unix ms when it began, and its size), and since when commits have failed, with the last
	// error.
	writing   atomic.Int64
	writingN  atomic.Int64
	failSince atomic.Int64
	lastErr   atomic.Pointer[string]
}

// stallAfter is how long a batch may wait on the store before the writer reports itself unhealthy.
const stallAfter = 2 * time.Second

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
		w.beat = make(chan struct{}, 1)
		go w.heartbeat(ctx)
	}
	if w.Webhook != nil {
		// Stopped last (deferred first): the loops that raise alerts stop before it.
		defer spawn(ctx, w.Webhook.Run)()
	}
	// The store stays open until the loops have stopped (and made their last catch-ups).
	indexKick, analyseKick, rollupKick := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	if n, err := w.Store.RollupsPending(ctx); err == nil {
		w.pendRollups.Store(n)
	}
	defer spawn(ctx, func(ctx context.Context) {
		w.offBatch(ctx, "rollups", rollupKick, 0, w.rollupStep, w.rollupFinish)
	})()
	defer spawn(ctx, func(ctx context.Context) {
		w.offBatch(ctx, "full-text index", indexKick, 0, w.indexStep, w.indexFinish)
	})()
	// The analysis re-reads each marked session whole, on a read connection of its own, and
	// writes a step's findings in one short transaction: while batches keep coming (a busy
	// session) it runs every analyseBusy, not at every tick, so that it does not halve the
	// writer's rate.
	a := &analysis.Analyzer{DB: w.Store.DB, Logger: w.Logger}
	if rdb, err := w.Store.ReadDB(); err == nil {
		a.Read = rdb
	} else {
		w.Logger.Warn("no read connection for the analysis; it reads on the writer's", "err", err)
	}
	defer spawn(ctx, func(ctx context.Context) {
		w.offBatch(ctx, "analysis", analyseKick, analyseBusy, func(ctx context.Context, drain bool) (bool, bool) { return w.analyseStep(ctx, a, drain) },
			func(ctx context.Context) { w.analyseFinish(ctx, a) })
	})()
	// Session memory (internal/memory): the summaries of ended epochs and each project's
	// observations, on the analysis's read connection, every memoryBusy while batches come.
	mem := &memory.Memory{DB: w.Store.DB, Read: a.Read, Logger: w.Logger, Model: w.Model}
	memKick := make(chan struct{}, 1)
	if w.Bus != nil {
		if sub, err := w.Bus.ServeStream(memory.ForgetSubject, w.serveForget); err == nil {
			defer sub.Stop()
		} else {
			w.Logger.Warn("observerctl memory forget will not reach this writer", "err", err)
		}
	}
	defer spawn(ctx, func(ctx context.Context) {
		w.offBatch(ctx, "session memory", memKick, memoryBusy, func(ctx context.Context, drain bool) (bool, bool) { return w.memoryStep(ctx, mem, drain) },
			func(ctx context.Context) { w.memoryFinish(ctx, mem) })
	})()
	defer spawn(ctx, w.settleLoop)()
	if w.Prices != nil {
		w.pr.swap(w.Prices.Current(), nil)
		defer spawn(ctx, w.pricingLoop)()
	}
	if budget.Enabled(w.Budget) || w.ConfigSource != nil || w.Limits != nil {
		w.limitKick = make(chan struct{}, 1)
		defer spawn(ctx, w.budgetLoop)()
	}
	var gone atomic.Pointer[error]
	stored := func(err error) error {
		if err != nil {
			if errors.Is(err, store.ErrFileGone) {
				gone.Store(&err)
				cancel()
			}
			return err
		}
		for _, kick := range []chan struct{}{rollupKick, indexKick, analyseKick, memKick} {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
		return nil
	}
	var err error
	if w.Direct != nil {
		err = w.Direct.serve(ctx, func(evs []event.Event) error { return stored(w.write(ctx, evs, nil, w.Bulk)) })
	} else {
		err = bus.ConsumePrepared(ctx, w.Bus, w.Options, w.decode, func(ctx context.Context, d decoded) error {
			return stored(w.store(ctx, d))
		})
	}
	if p := gone.Load(); p != nil {
		w.Logger.Error("the store file was removed or replaced under the writer; stopping without acknowledging the batch (it stays on the bus)", "err", *p)
		return *p
	}
	return err
}

// setBulk records whether the batch being stored takes the bulk path.
func (w *Writer) setBulk(bulk bool) {
	if bulk {
		now := time.Now().UnixMilli()
		w.bulkAt.Store(now)
		w.lastBulk.Store(now)
		w.bulkSeq.Add(1)
	} else {
		w.bulkAt.Store(0)
	}
}

// bulkStale is how long after the last bulk batch, with no batch since, the catch-ups start
// anyway: a backlog whose end came in no live batch (events dropped by the stream's limits), or
// a scan whose readers paused.
const bulkStale = 10 * time.Second

// drainQuiet is how long no batch must have been stored, after a backlog, before the catch-ups
// drain it: a backlog's last batches come on the live path (too few left behind them for the bulk
// path), and a watcher that reads slower than the writer stores leaves the bus empty for moments
// in the middle of a history; a drain there would analyse and observe again, at every such
// moment, what the next batches change. A backlog whose publisher marked its end
// (bus.BacklogHeader) is drained right after its last batch.
const drainQuiet = 300 * time.Millisecond

// inBulk reports whether batches take the bulk path: the catch-ups wait meanwhile.
func (w *Writer) inBulk() bool {
	at := w.bulkAt.Load()
	return at != 0 && time.Since(time.UnixMilli(at)) < bulkStale
}

// bulkBacklog is the backlog behind a batch from which the batch takes the bulk path.
func (w *Writer) bulkBacklog() uint64 {
	if w.Options.BatchSize > 0 {
		return uint64(w.Options.BatchSize)
	}
	return 1000
}

// Handle decodes and stores one batch of messages (each one event, or a batch message of many)
// in one transaction: on the bulk path when w.Bulk is set or a backlog waits behind it (its last
// message's Pending). A message that does not split into its events is quarantined whole; an
// event that does not decode, alone.
func (w *Writer) Handle(ctx context.Context, batch []bus.Message) error {
	return w.store(ctx, w.decode(batch))
}

// decoded is a batch of messages decoded, ready to store.
type decoded struct {
	evs      []event.Event
	rejected []store.Rejected
	bulk     bool
	behind   uint64 // messages waiting on the bus behind the batch
	end      bool   // the batch ends a backlog its publisher marked
}

// store stores a decoded batch.
func (w *Writer) store(ctx context.Context, d decoded) error {
	w.behind.Store(d.behind) // before the batch's kicks, which read it
	w.backlogEnd.Store(false)
	if err := w.write(ctx, d.evs, d.rejected, d.bulk); err != nil {
		return err
	}
	if d.end {
		// The backlog its publisher marked is stored (not before its commit: a catch-up that
		// started meanwhile would miss its last batch): the catch-ups need not wait for a
		// batch that says so, or for bulkStale (inBulk).
		w.bulkAt.Store(0)
		w.backlogEnd.Store(true)
	}
	return nil
}

// decode is Handle's first half: it has no side effect but logging, and runs on the consumer's
// goroutine while the batch before is stored (bus.ConsumePrepared).
func (w *Writer) decode(batch []bus.Message) decoded {
	// The backlog in events: each message waiting counted as the last one's size.
	bulk := w.Bulk || len(batch) > 0 && batch[len(batch)-1].Pending*uint64(batch[len(batch)-1].Events()) >= w.bulkBacklog()
	var behind uint64
	if len(batch) > 0 {
		behind = batch[len(batch)-1].Pending
	}
	// A backlog its publisher marked takes the bulk path from its first batch, and ends with the
	// batch its last message is in (unless another one starts after it in the same batch).
	var end bool
	for _, m := range batch {
		switch bus.Backlog(m.Header) {
		case bus.BacklogPart:
			bulk, end = true, false
		case bus.BacklogEnd:
			bulk, end = true, true
		}
	}
	evs := make([]event.Event, 0, len(batch))
	var rejected []store.Rejected
	quarantine := func(m bus.Message, data []byte, err error) {
		rejected = append(rejected, store.Rejected{Subject: m.Subject, Reason: err.Error(), Data: data})
		w.Logger.Warn("event quarantined", "subject", m.Subject, "reason", err.Error(), "bytes", len(data))
	}
	type item struct {
		m   int // its message in batch
		raw []byte
		ev  event.Event
		err error
	}
	var items []item
	for k, m := range batch {
		raws, err := bus.Split(m.Header, m.Data)
		if err != nil {
			quarantine(m, m.Data, err) // the whole message: its events cannot be told apart
			continue
		}
		for _, raw := range raws {
			items = append(items, item{m: k, raw: raw})
		}
	}
	decode := func(it *item) {
		it.ev, it.err = bus.DecodeEvent(it.raw)
		if it.err == nil && w.Team {
			it.err = team.Attribute(&it.ev, batch[it.m].Subject)
		} else {
			it.ev.Member = "" // only a hub names members
		}
	}
	// A large batch is decoded on every core: decoding is a third of the writer's work on a
	// backlog, and the store's part runs on one connection.
	if workers := min(runtime.GOMAXPROCS(0), 4); len(items) >= 256 && workers > 1 {
		var wg sync.WaitGroup
		for g := range workers {
			wg.Go(func() {
				for i := g; i < len(items); i += workers {
					decode(&items[i])
				}
			})
		}
		wg.Wait()
	} else {
		for i := range items {
			decode(&items[i])
		}
	}
	for i := range items {
		if items[i].err != nil {
			quarantine(batch[items[i].m], items[i].raw, items[i].err)
			continue
		}
		evs = append(evs, items[i].ev)
	}
	return decoded{evs, rejected, bulk, behind, end}
}

// write stores decoded events, and the messages that did not decode, in one transaction.
func (w *Writer) write(ctx context.Context, evs []event.Event, rejected []store.Rejected, bulk bool) error {
	w.setBulk(bulk)
	var newest int64
	for i := range evs {
		newest = max(newest, evs[i].Time.UnixMilli())
	}
	n := len(evs) + len(rejected)
	defer w.priceEvents(evs)()
	// A commit that fails for a moment (disk full, a reader's long checkpoint) is retried by the
	// bus's redelivery, not here: the batch stays unacked.
	start := time.Now().UnixMilli()
	w.writingN.Store(int64(n))
	w.writing.Store(start)
	// A bulk load into an empty or small store defers its indexes (deferindex.go). A backlog on
	// the bus alternates bulk and live batches (the last events of a file, a watcher that reads
	// slower than the writer stores): a live batch within deferHold of a bulk one is stored on
	// the bulk path too, its rollups left to the catch-up that reads through the indexes (the
	// live rollups would read without them), and the indexes stay deferred; a later live batch
	// makes them again first.
	held := !bulk && w.holdsIndexes()
	if bulk {
		w.deferIndexes(ctx)
	} else if !held {
		w.restoreIndexes(ctx) // the backlog is stored: the live rollups and the readers need them
	}
	bulk = bulk || held // stored as a bulk batch, not counted as one (setBulk above)
	res, err := w.Store.WriteBatchWith(context.WithoutCancel(ctx), evs, rejected, store.WriteOptions{Bulk: bulk})
	w.writing.Store(0)
	if err != nil {
		err = fmt.Errorf("store batch of %d: %w", n, err)
		msg := err.Error()
		w.lastErr.Store(&msg)
		w.failSince.CompareAndSwap(0, start)
		return err
	}
	w.failSince.Store(0)
	// A commit into a store file that was deleted (the observer home removed) is not durable:
	// the batch is not acknowledged, and Run stops.
	if err := w.Store.CheckFile(); err != nil {
		return err
	}
	w.lastWrite.Store(time.Now().UnixMilli())
	w.lastWork.Store(w.lastWrite.Load())
	if bulk && res.Inserted > 0 {
		w.unsettled.Store(true)
		// Some of each, counted again as they are caught up.
		w.pendRollups.Add(1)
		w.pendIndex.Store(true)
		w.pendAnalyse.CompareAndSwap(0, -1)
		w.pendMemory.CompareAndSwap(0, -1)
	}
	w.stored.Add(int64(res.Inserted))
	w.dups.Add(int64(res.Duplicates))
	w.quarant.Add(int64(res.Quarantined))
	if newest > w.lastEvent.Load() {
		w.lastEvent.Store(newest)
	}
	if w.limitKick != nil && slices.ContainsFunc(evs, func(ev event.Event) bool { return ev.Kind == event.KindLimit }) {
		select {
		case w.limitKick <- struct{}{}:
		default:
		}
	}
	if res.Inserted > 0 {
		note := bus.StoredNote{Events: res.Inserted}
		for i := range evs {
			note.Add(string(evs[i].Kind), evs[i].Client, evs[i].Project, evs[i].SessionID)
		}
		w.notify(note)
	}
	return nil
}

// notify tells the bus's readers (the dashboard) that a commit changed the store: only now can
// they read what the events they saw on the bus changed (bus.StoredSubject).
func (w *Writer) notify(n bus.StoredNote) {
	if w.Bus != nil {
		w.Bus.PublishStored(n)
	}
}

// spawn runs fn in a goroutine until the returned stop is called, which cancels fn's context and
// waits for it to return.
func spawn(ctx context.Context, fn func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); fn(ctx) }()
	return func() { cancel(); <-done }
}

// analyseBusy is how often the analysis runs while batches keep coming.
const analyseBusy = 30 * time.Second

// offBatch does work the writer keeps off the insert path: step every 2 s while there is some
// (it reports whether work is left; a kick says a batch came in), and step after step while no
// batch comes in meanwhile, starting with whatever a previous writer left, and finish, bounded to
// 10 s, once ctx ends, so that a short-lived writer (the one `observerctl scan` hosts) leaves its
// work done. The first batch stored after a backlog starts a step at once. With busy set, while
// batches came in since the last tick, step waits until busy has passed since it last ran.
// Nothing steps while batches take the bulk path. When a backlog has been stored (the bus empty
// behind the last batch, and no batch for drainQuiet), step drains: it runs step after step, with
// drain set, until nothing is left or no step can progress, neither paced by busy nor stopped by
// the live batches that come meanwhile, so that a history ingested is caught up (analysed,
// observed) when the writer says so, not a tick or a minute later.
func (w *Writer) offBatch(ctx context.Context, name string, kick <-chan struct{}, busy time.Duration, step func(ctx context.Context, drain bool) (more, again bool), finish func(context.Context)) {
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	pending, kicked := true, false
	drain := false           // a backlog was stored: catch up at once and to the end
	seen := w.bulkSeq.Load() // the bulk batches this loop has caught up after
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	// ended reports whether a backlog was stored since the last drain and has ended: batches no
	// longer take the bulk path, none waits on the bus, none came for drainQuiet. Then a drain
	// starts.
	ended := func() bool {
		n := w.bulkSeq.Load()
		calm := w.backlogEnd.Load() || time.Since(time.UnixMilli(w.lastWrite.Load())) >= drainQuiet
		if n == seen || w.inBulk() || w.behind.Load() > 0 || !calm {
			return false
		}
		seen, drain = n, true
		return true
	}
	var last time.Time
	for {
		// The ticks are for work pending; a loop with none waits for a kick, so that an idle
		// writer's four loops do not wake it twice a second each.
		var tick <-chan time.Time
		if pending {
			tick = t.C
		}
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			start := time.Now()
			w.restoreIndexes(fctx)
			finish(fctx)
			cancel()
			w.Logger.Debug("caught up at stop", "loop", name, "took", time.Since(start))
			return
		case <-kick:
			pending, kicked = true, true
			if !drain && w.bulkSeq.Load() != seen {
				// After a backlog: see drainQuiet after this batch whether it has ended, not
				// at the next tick (each loop waited up to 2 s for it, a quarter of the
				// deployed form's time to settle).
				if w.backlogEnd.Load() {
					quiet.Reset(0) // its publisher said it ended
				} else {
					quiet.Reset(drainQuiet)
				}
			}
			continue
		case <-quiet.C:
			if !ended() {
				continue
			}
			kicked = false
		case <-tick:
		}
		if w.inBulk() {
			// Batches take the bulk path: everything waits until the backlog is stored.
			pending = true
			continue
		}
		ended()
		if !drain && w.holdsIndexes() {
			// A backlog's live batches came in, its indexes still deferred: wait for its end.
			pending = true
			continue
		}
		if !pending || (!drain && busy > 0 && kicked && time.Since(last) < busy) {
			kicked = false
			continue
		}
		kicked, last = false, time.Now()
		w.restoreIndexes(ctx) // the catch-ups read through them
		var again bool
		pending, again = step(ctx, drain)
		// Work left that can go on now (the step made progress) and no batch came meanwhile (the
		// backlog is stored), or a drain: step again at once rather than once per tick, so that
		// a catch-up takes its own time, not the ticks'. A step that failed or could not
		// progress waits for the next tick.
		for pending && again && ctx.Err() == nil && !w.inBulk() {
			select {
			case <-kick:
				kicked = true
			default:
			}
			if kicked && !drain {
				break
			}
			pending, again = step(ctx, drain)
		}
		if drain && w.catchingUp() == "" {
			w.beatNow() // the status says caught up now, not at the next heartbeat
		}
		if !pending || !again {
			drain = false // drained, or stuck until the next tick (paced again)
		}
		w.lastWork.Store(time.Now().UnixMilli())
	}
}

// rollupStep and rollupFinish recompute the rollups of the hours bulk batches left pending; a
// step goes to the end, or fails (a drain changes nothing for them).
func (w *Writer) rollupStep(ctx context.Context, _ bool) (more, again bool) {
	return !w.rollupsAll(ctx), false
}
func (w *Writer) rollupFinish(ctx context.Context) { w.rollupsAll(ctx) }

// rollupsAll catches up every pending hour, a few hundred per transaction; it reports whether it
// got to the end.
func (w *Writer) rollupsAll(ctx context.Context) bool {
	if w.pendRollups.Load() == 0 {
		return true
	}
	for ctx.Err() == nil {
		left, err := w.Store.CatchUpRollups(ctx, 200)
		if err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				w.Logger.Warn("rollup catch-up failed; will retry", "err", err)
			}
			return false
		}
		w.pendRollups.Store(left)
		if left == 0 {
			// The hourly and daily figures of a bulk load change only now.
			w.notify(bus.StoredNote{Kinds: []string{string(event.KindAction), string(event.KindTokenUsage),
				string(event.KindAPITurn)}, Many: true})
			return true
		}
	}
	return false
}

// indexStep and indexFinish fill the full-text indexes of tool outputs and messages.
func (w *Writer) indexStep(ctx context.Context, _ bool) (more, again bool) {
	return !w.indexAll(ctx), false
}
func (w *Writer) indexFinish(ctx context.Context) { w.indexAll(ctx) }

// indexAll indexes every output not indexed yet; it reports whether it got to the end.
func (w *Writer) indexAll(ctx context.Context) bool {
	for ctx.Err() == nil {
		n, err := w.Store.IndexOutputs(ctx, 5000)
		if err == nil {
			var m int
			m, err = w.Store.IndexMessages(ctx, 5000)
			n = max(n, m)
		}
		if err != nil {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				w.Logger.Warn("full-text indexing failed; will retry", "err", err)
			}
			return false
		}
		if n < 5000 {
			w.pendIndex.Store(false)
			return true
		}
		w.pendIndex.Store(true)
	}
	return false
}

// analyseStep keeps the analysis tables current (internal/analysis): the sessions the batches
// marked, 100 at a time between batches, and each project's patterns at most once a minute.
func (w *Writer) analyseStep(ctx context.Context, a *analysis.Analyzer, drain bool) (more, again bool) {
	p, err := a.Step(ctx, 100, drain)
	if err != nil {
		if ctx.Err() == nil {
			w.Logger.Warn("analysis failed; will retry", "err", err)
		}
		return true, false
	}
	w.pendAnalyse.Store(p.PendingSessions)
	if p.Sessions > 0 || p.Projects > 0 {
		w.notify(bus.StoredNote{Analysis: true})
		w.Logger.Debug("analysed", "sessions", p.Sessions, "projects", p.Projects,
			"pending_sessions", p.PendingSessions, "pending_projects", p.PendingProjects)
	}
	return p.PendingSessions > 0 || p.PendingProjects > 0, p.Sessions > 0 || p.Projects > 0
}

// serveForget answers `observerctl memory forget`: only the writer writes the store.
func (w *Writer) serveForget(req []byte, send func([]byte) error) {
	var in struct {
		ID int64 `json:"id"`
	}
	var out struct {
		Found bool   `json:"found"`
		Error string `json:"error,omitempty"`
	}
	if err := json.Unmarshal(req, &in); err != nil {
		out.Error = "bad request: " + err.Error()
	} else if found, err := memory.Forget(context.Background(), w.Store.DB, in.ID); err != nil {
		out.Error = err.Error()
	} else {
		out.Found = found
		if found {
			w.notify(bus.StoredNote{Analysis: true})
		}
	}
	data, _ := json.Marshal(out)
	send(data)
}

// memoryBusy is how often the memory loop runs while batches keep coming.
const memoryBusy = 10 * time.Second

// memoryStep summarizes ended epochs, 50 sessions at a time, and recomputes the observations of
// their projects (with drain, every project's once no epoch is left due); it reports whether
// more are due.
func (w *Writer) memoryStep(ctx context.Context, m *memory.Memory, drain bool) (more, again bool) {
	step := m.Step
	if drain {
		step = m.Drain
	}
	p, err := step(ctx, 50)
	if err != nil {
		if ctx.Err() == nil {
			w.Logger.Warn("session memory failed; will retry", "err", err)
		}
		return true, false
	}
	if p.Summaries > 0 || p.Projects > 0 {
		w.notify(bus.StoredNote{Analysis: true})
		w.Logger.Debug("session memory", "summaries", p.Summaries, "projects", p.Projects, "due", p.Due(), "waiting", p.Waiting)
	}
	w.pendMemory.Store(int64(p.Due()))
	return p.Pending > 0, p.Summaries > 0 || p.Projects > 0
}

// memoryFinish summarizes every ended epoch left and observes their projects, step after step
// while steps make progress (one step did 50 sessions: a scan's writer stopped with most of a
// history's sessions unsummarized and no observation, for the next writer to make).
func (w *Writer) memoryFinish(ctx context.Context, m *memory.Memory) {
	for ctx.Err() == nil {
		if more, again := w.memoryStep(ctx, m, true); !more || !again {
			return
		}
	}
}

// analyseFinish analyses everything left, patterns included.
func (w *Writer) analyseFinish(ctx context.Context, a *analysis.Analyzer) {
	p, err := a.Run(ctx)
	w.pendAnalyse.Store(p.PendingSessions)
	if err != nil && ctx.Err() == nil {
		w.Logger.Warn("analysis failed", "err", err)
	} else if err == nil && (p.Sessions > 0 || p.Projects > 0) {
		w.notify(bus.StoredNote{Analysis: true})
	}
}

func (w *Writer) heartbeat(ctx context.Context) {
	w.Bus.HeartbeatNow(ctx, w.Heartbeat, w.Health, w.beat)
}

// beatNow has the health published at once (a drain ended: status says caught up then).
func (w *Writer) beatNow() {
	select {
	case w.beat <- struct{}{}:
	default:
	}
}

// Health is what the heartbeat reports: ok while batches are stored; not ok, saying what it waits
// on and since when, while a batch has waited on the store for over stallAfter or commits fail.
func (w *Writer) Health() bus.Health {
	st := w.Stats()
	h := bus.Health{Component: "writer", OK: true, LastEvent: st.LastEvent, Events: st.Stored,
		Detail: fmt.Sprintf("stored %d, duplicates %d, quarantined %d", st.Stored, st.Duplicates, st.Quarantined)}
	if c := w.catchingUp(); c != "" {
		h.Detail += "; " + c
	}
	if w.Webhook != nil && w.Webhook.Enabled() {
		ok, detail := w.Webhook.Status().Summary()
		h.Notices = append(h.Notices, bus.Notice{Name: "alerts:webhook", OK: ok, Detail: detail})
	}
	now := time.Now()
	since := func(ms int64) string {
		t := time.UnixMilli(ms)
		return fmt.Sprintf("since %s (%s)", t.Local().Format("15:04:05"), now.Sub(t).Round(time.Second))
	}
	if ms := w.writing.Load(); ms > 0 && now.Sub(time.UnixMilli(ms)) > stallAfter {
		h.OK = false
		h.Detail = fmt.Sprintf("waiting on the store %s to commit a batch of %d events (locked by another process? see `observerctl doctor`); %s",
			since(ms), w.writingN.Load(), h.Detail)
	} else if ms := w.failSince.Load(); ms > 0 {
		h.OK = false
		last := ""
		if p := w.lastErr.Load(); p != nil {
			last = *p
		}
		h.Detail = fmt.Sprintf("nothing stored %s: %s; the batch stays on the bus and is retried; %s", since(ms), last, h.Detail)
	}
	return h
}

// catchingUp says what the bulk path left to catch up, or "".
func (w *Writer) catchingUp() string {
	if w.inBulk() {
		return "catching up: storing a backlog (bulk path); the rollups, the full-text index, the analysis and the session memory follow"
	}
	var parts []string
	if w.deferred.Load() {
		parts = append(parts, "indexes")
	}
	if n := w.pendRollups.Load(); n > 0 {
		parts = append(parts, "rollups")
	}
	if w.pendIndex.Load() {
		parts = append(parts, "full-text index")
	}
	switch n := w.pendAnalyse.Load(); {
	case n > 0:
		parts = append(parts, fmt.Sprintf("analysis of %d sessions", n))
	case n < 0:
		parts = append(parts, "analysis")
	}
	switch n := w.pendMemory.Load(); {
	case n != 0:
		parts = append(parts, "session memory") // n counts at least those due, not all
	}
	if len(parts) == 0 {
		return ""
	}
	return "catching up: " + strings.Join(parts, ", ")
}
