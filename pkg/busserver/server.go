// Package busserver hosts the bus: an embedded NATS server (nats-server/v2) with JetStream on,
// the observer stream and the writer's durable consumer. observerctl up, observerctl bus, a team
// hub and a one-shot scan with nothing running start it; everything else reaches it through
// package bus, whose client does not import this package or nats-server.
//
// Guarantees:
//   - Start returns once clients can connect and the stream and the writer's consumer exist: events
//     published before the writer first connects are kept for it.
//   - A full stream refuses new events (bus.Client spools them); it never drops acknowledged ones.
//   - A write error (a full disk) is reported by StoreError and recovered from without a restart
//     once the disk has room again.
package busserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
)

// Config configures the embedded bus.
type Config struct {
	Dir      string // JetStream file store
	Host     string // listen host; 127.0.0.1 unless the user says otherwise
	Port     int    // -1 picks a free port (tests)
	Token    string // required of every client
	MaxAge   time.Duration
	MaxBytes int64 // the stream's bound; with Setup (a hub), that of Setup's stream, for the start check
	// MaxBytesKey names MaxBytes's setting in messages; "[bus] max_bytes" when empty (a hub's is
	// "[hub] max_bytes").
	MaxBytesKey string
	AckWait     time.Duration // how long the stream waits for the writer's ack before redelivery
	Logger      *slog.Logger

	// Configure, when set, adjusts the server's options before it starts: team mode (package
	// team) adds a JetStream domain and a leafnode to a hub, or a hub's listeners and
	// authentication.
	Configure func(*server.Options) error
	// Setup, when set, runs once the server is ready, in place of creating the observer stream and
	// the writer's consumer: a team hub creates its own streams. Stream then names the stream the
	// writer's consumer reads (Stats).
	Setup  func(ctx context.Context, js jetstream.JetStream) error
	Stream string
}

// Server is the embedded NATS server with the observer stream.
type Server struct {
	ns    *server.Server
	cfg   Config
	token string
	jsc   server.JetStreamConfig // JetStream's limits as sized at start, to enable it again with

	storeErr  atomic.Pointer[string] // the stream's write error while it has one (a full disk)
	recovered atomic.Int64           // times JetStream was restarted after a write error
	cancel    context.CancelFunc
	done      chan struct{}
}

// Start starts the embedded NATS server with JetStream on cfg.Dir and makes sure the observer
// stream and the writer's durable consumer exist. It returns once clients can connect.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Token == "" {
		return nil, errors.New("bus: a token is required")
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = 15 * time.Second
	}
	if cfg.Port > 0 {
		// nats-server only logs a failed listen; check first so the user gets a clear error.
		addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("bus: cannot listen on %s (is another observer bus running? change [bus] port or OBSERVER_BUS_PORT): %w", addr, err)
		}
		l.Close()
	}
	opts := &server.Options{
		ServerName:            "observer",
		Host:                  cfg.Host,
		Port:                  cfg.Port,
		Authorization:         cfg.Token,
		JetStream:             true,
		StoreDir:              cfg.Dir,
		NoSigs:                true,
		MaxPayload:            bus.MaxPayload,
		DisableShortFirstPing: true,
	}
	if cfg.Configure != nil {
		if err := cfg.Configure(opts); err != nil {
			return nil, fmt.Errorf("bus: %w", err)
		}
	}
	if cfg.Stream == "" {
		cfg.Stream = bus.StreamName
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("bus: create store dir: %w", err)
	}
	if cfg.MaxBytesKey == "" {
		cfg.MaxBytesKey = "[bus] max_bytes"
	}
	// JetStream sizes its storage limit to 3/4 of the disk's free space and refuses a stream whose
	// bound exceeds it ("insufficient storage resources available"): say so in our words first,
	// naming the setting, its value and the free space.
	if opts.JetStreamMaxStore <= 0 {
		if err := CheckReserve(cfg.Dir, cfg.MaxBytesKey, cfg.MaxBytes); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	if cfg.Logger != nil {
		ns.SetLoggerV2(natsLogger{cfg.Logger}, false, false, false)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("bus: server on %s:%d not ready after 30s (see the log)", cfg.Host, cfg.Port)
	}
	s := &Server{ns: ns, cfg: cfg, token: cfg.Token, done: make(chan struct{})}
	if jsc := ns.JetStreamConfig(); jsc != nil {
		s.jsc = *jsc
	}
	if err := s.ensureStream(ctx); err != nil {
		ns.Shutdown()
		return nil, err
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.watchStore(wctx)
	return s, nil
}

// storeCheckEvery is how often the bus looks for a stream write error and, once the disk has room
// again, recovers from it.
var storeCheckEvery = 2 * time.Second

// watchStore recovers the stream from a write error. A JetStream file store that failed a write
// (ENOSPC on a full disk) keeps the error and refuses every later publish until the server
// restarts, even once space is freed. While it has one, StoreError reports it; once the bus's disk
// has bus.DiskLow free again, JetStream is shut down and enabled again with the limits it started
// with: it reloads the stream and the writer's consumer from disk (what was acknowledged is
// there), and publishes are taken again without restarting observer.
func (s *Server) watchStore(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(storeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		werr := s.writeError()
		if werr == "" {
			s.storeErr.Store(nil)
			continue
		}
		s.storeErr.Store(&werr)
		if free, err := bus.DiskFree(s.cfg.Dir); err != nil || free < bus.DiskLow {
			continue
		}
		if err := s.restartJetStream(ctx); err != nil {
			s.logf(slog.LevelError, "bus: cannot take events again after a write error", "err", err, "write_error", werr)
			continue
		}
		s.recovered.Add(1)
		s.storeErr.Store(nil)
		s.logf(slog.LevelInfo, "bus: the disk has room again; JetStream restarted and takes events again", "write_error", werr)
	}
}

// writeError returns the stream's write error, or that JetStream is off, or "".
func (s *Server) writeError() string {
	if !s.ns.JetStreamEnabled() {
		return "JetStream is disabled"
	}
	h := s.ns.Healthz(&server.HealthzOptions{Details: true})
	for _, e := range h.Errors {
		if strings.Contains(e.Error, "write error") {
			return e.Error
		}
	}
	return ""
}

func (s *Server) restartJetStream(ctx context.Context) error {
	if s.jsc.MaxStore <= 0 {
		return errors.New("JetStream's start configuration is unknown")
	}
	if s.ns.JetStreamEnabled() {
		if err := s.ns.ShutdownJetStream(); err != nil {
			return fmt.Errorf("shut JetStream down: %w", err)
		}
	}
	jsc := s.jsc
	jsc.StoreDir = s.cfg.Dir // EnableJetStream adds the jetstream/ directory itself
	if err := s.ns.EnableJetStream(&jsc); err != nil {
		return fmt.Errorf("enable JetStream: %w", err)
	}
	return s.ensureStream(ctx)
}

// StoreError says why the stream cannot store events right now (a write error, such as a full
// disk), or returns "". The bus recovers by itself once the disk has room again.
func (s *Server) StoreError() string {
	if p := s.storeErr.Load(); p != nil {
		return *p
	}
	return ""
}

// Recoveries counts the times the bus took events again after a write error.
func (s *Server) Recoveries() int64 { return s.recovered.Load() }

func (s *Server) logf(level slog.Level, msg string, args ...any) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Log(context.Background(), level, msg, args...)
	}
}

// Conn opens an in-process connection to the server, named name, for the caller to close.
func (s *Server) Conn(name string) (*nats.Conn, error) {
	return nats.Connect("", nats.InProcessServer(s.ns), nats.Token(s.token), nats.Name(name))
}

// InProcessConn opens a connection to the server without a socket: it makes *Server a
// bus.InProcess, for bus.Options.Server.
func (s *Server) InProcessConn() (net.Conn, error) { return s.ns.InProcessConn() }

var _ bus.InProcess = (*Server)(nil)

// NATS returns the embedded server, for team mode's checks (leafnode connections).
func (s *Server) NATS() *server.Server { return s.ns }

func (s *Server) ensureStream(ctx context.Context) error {
	nc, err := s.Conn("observer-bus-setup")
	if err != nil {
		return fmt.Errorf("bus: connect in-process: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	if s.cfg.Setup != nil {
		// A team hub's cluster may take minutes to form (its nodes started one by one, a loaded
		// machine): its streams wait for it.
		sctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		return s.cfg.Setup(sctx, js)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        bus.StreamName,
		Description: "observer events, kept until the writer has stored them",
		Subjects:    []string{event.SubjectPrefix + ".>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.InterestPolicy,
		MaxAge:      s.cfg.MaxAge,
		MaxBytes:    s.cfg.MaxBytes,
		// A full stream refuses new events (their producers spool them, and publish them again
		// once the writer has made room) rather than drop the oldest, which it had acknowledged
		// and the writer has not stored.
		Discard:    jetstream.DiscardNew,
		Duplicates: bus.DuplicateWindow,
		MaxMsgSize: bus.MaxPayload,
	})
	if err != nil {
		if bus.IsNoSpace(err) {
			if free, ferr := bus.DiskFree(s.cfg.Dir); ferr == nil {
				return reserveError(s.cfg.Dir, s.cfg.MaxBytesKey, s.cfg.MaxBytes, free)
			}
		}
		return fmt.Errorf("bus: create stream %s: %w", bus.StreamName, err)
	}
	_, err = js.CreateOrUpdateConsumer(ctx, bus.StreamName, jetstream.ConsumerConfig{
		Durable:       bus.WriterConsumer,
		Description:   "the store writer",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.cfg.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: bus.MaxAckPending,
		MaxWaiting:    16,
	})
	if err != nil {
		return fmt.Errorf("bus: create consumer %s: %w", bus.WriterConsumer, err)
	}
	return nil
}

// ClientURL is the address clients dial.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// Token is the token clients present.
func (s *Server) Token() string { return s.token }

// Stats describes the stream.
type Stats struct {
	Published uint64    // events the stream has accepted since it was created
	Pending   uint64    // events the writer has not yet acknowledged
	LastEvent time.Time // when the newest event arrived
	Bytes     uint64    // what the stream holds on disk
	MaxBytes  int64     // its bound ([bus] max_bytes); 0 or less: none
}

// Full reports whether the stream holds 95% of its bound or more: it refuses new events then (or
// soon), and producers spool them until the writer makes room.
func (st Stats) Full() bool {
	return st.MaxBytes > 0 && st.Bytes*100 >= uint64(st.MaxBytes)*95
}

// Stats reads the stream's and the writer consumer's state.
func (s *Server) Stats(ctx context.Context) (Stats, error) {
	nc, err := s.Conn("observer-stats")
	if err != nil {
		return Stats{}, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return Stats{}, err
	}
	str, err := js.Stream(ctx, s.cfg.Stream)
	if err != nil {
		return Stats{}, err
	}
	si, err := str.Info(ctx)
	if err != nil {
		return Stats{}, err
	}
	st := Stats{Published: si.State.LastSeq, LastEvent: si.State.LastTime, Bytes: si.State.Bytes, MaxBytes: si.Config.MaxBytes}
	c, err := str.Consumer(ctx, bus.WriterConsumer)
	if err != nil {
		return st, err
	}
	ci, err := c.Info(ctx)
	if err != nil {
		return st, err
	}
	st.Pending = ci.NumPending + uint64(ci.NumAckPending)
	return st, nil
}

// Close shuts the server down, letting JetStream flush its files.
func (s *Server) Close() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
}

// SetLogger sends another embedded server's log lines (team mode's share server) to l, as the
// bus's own go.
func SetLogger(ns *server.Server, l *slog.Logger) { ns.SetLoggerV2(natsLogger{l}, false, false, false) }

// natsLogger sends nats-server's log lines to slog. Fatal lines are logged as errors: the server
// must never exit the process that embeds it.
type natsLogger struct{ l *slog.Logger }

func (n natsLogger) Noticef(format string, v ...any) {
	n.l.Debug(fmt.Sprintf(format, v...), "component", "nats")
}
func (n natsLogger) Warnf(format string, v ...any) {
	n.l.Warn(fmt.Sprintf(format, v...), "component", "nats")
}
func (n natsLogger) Fatalf(format string, v ...any) {
	n.l.Error(fmt.Sprintf(format, v...), "component", "nats")
}
func (n natsLogger) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	// A team member whose hub is away would log every reconnection attempt (every 1-2 s): say
	// it once every 5 minutes (observerctl team status and doctor tell the state at any time).
	if strings.HasPrefix(msg, "Error trying to connect as leafnode") {
		now := time.Now().UnixNano()
		last := leafErrAt.Load()
		if now-last < int64(5*time.Minute) || !leafErrAt.CompareAndSwap(last, now) {
			n.l.Debug(msg, "component", "nats")
			return
		}
		msg += " (repeats are logged at debug level for 5 minutes)"
		n.l.Warn(msg, "component", "nats")
		return
	}
	n.l.Error(msg, "component", "nats")
}

// leafErrAt is when a failed leafnode connection was last logged above debug (unix ns).
var leafErrAt atomic.Int64

func (n natsLogger) Debugf(format string, v ...any) {}
func (n natsLogger) Tracef(format string, v ...any) {}
