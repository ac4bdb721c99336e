package bus

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/event"
)

// Subscription is a live subscription; Stop ends it.
type Subscription struct{ sub *nats.Subscription }

// Stop ends the subscription.
func (s *Subscription) Stop() {
	if s != nil && s.sub != nil {
		s.sub.Unsubscribe()
	}
}

// Filter selects events by kind and client at the subject level. Empty fields match all.
type Filter struct {
	Kind   event.Kind
	Client string
}

// Subject returns the subject pattern for the filter.
func (f Filter) Subject() string { return event.SubjectFilter(f.Kind, f.Client) }

// Subscribe delivers live events matching f to fn, in publication order, on one goroutine (a
// batch message's events one by one). A message or event that does not decode is passed with its
// error and the raw bytes.
func (c *Client) Subscribe(f Filter, fn func(ev event.Event, raw []byte, err error)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(f.Subject(), func(m *nats.Msg) {
		raws, err := Split(m.Header, m.Data)
		if err != nil {
			fn(event.Event{}, m.Data, err)
			return
		}
		for _, raw := range raws {
			ev, err := DecodeEvent(raw)
			fn(ev, raw, err)
		}
	})
	if err != nil {
		return nil, err
	}
	sub.SetPendingLimits(1<<20, 256<<20)
	if err := c.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return &Subscription{sub: sub}, nil
}

// Health is a component's heartbeat, published on observer.health.<component> every few seconds.
// The supervisor derives each component's health and last event time from it.
type Health struct {
	Component string    `json:"component"`
	PID       int       `json:"pid"`
	Time      time.Time `json:"time"`
	OK        bool      `json:"ok"`
	Detail    string    `json:"detail,omitempty"`
	LastEvent time.Time `json:"last_event,omitzero"`
	Events    int64     `json:"events"` // handled since the process started
	// Degraded lists what of the component does not work while the rest does, each saying what,
	// on which address and why ("otlp/http listener 127.0.0.1:4318: address already in use"). A
	// component that reports OK with something degraded is shown as degraded, not healthy.
	Degraded []string `json:"degraded,omitempty"`
	// Notices are what the component tells of parts that do not make its health: a user should
	// hear of them (observerctl doctor shows each as a check of its own), but the component is
	// neither degraded nor unhealthy for them. The writer's [alerts] webhook is one: alerts are
	// stored and shown whether or not it takes them.
	Notices []Notice `json:"notices,omitempty"`
}

// A Notice is the state of one part a component reports beside its health.
type Notice struct {
	Name   string `json:"name"` // the doctor check's name, such as "alerts:webhook"
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

const healthPrefix = "observer.health."

// PublishHealth sends a heartbeat. It does not wait for anyone.
func (c *Client) PublishHealth(h Health) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return c.nc.Publish(healthPrefix+h.Component, data)
}

// SubscribeHealth delivers every component's heartbeats.
func (c *Client) SubscribeHealth(fn func(Health)) (*Subscription, error) {
	sub, err := c.nc.Subscribe(healthPrefix+"*", func(m *nats.Msg) {
		var h Health
		if json.Unmarshal(m.Data, &h) == nil {
			fn(h)
		}
	})
	if err != nil {
		return nil, err
	}
	return &Subscription{sub: sub}, nil
}

// Message is one event delivered to the writer, still undecoded.
type Message struct {
	Subject string
	Data    []byte
	// Header is the message's header: a batch message's says how many events it carries (Split).
	Header nats.Header
	// Pending is how many messages the stream still held for the writer, after this one, when it
	// was delivered: the backlog behind it (a scan or backfill publishing history makes one).
	Pending uint64
}

// Events is how many events m carries.
func (m Message) Events() int { return EventCount(m.Header) }

// ConsumeOptions tunes the writer's batching.
type ConsumeOptions struct {
	BatchSize     int           // most events per batch (a batch message counts its events)
	FlushInterval time.Duration // longest a message waits for its batch to fill
	// BulkBatchSize is the most events per batch while a backlog waits (at least BatchSize
	// events behind a batch's first message, counting each waiting message as that one's size:
	// history being published): fewer, larger transactions write each index page of the store
	// fewer times. Zero means 5 × BatchSize; at most MaxAckPending messages.
	BulkBatchSize int
	// Stream and Consumer name the durable consumer to read; default the observer stream's
	// writer. A team hub's writer reads the team stream (package team).
	Stream, Consumer string
}

// Consume hands batches of stored events to handle, through the writer's durable consumer, until
// ctx ends. A batch is acknowledged only when handle returns nil; otherwise it is redelivered
// after a pause. Consume rides out the bus going away and coming back.
func (c *Client) Consume(ctx context.Context, o ConsumeOptions, handle func(ctx context.Context, batch []Message) error) error {
	return ConsumePrepared(ctx, c, o, func(b []Message) []Message { return b }, handle)
}

// ConsumePrepared is Consume with a batch's work in two steps: prepare (decoding, without side
// effects) runs on the next batch, on a goroutine of its own, while store runs on the one before,
// so that a writer decodes while it commits. A batch is acknowledged only when store returns nil;
// otherwise it is redelivered after a pause (the batch prepared meanwhile is stored after it).
func ConsumePrepared[T any](ctx context.Context, c *Client, o ConsumeOptions, prepare func([]Message) T, store func(context.Context, T) error) error {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 50 * time.Millisecond
	}
	if o.BulkBatchSize <= 0 {
		o.BulkBatchSize = 5 * o.BatchSize
	}
	o.BulkBatchSize = min(max(o.BulkBatchSize, o.BatchSize), MaxAckPending)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := consumeOnce(ctx, c, o, prepare, store)
		if ctx.Err() != nil {
			break
		}
		c.logger.Warn("consumer interrupted; retrying", "err", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
	return nil
}

func consumeOnce[T any](ctx context.Context, c *Client, o ConsumeOptions, prepare func([]Message) T, store func(context.Context, T) error) error {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	stream, consumer := cmp.Or(o.Stream, StreamName), cmp.Or(o.Consumer, WriterConsumer)
	cons, err := c.js.Consumer(cctx, stream, consumer)
	cancel()
	if err != nil {
		return fmt.Errorf("find consumer %s of stream %s: %w", consumer, stream, err)
	}
	// The messages fetched ahead are bounded in bytes too: a batch message holds up to
	// BatchEvents events. (The bound must exceed the largest message, MaxPayload.)
	it, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(2*o.BatchSize, 2*MaxPayload), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return err
	}
	defer it.Stop()
	type job struct {
		msgs []jetstream.Msg
		p    T
	}
	// One batch is prepared ahead of the one being stored.
	jobs := make(chan job, 1)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	fetchErr := make(chan error, 1)
	go func() {
		defer close(jobs)
		var last time.Time // when the last batch was fetched
		for {
			msgs, batch, err := c.fetch(fctx, it, o, last)
			last = time.Now()
			if err != nil || msgs == nil {
				fetchErr <- err
				return
			}
			select {
			case jobs <- job{msgs, prepare(batch)}:
			case <-fctx.Done():
				fetchErr <- nil
				return
			}
		}
	}()
	failures := 0
	for j := range jobs {
		if err := store(ctx, j.p); err != nil {
			failures++
			delay := min(time.Duration(failures)*time.Second, 30*time.Second)
			c.logger.Error("batch not stored; it will be redelivered", "messages", len(j.msgs), "err", err, "retry_in", delay)
			for _, m := range j.msgs {
				m.NakWithDelay(delay)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(delay):
			}
			continue
		}
		failures = 0
		// Each message is acked on its own: an "ack all up to here" would also ack older messages
		// that a killed writer left pending and that are still waiting for redelivery.
		for _, m := range j.msgs {
			if err := m.Ack(); err != nil {
				c.logger.Warn("ack failed; the event will be redelivered and de-duplicated", "err", err)
				break
			}
		}
	}
	return <-fetchErr
}

// steadyFlush is how many FlushIntervals a batch waits to fill while messages flow steadily.
const steadyFlush = 4

// fetch waits for the next batch of messages on it: the first one, then as many more as come
// within FlushInterval, up to BatchSize events (BulkBatchSize while a backlog waits). While
// messages flow steadily (the first one came within FlushInterval of the last batch, prev: a
// proxy under load), a batch waits up to steadyFlush FlushIntervals to fill: the writer's work per
// batch (a transaction, the rollups of the hours and sessions it touched, each recomputed from
// all their rows, a note to the dashboard) is then done as seldom as BatchSize allows, and a
// message waits at most that long to be stored (it is on the bus, acknowledged, meanwhile). It
// returns no messages and no error when ctx ends, and an error when the iterator is closed.
func (c *Client) fetch(ctx context.Context, it jetstream.MessagesContext, o ConsumeOptions, prev time.Time) ([]jetstream.Msg, []Message, error) {
	var m jetstream.Msg
	for {
		var err error
		m, err = it.Next(jetstream.NextContext(ctx))
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, nil, nil
		}
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
			return nil, nil, err
		}
		// Missed heartbeats while the bus is away: keep waiting on the same iterator.
		c.logger.Debug("consumer wait", "err", err)
		if !c.nc.IsConnected() {
			time.Sleep(100 * time.Millisecond)
		}
	}
	msgs := []jetstream.Msg{m}
	events := EventCount(m.Headers())
	size, deadline := o.BatchSize, time.Now().Add(o.FlushInterval)
	if !prev.IsZero() && time.Since(prev) < o.FlushInterval {
		deadline = time.Now().Add(steadyFlush * o.FlushInterval)
	}
	mark := Backlog(m.Headers())
	if md, err := m.Metadata(); err == nil && md.NumPending*uint64(events) >= uint64(o.BatchSize) {
		// A backlog: the messages are in the stream, a larger batch of them fills at once
		// (the wait only bounds a slow delivery).
		size = int(min(uint64(o.BulkBatchSize), uint64(events)*(1+md.NumPending)))
		deadline = deadline.Add(200 * time.Millisecond)
	} else if mark == BacklogPart {
		// A backlog its publisher marked, published no faster than it is stored: a larger batch
		// as its messages come, until its end.
		size = o.BulkBatchSize
		deadline = deadline.Add(200 * time.Millisecond)
	}
	for events < size && len(msgs) < MaxAckPending && mark != BacklogEnd {
		wait := time.Until(deadline)
		if wait <= 0 {
			break
		}
		m, err := it.Next(jetstream.NextMaxWait(wait))
		if err != nil {
			break
		}
		msgs = append(msgs, m)
		events += EventCount(m.Headers())
		mark = Backlog(m.Headers())
	}
	batch := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		msg := Message{Subject: m.Subject(), Data: m.Data(), Header: m.Headers()}
		if md, err := m.Metadata(); err == nil {
			msg.Pending = md.NumPending
		}
		batch = append(batch, msg)
	}
	return msgs, batch, nil
}

// Heartbeat asks fn for the component's report every interval until ctx ends and publishes it,
// stamped with the component's pid and the time, when it says something new, or at least every
// QuietBeats intervals when it says the same. The supervisor counts a component healthy while
// its heartbeats arrive (within 5 s): an idle suite's components, whose reports do not change,
// so send half the heartbeats, and the bus host wakes half as often for them.
func (c *Client) Heartbeat(ctx context.Context, interval time.Duration, fn func() Health) {
	c.HeartbeatNow(ctx, interval, fn, nil)
}

// QuietBeats is how many intervals a heartbeat that says the same as the last may be held back.
const QuietBeats = 2

// HeartbeatNow is Heartbeat that also publishes at once when now signals: a component whose
// state changed (a catch-up done) says so then, not up to interval later.
func (c *Client) HeartbeatNow(ctx context.Context, interval time.Duration, fn func() Health, now <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var b beats
	signalled := false
	for {
		h := fn()
		h.PID = os.Getpid()
		if b.due(h, signalled) {
			h.Time = time.Now().UTC()
			c.PublishHealth(h)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			signalled = false
		case <-now:
			signalled = true
		}
	}
}

// beats decides which of a component's reports, one an interval, are sent.
type beats struct {
	last Health
	sent bool // one was
	held int  // reports held back since the last one sent
}

// due reports whether h goes out: the first, one that says something new, one asked for at once
// (signalled), and the QuietBeats-th report since the last sent.
func (b *beats) due(h Health, signalled bool) bool {
	b.held++
	if b.sent && !signalled && b.held < QuietBeats && sameHealth(h, b.last) {
		return false
	}
	b.last, b.sent, b.held = h, true, 0
	return true
}

// sameHealth reports whether two reports say the same, but for when and by which process.
func sameHealth(a, b Health) bool {
	return a.Component == b.Component && a.OK == b.OK && a.Detail == b.Detail && a.LastEvent.Equal(b.LastEvent) &&
		a.Events == b.Events && slices.Equal(a.Degraded, b.Degraded) && slices.Equal(a.Notices, b.Notices)
}
