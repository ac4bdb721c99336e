package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// The live tail: one bus subscription (Follow) feeds a Hub, which hands each event, summarised, to
// every browser on /api/live whose filters match. Delivery is best effort, as on the bus's live
// subjects: a browser that falls more than liveBuffer events behind loses the overflow and is told
// how many it lost (an SSE "dropped" event); nothing is replayed after a reconnection, the
// history is in the store.
const (
	liveBuffer     = 256
	maxLiveClients = 64
	livePing       = 10 * time.Second
)

// LiveEvent is what a browser receives of an event: the envelope and a one-line summary; never a
// tool's output or a prompt's whole text.
type LiveEvent struct {
	ID        string    `json:"id"`
	Kind      string    `json:"kind"`
	Time      time.Time `json:"time"`
	Source    string    `json:"source,omitempty"`
	Client    string    `json:"client,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	Project   string    `json:"project,omitempty"`
	Summary   string    `json:"summary"`
	Failed    bool      `json:"failed,omitempty"`
}

// Hub fans live events out to the browsers.
type Hub struct {
	mu        sync.Mutex
	subs      map[*liveSub]struct{}
	connected atomic.Pointer[func() bool]
	published atomic.Int64
	last      atomic.Int64 // ms of the last event

	// Store changes (see Changed), under mu: the notes not sent yet, when the last tick went out,
	// and the timer that sends the next one. seq counts the ticks.
	pending   *bus.StoredNote
	lastTick  time.Time
	tickTimer *time.Timer
	seq       atomic.Int64

	// The live tail's subscription to every event, held (under mu) only while a browser follows
	// /api/live: decoding every event costs the dashboard 15-20 µs of CPU per event, which a
	// proxy under load would pay for nobody. cl and logger come from Follow.
	cl       *bus.Client
	logger   *slog.Logger
	tail     *bus.Subscription
	tails    int         // browsers following the tail
	tailStop *time.Timer // lets the subscription go a while after the last browser left
}

// tailLinger is how long the tail's subscription outlives its last browser (a reload reopens it).
var tailLinger = 30 * time.Second

// retainTail counts one more browser on the live tail and subscribes the hub to every event if it
// was not yet. It returns once the subscription is in place, so the browser misses nothing
// published after its stream opened.
func (h *Hub) retainTail() {
	h.mu.Lock()
	h.tails++
	if h.tailStop != nil {
		h.tailStop.Stop()
		h.tailStop = nil
	}
	cl, logger, need := h.cl, h.logger, h.tail == nil && h.cl != nil
	h.mu.Unlock()
	if !need {
		return
	}
	sub, err := cl.Subscribe(bus.Filter{}, func(ev event.Event, _ []byte, err error) {
		if err == nil {
			h.Publish(ev)
		}
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		logger.Warn("live tail not subscribed", "err", err)
	case h.tail == nil:
		h.tail = sub
	default:
		sub.Stop() // another browser subscribed meanwhile
	}
}

// releaseTail counts one browser fewer on the live tail; the last one lets the subscription go
// after tailLinger.
func (h *Hub) releaseTail() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tails--
	if h.tails > 0 || h.tail == nil || h.tailStop != nil {
		return
	}
	h.tailStop = time.AfterFunc(tailLinger, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.tails == 0 && h.tail != nil {
			h.tail.Stop()
			h.tail = nil
		}
		h.tailStop = nil
	})
}

// Tailing reports whether the hub holds its subscription to every event.
func (h *Hub) Tailing() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tail != nil
}

type liveSub struct {
	ch                    chan []byte
	client, project, kind string
	changes               bool // /api/changes: only the store's change ticks, no events
	dropped               atomic.Int64
}

// NewHub makes an empty hub.
func NewHub() *Hub { return &Hub{subs: map[*liveSub]struct{}{}} }

// Connected reports whether the hub's bus subscription is live.
func (h *Hub) Connected() bool {
	f := h.connected.Load()
	return f != nil && (*f)()
}

// Clients counts the browsers following the tail.
func (h *Hub) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Published counts the events received since the start; LastEvent is the time of the latest.
func (h *Hub) Published() int64 { return h.published.Load() }

// LastEvent is when the latest event arrived; zero before the first.
func (h *Hub) LastEvent() time.Time {
	if ms := h.last.Load(); ms > 0 {
		return time.UnixMilli(ms).UTC()
	}
	return time.Time{}
}

// Publish hands ev to every matching browser, without waiting for any.
func (h *Hub) Publish(ev event.Event) {
	h.published.Add(1)
	h.last.Store(time.Now().UnixMilli())
	le := summarize(&ev)
	data, err := json.Marshal(le)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.changes || (s.client != "" && s.client != le.Client) || (s.project != "" && s.project != le.Project) || (s.kind != "" && s.kind != le.Kind) {
			continue
		}
		select {
		case s.ch <- data:
		default:
			s.dropped.Add(1)
		}
	}
}

func (h *Hub) add(s *liveSub) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) >= maxLiveClients {
		return false
	}
	h.subs[s] = struct{}{}
	return true
}

func (h *Hub) remove(s *liveSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

// Follow subscribes the hub to the writer's notes that the store changed (bus.StoredSubject),
// retrying every second while the bus is unreachable, until ctx ends, and lets the live tail
// subscribe to every event through cl while browsers follow it (retainTail). Subscriptions survive
// reconnections (the bus client re-subscribes).
func (h *Hub) Follow(ctx context.Context, cl *bus.Client, logger *slog.Logger) {
	var stored atomic.Bool
	f := func() bool { return stored.Load() && cl.Connected() }
	h.connected.Store(&f)
	h.mu.Lock()
	h.cl, h.logger = cl, logger
	h.mu.Unlock()
	holdSubscription(ctx, logger, "store changes", func() (*bus.Subscription, error) {
		sub, err := cl.SubscribeStored(h.Changed)
		if err == nil {
			stored.Store(true)
		}
		return sub, err
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tail != nil {
		h.tail.Stop()
		h.tail = nil
	}
}

// Keeping every open view current. A browser's views (Overview, Cost, Sessions, ...) re-read the
// store when it changed, not at each event of the live tail: an event's message on the bus arrives
// when it is published, before the writer has committed it (the writer batches, for up to [writer]
// flush_interval, then commits), so a view re-read at that moment could miss it. The writer says
// when a commit is done, and what it held (bus.StoredNote: the kinds, clients, projects and
// sessions of its events, or "the analysis changed", "costs were repriced"); the hub merges the
// notes and hands them to the browsers on /api/changes as "changed" ticks, at most one per
// changesEvery (a backfill commits dozens of batches a second; an isolated commit goes out at
// once). The page (app.js, follow) keeps at most one refresh of the view on screen per 500 ms, and
// only for ticks that concern it (its kinds, its client, project or session filter), and none while
// it is hidden.
const changesEvery = 250 * time.Millisecond

// Changed records that the store changed as n says, and sends the browsers a tick now, or as soon
// as changesEvery has passed since the last one.
func (h *Hub) Changed(n bus.StoredNote) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pending == nil {
		h.pending = &bus.StoredNote{}
	}
	h.pending.Merge(n)
	if h.tickTimer != nil {
		return // a tick is due: it carries this note too
	}
	wait := changesEvery - time.Since(h.lastTick)
	if wait <= 0 {
		h.tickLocked()
		return
	}
	h.tickTimer = time.AfterFunc(wait, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.tickTimer = nil
		h.tickLocked()
	})
}

// changeTick is what a browser receives of the store's changes since the previous tick.
type changeTick struct {
	Seq int64 `json:"seq"` // ticks since the dashboard started (the hello event carries the current one)
	bus.StoredNote
}

func (h *Hub) tickLocked() {
	if h.pending == nil {
		return
	}
	n := *h.pending
	h.pending, h.lastTick = nil, time.Now()
	data, err := json.Marshal(changeTick{Seq: h.seq.Add(1), StoredNote: n})
	if err != nil {
		return
	}
	for s := range h.subs {
		if !s.changes {
			continue
		}
		select {
		case s.ch <- data:
		default:
			s.dropped.Add(1)
		}
	}
}

// holdSubscription subscribes, retrying every second while the bus is unreachable, and holds the
// subscription until ctx ends.
func holdSubscription(ctx context.Context, logger *slog.Logger, what string, subscribe func() (*bus.Subscription, error)) {
	for {
		sub, err := subscribe()
		if err == nil {
			logger.Debug(what + " subscribed")
			<-ctx.Done()
			sub.Stop()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// summarize keeps what the Live tab shows of an event.
func summarize(ev *event.Event) LiveEvent {
	le := LiveEvent{ID: ev.ID, Kind: string(ev.Kind), Time: ev.Time, Source: ev.Source, Client: ev.Client,
		SessionID: ev.SessionID, Project: ev.Project}
	var what string
	switch {
	case ev.Action != nil:
		a := ev.Action
		what = strings.TrimSpace(fmt.Sprintf("%s %s %s", a.Type, a.Tool, clip(a.Target, 300)))
		if a.Success != nil && !*a.Success {
			le.Failed = true
			what += " FAILED " + clip(a.Error, 200)
		}
	case ev.TokenUsage != nil:
		u := ev.TokenUsage
		what = fmt.Sprintf("%s in=%d out=%d cache_read=%d cache_write=%d $%.4f", u.Model, u.Input, u.Output, u.CacheRead, u.CacheCreation, u.CostUSD)
	case ev.APITurn != nil:
		t := ev.APITurn
		what = fmt.Sprintf("%s %s %d %s in=%d out=%d %.0fms $%.4f", t.Provider, t.Model, t.Status, t.Endpoint, t.Input, t.Output, t.LatencyMs, t.CostUSD)
		le.Failed = t.Status >= 400 || t.ErrorClass != ""
	case ev.Compression != nil:
		x := ev.Compression
		what = fmt.Sprintf("%s %d -> %d bytes", x.Mechanism, x.BytesBefore, x.BytesAfter)
	case ev.Session != nil:
		what = strings.TrimSpace(ev.Session.State + " " + ev.Session.Cwd)
	case ev.Hook != nil:
		what = strings.TrimSpace(ev.Hook.Event + " " + ev.Hook.ToolName + " " + ev.Hook.Matcher)
	case ev.MCPCall != nil:
		m := ev.MCPCall
		what = strings.TrimSpace(fmt.Sprintf("%s/%s %.0fms %s", m.Server, m.Tool, m.DurationMs, clip(m.Error, 200)))
		le.Failed = m.Error != ""
	}
	le.Summary = what
	return le
}

// clip shortens s to n bytes at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// changesSSE streams /api/changes as Server-Sent Events: "hello" first (with the bus state and
// "changes", the number of the last tick), then a "changed" event (JSON changeTick) each time the
// store changed, "dropped" when the browser fell behind (it missed ticks), and "status" every
// livePing.
func (s *Server) changesSSE(w http.ResponseWriter, r *http.Request) {
	if r.URL.RawQuery != "" {
		writeError(w, http.StatusBadRequest, "", "/api/changes takes no parameters")
		return
	}
	s.stream(w, r, &liveSub{ch: make(chan []byte, liveBuffer), changes: true})
}

// liveSSE streams /api/live as Server-Sent Events: "hello" first (with the bus state), then one
// unnamed event per bus event (JSON LiveEvent), "dropped" when the browser fell behind, and
// "status" every livePing.
func (s *Server) liveSSE(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > maxQueryBytes {
		writeError(w, http.StatusBadRequest, "", "query string too long")
		return
	}
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "malformed query string: "+err.Error())
		return
	}
	q := &reqParams{r: r, vals: vals, used: map[string]bool{}, now: s.opts.Now()}
	sub := &liveSub{ch: make(chan []byte, liveBuffer), client: q.name("client"), project: q.str("project"), kind: q.name("kind")}
	if sub.kind != "" && !event.Kind(sub.kind).Valid() {
		q.fail(badParam("kind", "%q is not an event kind", sub.kind))
	}
	if err := q.done(); err != nil {
		ae := err.(*apiError)
		writeError(w, ae.Status, ae.Param, ae.Msg)
		return
	}
	s.stream(w, r, sub)
}

// stream serves one SSE subscriber until the browser goes away.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sub *liveSub) {
	if !s.live.add(sub) {
		writeError(w, http.StatusServiceUnavailable, "", fmt.Sprintf("too many live views open (%d): close one", maxLiveClients))
		return
	}
	defer s.live.remove(sub)
	if !sub.changes {
		s.live.retainTail()
		defer s.live.releaseTail()
	}
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	status := func(name string) error {
		fmt.Fprintf(w, "event: %s\ndata: {\"bus_connected\":%t,\"events\":%d,\"changes\":%d}\n\n", name, s.live.Connected(), s.live.Published(), s.live.seq.Load())
		return rc.Flush()
	}
	// The events of /api/live are unnamed ("message"); the ticks of /api/changes are "changed".
	frame := "data: %s\n\n"
	if sub.changes {
		frame = "event: changed\ndata: %s\n\n"
	}
	fmt.Fprint(w, "retry: 2000\n\n")
	if status("hello") != nil {
		return
	}
	ping := time.NewTicker(livePing)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-ping.C:
			if status("status") != nil {
				return
			}
		case data := <-sub.ch:
			if n := sub.dropped.Swap(0); n > 0 {
				fmt.Fprintf(w, "event: dropped\ndata: {\"dropped\":%d}\n\n", n)
			}
			fmt.Fprintf(w, frame, data)
			// Send what else is waiting in the same write.
			for more := true; more; {
				select {
				case data = <-sub.ch:
					fmt.Fprintf(w, frame, data)
				default:
					more = false
				}
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}
