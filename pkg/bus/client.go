// Package bus is how observer processes talk: the client every producer, the writer and the live
// views use to reach the bus, a NATS server with one JetStream stream. The server itself is hosted
// by package busserver (observerctl up, observerctl bus, a hub); this package does not import it,
// so a binary that only talks to the bus (observer-dash, observer-mcp) does not link nats-server.
//
// Guarantees:
//   - Publish returns once the stream has stored the event (the stream's ack) or the event is in the
//     disk spool. Spooled events are published again, oldest first, when the bus is reachable.
//     Delivery is at-least-once; the stream drops a re-published event (same encoded bytes) within
//     DuplicateWindow and the writer is idempotent on the event id beyond it. The stream keys on the
//     bytes, not the event id, because two events may share an id on purpose: a tool call and its
//     result, a message's usage as it grows; the writer merges those.
//   - The stream keeps an event until the writer acks it, which the writer does only after the
//     transaction that stored it has committed; a writer killed mid-batch gets the batch again.
//   - Live subscribers (tail, dashboard) see events as they are published, without acks and without
//     history.
//
// Callers pass event.Event values; no NATS type appears in this package's API.
package bus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/event"
)

// ErrUnavailable reports that the bus cannot be reached.
var ErrUnavailable = errors.New("bus unavailable")

// ErrTooLarge reports an event larger than MaxPayload.
var ErrTooLarge = errors.New("event larger than the bus carries")

// Stream and consumer names, and the stream's limits, which the bus host (package busserver) sets
// up and every client relies on. The writer's durable consumer is created with the stream, so
// events published before the writer first connects are kept for it.
const (
	StreamName     = "OBSERVER"
	WriterConsumer = "writer"
	// MaxPayload is the largest event the bus carries. Producers truncate tool outputs well below it.
	MaxPayload = 8 << 20
	// DuplicateWindow is how long the stream remembers event ids to drop re-publications. The writer
	// is idempotent beyond it. The bus host holds every id of the window in memory (a history of
	// 200,000 events kept it tens of MB above idle for the whole window): two minutes cover a
	// publisher's retries after a lost ack.
	DuplicateWindow = 2 * time.Minute
	// MaxAckPending is how many events the writer may hold unacknowledged.
	MaxAckPending = 50000
)

// InProcess is a bus hosted in this process (a *busserver.Server) that a client can connect to
// without a socket. It is an interface so that this package, and every binary that only talks to
// the bus, does not link the NATS server.
type InProcess interface {
	InProcessConn() (net.Conn, error)
}

// Options configures a client.
type Options struct {
	URL    string    // nats://127.0.0.1:4247
	Server InProcess // connect in-process to this server instead of URL
	Token  string
	// TokenFile, instead of Token, names the bus token file, read again at every connection
	// attempt: a long-running producer may start before the bus has created it.
	TokenFile string
	Name      string // shown in the server's connection list, e.g. "observer-proxy"

	// SpoolDir enables the disk spool: events that cannot be published go there. Empty disables it,
	// and Publish then fails while the bus is unreachable.
	SpoolDir string
	// DrainEvery, when positive, drains the whole spool directory (other processes' files too) at
	// this interval. The process that hosts the bus sets it; a short-lived producer leaves it zero.
	DrainEvery time.Duration
	// OneShot marks a client that publishes a few events and exits (a hook call). It never drains
	// the spool, which would slow it down; it leaves that to the long-running processes.
	OneShot bool
	// Wait makes Connect fail with ErrUnavailable when the first connection attempt fails. Without
	// it Connect returns a client that keeps trying in the background.
	Wait bool
	// Timeout bounds one publish's wait for the stream's ack. Default 5s.
	Timeout time.Duration
	Logger  *slog.Logger
}

// Result says where a published event went.
type Result int

// Where Publish put an event.
const (
	Published Result = iota // the stream stored it
	Spooled                 // the disk spool holds it until the bus is back
)

func (r Result) String() string {
	if r == Spooled {
		return "spooled"
	}
	return "published"
}

// Client publishes events, consumes them (the writer) and subscribes to them (live views).
type Client struct {
	opts   Options
	nc     *nats.Conn
	js     jetstream.JetStream
	spool  *Spool
	logger *slog.Logger

	spooling atomic.Bool // events go to the spool until a drain empties it, to keep their order
	spoolMu  sync.Mutex  // orders appends against a drain turning spooling off
	kick     chan struct{}
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	drainMu  sync.Mutex
}

// Connect dials the bus. With a spool and without Wait it returns even when the bus is down, and
// keeps reconnecting in the background; events published meanwhile are spooled.
func Connect(ctx context.Context, opts Options) (*Client, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{opts: opts, logger: logger, kick: make(chan struct{}, 1)}
	if opts.SpoolDir != "" {
		sp, err := OpenSpool(opts.SpoolDir, logger)
		if err != nil {
			return nil, err
		}
		c.spool = sp
	}
	auth := nats.Token(opts.Token)
	if opts.TokenFile != "" {
		// Read at every (re)connect: a producer may start before the bus has made its token.
		auth = nats.TokenHandler(func() string {
			tok, _ := ReadToken(opts.TokenFile)
			return tok
		})
	}
	nopts := []nats.Option{
		auth,
		nats.Name(opts.Name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(200 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		// No in-memory buffering while disconnected: the spool is the buffer, and it survives a crash.
		nats.ReconnectBufSize(-1),
		nats.Timeout(2 * time.Second),
		nats.ReconnectHandler(func(*nats.Conn) {
			logger.Info("bus reconnected")
			c.trigger()
		}),
		// Without Wait, a client started before the bus first connects in the background, and
		// nats.go reports that as connected, not reconnected.
		nats.ConnectHandler(func(*nats.Conn) {
			logger.Debug("bus connected")
			c.trigger()
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("bus disconnected", "err", err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			logger.Warn("bus error", "err", err)
		}),
	}
	if !opts.Wait {
		nopts = append(nopts, nats.RetryOnFailedConnect(true))
	}
	url := opts.URL
	if opts.Server != nil {
		nopts = append(nopts, nats.InProcessServer(opts.Server))
		url = ""
	}
	nc, err := nats.Connect(url, nopts...)
	if err != nil {
		if errors.Is(err, nats.ErrAuthorization) || errors.Is(err, nats.ErrAuthExpired) {
			return nil, fmt.Errorf("bus at %s refused the token (is %s from another observer home?): %w", url, "bus.token", err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	c.nc, c.js = nc, js
	if c.spool != nil && !opts.OneShot {
		if files, _ := c.spool.Files(); len(files) > 0 {
			c.spooling.Store(true)
		}
		bg, cancel := context.WithCancel(context.Background())
		c.cancel = cancel
		c.wg.Add(1)
		go c.drainLoop(bg)
		if nc.IsConnected() {
			c.trigger()
		}
	}
	return c, nil
}

// Connected reports whether the client is connected right now.
func (c *Client) Connected() bool { return c.nc.IsConnected() }

// Publish sends one event and waits for the stream's ack, or spools it when the bus cannot take
// it. It fails only for an invalid event, or when the bus is down and there is no spool.
func (c *Client) Publish(ctx context.Context, ev *event.Event) (Result, error) {
	data, err := marshalEvent(ev)
	if err != nil {
		return 0, err
	}
	if len(data) > MaxPayload {
		return 0, fmt.Errorf("%w: %d bytes (max %d)", ErrTooLarge, len(data), MaxPayload)
	}
	if c.spool != nil && (c.spooling.Load() || !c.nc.IsConnected()) {
		return c.toSpool(data)
	}
	err = c.publishRaw(ctx, ev.Subject(), data)
	if err == nil {
		return Published, nil
	}
	if c.spool == nil {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	c.logger.Warn("publish failed; spooling", "id", ev.ID, "err", err)
	return c.toSpool(data)
}

func (c *Client) publishRaw(ctx context.Context, subject string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	_, err := c.js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: data},
		jetstream.WithMsgID(msgID(data)), jetstream.WithExpectStream(StreamName))
	return err
}

func (c *Client) toSpool(data []byte) (Result, error) {
	c.spoolMu.Lock()
	wasSpooling := c.spooling.Swap(true)
	err := c.spool.Append(data)
	c.spoolMu.Unlock()
	if err != nil {
		return 0, err
	}
	if !wasSpooling {
		// A publish can fail with the connection up (the stream did not answer in time); no
		// reconnect will come to start the drain then, so ask for one now.
		c.trigger()
	}
	return Spooled, nil
}

// PublishBatch publishes many events without waiting for each ack in turn, then waits for all of
// them, Timeout in all. The events go in batch messages (batch.go): those of one kind and client
// together, BatchEvents at most per message. Events the stream did not ack by then are spooled,
// one by one; it returns how many. Without a spool, those events are named in a NotRecordedError
// wrapping ErrUnavailable.
func (c *Client) PublishBatch(ctx context.Context, evs []event.Event) (spooled int, err error) {
	return c.publishBatch(ctx, evs, "")
}

// PublishBacklog is PublishBatch for a batch of a backlog (BacklogHeader): its messages say
// BacklogPart, or, when last is set, the last one says BacklogEnd. Events spooled lose the mark
// (they are published again later, one by one).
func (c *Client) PublishBacklog(ctx context.Context, evs []event.Event, last bool) (spooled int, err error) {
	mark := BacklogPart
	if last {
		mark = BacklogEnd
	}
	return c.publishBatch(ctx, evs, mark)
}

func (c *Client) publishBatch(ctx context.Context, evs []event.Event, backlog string) (spooled int, err error) {
	datas := make([][]byte, len(evs))
	for i := range evs {
		d, err := marshalEvent(&evs[i])
		if err != nil {
			return 0, fmt.Errorf("event %d: %w", i, err)
		}
		if len(d) > MaxPayload {
			return 0, fmt.Errorf("event %d: %w", i, ErrTooLarge)
		}
		datas[i] = d
	}
	var lost []int
	var lostErr error
	spoolAll := func(idx []int) (int, error) {
		for k, i := range idx {
			if _, err := c.toSpool(datas[i]); err != nil {
				// The spool failed (a full disk): every event from here on is lost; say which.
				lost = append(lost, idx[k:]...)
				return spooled, &NotRecordedError{Lost: lost, Err: err}
			}
			spooled++
		}
		if len(lost) > 0 {
			return spooled, &NotRecordedError{Lost: lost, Err: lostErr}
		}
		return spooled, nil
	}
	cs := chunks(evs, datas)
	if c.spool != nil && (c.spooling.Load() || !c.nc.IsConnected()) {
		return spoolAll(eventsOf(cs))
	}
	futures := make([]jetstream.PubAckFuture, len(cs))
	for k := range cs {
		mark := backlog
		if backlog == BacklogEnd && k < len(cs)-1 {
			mark = BacklogPart
		}
		msg := cs[k].message(datas, mark)
		f, err := c.js.PublishMsgAsync(msg, jetstream.WithMsgID(msgID(msg.Data)), jetstream.WithExpectStream(StreamName))
		if err != nil {
			if c.spool == nil {
				return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
			}
			// Wait for what is in flight, spool the rest.
			lost, lostErr = c.waitFutures(ctx, futures[:k], cs[:k], datas, &spooled)
			return spoolAll(eventsOf(cs[k:]))
		}
		futures[k] = f
	}
	if c.spool == nil {
		if unacked, err := c.waitAcks(ctx, futures); len(unacked) > 0 {
			lost := make([]chunk, len(unacked))
			for i, k := range unacked {
				lost[i] = cs[k]
			}
			return 0, &NotRecordedError{Lost: eventsOf(lost), Err: fmt.Errorf("%w: %v", ErrUnavailable, err)}
		}
		return 0, nil
	}
	if lost, err := c.waitFutures(ctx, futures, cs, datas, &spooled); len(lost) > 0 {
		return spooled, &NotRecordedError{Lost: lost, Err: err}
	}
	return spooled, nil
}

// NotRecordedError is PublishBatch's error when some events were neither acknowledged by the
// stream within Timeout nor spooled (the spool's disk is full, or there is no spool): they may
// not have been recorded, and the caller counts them as such. The count may be too high: an event
// whose ack did not come in time may still be stored by a slow stream, and nothing says so later.
// It is never too low: an event not named here was acknowledged or spooled.
type NotRecordedError struct {
	Lost []int // indexes in the batch of the events not confirmed recorded
	Err  error // the spool's error, or why the stream did not acknowledge (no spool)
}

func (e *NotRecordedError) Error() string {
	return fmt.Sprintf("%d event(s) neither acknowledged nor spooled, maybe not recorded: %v", len(e.Lost), e.Err)
}

func (e *NotRecordedError) Unwrap() error { return e.Err }

// waitFutures waits for the acks of futures, Timeout in all (waitAcks), and spools the events
// of the messages not acknowledged by then (futures[k] is chunk cs[k]'s). It returns the indexes
// of those it could not spool either, and the spool's first error.
func (c *Client) waitFutures(ctx context.Context, futures []jetstream.PubAckFuture, cs []chunk, datas [][]byte, spooled *int) (lost []int, firstErr error) {
	unacked, _ := c.waitAcks(ctx, futures)
	for _, k := range unacked {
		for _, i := range cs[k].idx {
			if _, err := c.toSpool(datas[i]); err == nil {
				*spooled++
			} else {
				lost = append(lost, i)
				if firstErr == nil {
					firstErr = err
				}
			}
		}
	}
	slices.Sort(lost)
	return lost, firstErr
}

// waitAcks waits for the acks of futures, Timeout in all, and returns the indexes of the messages
// not acknowledged by then and the first reason. The deadline holds for every future after it
// passes: a stream that takes events and never answers (a JetStream whose store failed a write)
// must not hold the batch, or the producer's publishing behind it, any longer.
func (c *Client) waitAcks(ctx context.Context, futures []jetstream.PubAckFuture) (unacked []int, firstErr error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	for i, f := range futures {
		var err error
		select {
		case <-f.Ok():
			continue
		default:
		}
		select {
		case <-f.Ok():
			continue
		case err = <-f.Err():
		case <-ctx.Done():
			err = fmt.Errorf("no ack within %v: %w", c.opts.Timeout, ctx.Err())
		}
		unacked = append(unacked, i)
		if firstErr == nil {
			firstErr = err
		}
	}
	return unacked, firstErr
}

func (c *Client) trigger() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Client) drainLoop(ctx context.Context) {
	defer c.wg.Done()
	var tick <-chan time.Time
	if c.opts.DrainEvery > 0 {
		t := time.NewTicker(c.opts.DrainEvery)
		defer t.Stop()
		tick = t.C
	}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-tick:
		case <-retry.C:
		}
		if !c.nc.IsConnected() {
			// Close the current spool file, so the process hosting the bus can publish it
			// should this client not get back to the bus first.
			c.spool.Rotate()
			continue
		}
		if _, err := c.DrainSpool(ctx); err != nil && !errors.Is(err, ErrCorruptSpool) {
			retry.Reset(time.Second)
		}
	}
}

// DrainSpool publishes what the spool holds, oldest first, and clears the spooling state once the
// spool is empty so Publish goes straight to the bus again.
func (c *Client) DrainSpool(ctx context.Context) (DrainReport, error) {
	if c.spool == nil {
		return DrainReport{}, nil
	}
	c.drainMu.Lock()
	defer c.drainMu.Unlock()
	var total DrainReport
	var errs []error
	for range 10 { // new events may be spooled while draining; a few rounds catch up with them
		rep, err := c.spool.Drain(ctx, func(ctx context.Context, ev *event.Event, raw []byte) error {
			return c.publishRaw(ctx, ev.Subject(), raw)
		})
		total.Files += rep.Files
		total.Events += rep.Events
		total.Corrupt += rep.Corrupt
		total.Busy, total.Remaining = rep.Busy, rep.Remaining
		if err != nil && !errors.Is(err, ErrCorruptSpool) {
			return total, err
		}
		if err != nil {
			errs = append(errs, err)
		}
		if rep.Files == 0 && rep.Corrupt == 0 {
			break
		}
	}
	if total.Events > 0 {
		c.logger.Info("spool drained", "events", total.Events, "files", total.Files)
	}
	// Spooling ends only when no event of this client waits on disk. An event appended after the
	// last round sits in a file this client still holds open: drain again rather than strand it.
	c.spoolMu.Lock()
	if total.Remaining == 0 {
		if c.spool.HasOpenFile() {
			defer c.trigger()
		} else {
			c.spooling.Store(false)
		}
	}
	c.spoolMu.Unlock()
	return total, errors.Join(errs...)
}

// Close stops background work, flushes what is in flight and closes the connection. Spooled events
// stay on disk.
func (c *Client) Close() {
	if c.cancel != nil {
		c.cancel()
	}
	c.wg.Wait()
	if c.spool != nil {
		c.spool.Close()
	}
	if c.nc.IsConnected() {
		c.nc.FlushTimeout(time.Second)
	}
	c.nc.Close()
}

// MsgID is the de-duplication key the observer stream uses (msgID), for other streams of events
// (team mode's share stream).
func MsgID(data []byte) string { return msgID(data) }

// msgID is the stream's de-duplication key: a hash of the encoded event. A re-publication of the
// same event (a retry, a spool replay) is dropped; a later event that shares the event id but
// carries more (a tool call's result, a message's final usage) is not, and the writer merges it.
func msgID(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16])
}
