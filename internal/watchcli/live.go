package watchcli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"

	"github.com/observerhq/observer/internal/freshness"
	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/lifecycle"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// live is what observer-watch adds to a scan while it follows sessions as they happen (and what
// `observerctl scan` of history does not do):
//
//   - session lifecycle (package lifecycle): every record the scan publishes is observed, and after
//     each pass the sessions' transitions (active, idle, finalized, a new epoch) are published;
//   - read freshness (package freshness): live read, edit and write results are hashed and reads
//     classified before they are published;
//   - hooks: the watcher subscribes to hook events on the bus. A SessionStart, Stop or SessionEnd
//     moves the tracker (the hook command published the session event itself), and a hook's
//     transcript path that lies outside the readers' roots (say, a CLAUDE_CONFIG_DIR the watcher
//     was not started with) is followed from then on (see hooked.go). A hook published while the
//     watcher is not connected is not seen by it: the session's own state then comes from its
//     records alone.
//
// The lifecycle state is saved in $OBSERVER_HOME/watch/lifecycle.json after each pass that
// changed it.
type live struct {
	logger    *slog.Logger
	life      *lifecycle.Tracker
	fresh     *freshness.Tracker
	statePath string
	hooked    *hooked
	base      []transcript.Adapter // the readers on their default roots

	mu    sync.Mutex
	hooks []event.Event // hook events received, applied at the start of the next pass
	wake  chan struct{} // a hook arrived: start a pass now
	sub   *bus.Subscription
}

// newLive loads the lifecycle state and the hooked transcripts, and subscribes to hook events.
// base are the readers and roots the directories they read.
func newLive(cfg config.Config, cl *bus.Client, logger *slog.Logger, base []transcript.Adapter, roots []string) (*live, error) {
	idle, final := cfg.Watch.IdleAfter.D(), cfg.Watch.FinalizeAfter.D()
	if idle <= 0 || final < idle {
		return nil, fmt.Errorf("[watch] idle_after (%v) must be positive and finalize_after (%v) at least as long", idle, final)
	}
	l := &live{
		logger:    logger,
		life:      lifecycle.New(lifecycle.Config{IdleAfter: idle, FinalizeAfter: final}),
		fresh:     freshness.New(),
		statePath: filepath.Join(cfg.Home, "watch", "lifecycle.json"),
		hooked:    newHooked(filepath.Join(cfg.Home, "watch", "hooked.json"), roots, logger),
		base:      base,
		wake:      make(chan struct{}, 1),
	}
	if err := l.life.Load(l.statePath); err != nil {
		// The ids are deterministic: starting over republishes at worst what the writer has.
		logger.Warn("session states not loaded; starting over", "err", err)
	}
	sub, err := cl.Subscribe(bus.Filter{Kind: event.KindHook}, l.onHook)
	if err != nil {
		logger.Warn("hook events unavailable; sessions follow their transcripts only", "err", err)
	}
	l.sub = sub
	return l, nil
}

// close ends the subscription and saves the state.
func (l *live) close() {
	l.sub.Stop()
	l.save()
}

// onHook runs on the bus client's goroutine: it queues the hook for the scan loop.
func (l *live) onHook(ev event.Event, _ []byte, err error) {
	if err != nil || ev.Hook == nil {
		return
	}
	l.mu.Lock()
	l.hooks = append(l.hooks, ev)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// beforePass applies the hooks received since the last pass, and gives the scanner the adapters
// for the transcripts they announced.
func (l *live) beforePass(s *ingest.Scanner) {
	l.mu.Lock()
	hooks := l.hooks
	l.hooks = nil
	l.mu.Unlock()
	for _, ev := range hooks {
		l.life.Hook(ev)
		l.hooked.add(ev)
	}
	s.Adapters = l.hooked.adapters(l.base)
}

// afterPass publishes the transitions due now and saves the state. It returns how many events it
// published.
func (l *live) afterPass(ctx context.Context, pub ingest.Publisher) int {
	evs, commit := l.life.Tick()
	if len(evs) > 0 {
		if _, err := pub.PublishBatch(ctx, evs); err != nil {
			l.logger.Warn("session states not published; retrying next pass", "err", err, "events", len(evs))
			return 0
		}
		commit()
		for _, e := range evs {
			l.logger.Debug("session", "client", e.Client, "session", e.SessionID, "state", e.Session.State,
				"epoch", e.Session.Epoch, "last_record", e.Time)
		}
	}
	l.save()
	return len(evs)
}

func (l *live) save() {
	if !l.life.Dirty() {
		return
	}
	if err := l.life.Save(l.statePath); err != nil {
		l.logger.Warn("session states not saved", "err", err)
	}
}

// publisher wraps the bus client for the scanner: each batch is annotated and observed on its way.
func (l *live) publisher(next ingest.Publisher) ingest.Publisher {
	return livePublisher{next: next, l: l}
}

type livePublisher struct {
	next ingest.Publisher
	l    *live
}

// PublishBatch classifies the batch's live reads, publishes it with the epoch events its
// compactions call for, and only then lets the trackers keep what the batch taught them.
func (p livePublisher) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	return p.publish(ctx, evs, false, p.next.PublishBatch)
}

// PublishBacklog is PublishBatch for a batch of a backlog (ingest.BacklogPublisher), when the
// publisher it wraps can mark one. The backlog's last batch also carries the sessions' state
// changes due once it is published (what afterPass would publish after it: over a history, every
// session's, which the session memory summarizes), so that the writer has the whole history when
// it is told the backlog ended.
func (p livePublisher) PublishBacklog(ctx context.Context, evs []event.Event, last bool) (int, error) {
	bp, ok := p.next.(ingest.BacklogPublisher)
	if !ok {
		return p.PublishBatch(ctx, evs)
	}
	return p.publish(ctx, evs, last, func(ctx context.Context, all []event.Event) (int, error) {
		return bp.PublishBacklog(ctx, all, last)
	})
}

// publish sends evs with the events the session tracker adds (epochs; with transitions, the state
// changes due after them too) and then commits what the trackers learnt.
func (p livePublisher) publish(ctx context.Context, evs []event.Event, transitions bool, send func(context.Context, []event.Event) (int, error)) (int, error) {
	commitFresh := p.l.fresh.Annotate(evs)
	var extra, ticked []event.Event
	var commitLife func()
	if transitions {
		extra, ticked, commitLife = p.l.life.ObserveAndTick(evs)
	} else {
		extra, commitLife = p.l.life.Observe(evs)
	}
	all := evs
	if len(extra)+len(ticked) > 0 {
		all = slices.Concat(evs, extra, ticked)
	}
	n, err := send(ctx, all)
	if err != nil {
		return n, err
	}
	commitFresh()
	commitLife()
	return n, nil
}

// wakeup signals a hook's arrival: the loop starts a pass at once.
func (l *live) wakeup() <-chan struct{} { return l.wake }
