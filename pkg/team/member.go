package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
)

// MemberConfig is a member's side of team mode ([team] in config.toml).
type MemberConfig struct {
	Creds Credentials
	Hub   []string // overrides the credentials' hub URLs when set
	Share Level
	// CarryPending delivers the events held for a previous hub or identity to the current one.
	CarryPending bool
	MaxAge       time.Duration // how long the share stream keeps events (delivered or not)
	MaxBytes     int64
	Logger       *slog.Logger
}

func (c *MemberConfig) urls() []string {
	if len(c.Hub) > 0 {
		return c.Hub
	}
	return c.Creds.Hub
}

// binding names the hub (its CA, else its URLs) and the member the share stream holds events for.
func (c *MemberConfig) binding() (hub, member string) {
	hub = Fingerprint([]byte(c.Creds.CA))
	if hub == "" {
		hub = strings.Join(c.urls(), ",")
	}
	return hub, c.Creds.Member
}

// configure sets the share server's options: its JetStream domain and its leafnode to the hub.
func (c *MemberConfig) configure(o *server.Options) error {
	var urls []*url.URL
	for _, s := range c.urls() {
		u, err := ParseHubURL(s)
		if err != nil {
			return err
		}
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return errors.New("[team]: no hub URL (neither [team] hub nor the credentials name one)")
	}
	tc, err := ClientTLS([]byte(c.Creds.CA))
	if err != nil {
		return err
	}
	// The hub tells its leafnodes apart by server name: every member's must differ, and the hub
	// admits a key only under its own member's.
	o.ServerName = LeafName(c.Creds.Member)
	o.JetStreamDomain = MemberDomain(c.Creds.Member)
	// A hub back after a restart gets its members within 1-2 s (nats adds up to the interval as jitter).
	o.LeafNode.ReconnectInterval = time.Second
	o.LeafNode.Remotes = append(o.LeafNode.Remotes, &server.RemoteLeafOpts{
		URLs: urls, Nkey: c.Creds.Seed, TLS: true, TLSConfig: tc, TLSTimeout: 5,
		// Only what the hub asks of the share server crosses: its JetStream API (to mirror the
		// share stream) and the mirror's flow control. It holds nothing but the share stream.
		DenyImports: []string{event.SubjectPrefix + ".>", "observer.>", shareSubjects},
	})
	return nil
}

// Sharing is a member's side of team mode, in the process that hosts its bus. The share stream
// lives in a server of its own (the share server: in-process only, no listener), and only that
// server joins the hub: the hub can reach the share stream and nothing else of this machine, not
// the observer stream and its raw events.
type Sharing struct {
	cfg    MemberConfig
	share  *server.Server
	sharer *Sharer
	status *nats.Subscription
	done   chan struct{}
}

// StatusSubject is where the bus host answers `observerctl team status` (and doctor): Status as
// JSON.
const StatusSubject = "observer.ctl.team.status"

// StartMember starts the share server in dir (its JetStream files), joined to the hub, and the
// sharer between the main bus and it, until ctx ends.
func StartMember(ctx context.Context, main *busserver.Server, cfg MemberConfig, dir string) (*Sharing, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	o := &server.Options{DontListen: true, JetStream: true, StoreDir: dir, NoSigs: true, MaxPayload: bus.MaxPayload,
		DisableShortFirstPing: true}
	if err := cfg.configure(o); err != nil {
		return nil, err
	}
	ns, err := server.NewServer(o)
	if err != nil {
		return nil, fmt.Errorf("team: share server: %w", err)
	}
	busserver.SetLogger(ns, cfg.Logger)
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("team: the share server did not start in 30 s")
	}
	m := &Sharing{cfg: cfg, share: ns, done: make(chan struct{})}
	sh, err := startSharer(ctx, main, ns, cfg)
	if err != nil {
		ns.Shutdown()
		return nil, err
	}
	m.sharer = sh
	nc, err := main.Conn("observer-team-status")
	if err != nil {
		ns.Shutdown()
		return nil, err
	}
	m.status, err = nc.Subscribe(StatusSubject, func(msg *nats.Msg) {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		st, err := m.Status(sctx)
		if err != nil {
			st.Error = err.Error()
		}
		data, _ := json.Marshal(st)
		msg.Respond(data)
	})
	if err != nil {
		nc.Close()
		ns.Shutdown()
		return nil, err
	}
	go func() {
		<-ctx.Done()
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
		close(m.done)
	}()
	return m, nil
}

// Done is closed once the member's share server has stopped (after ctx ended).
func (m *Sharing) Done() <-chan struct{} { return m.done }

// Connected reports whether the share server's leafnode to the hub is up.
func (m *Sharing) Connected() bool { return m.share.NumLeafNodes() > 0 }

// Status is what `observerctl team status` shows.
type Status struct {
	Member    string `json:"member"`
	Share     string `json:"share"`
	Connected bool   `json:"connected"`   // the leafnode is up and the hub's mirror listens
	Pending   uint64 `json:"pending"`     // shared events not sent to the hub yet
	Unacked   uint64 `json:"unconfirmed"` // sent, not yet confirmed by the hub's flow control
	Held      uint64 `json:"held"`        // events the share stream holds (sent or not)
	Shared    uint64 `json:"shared"`      // events put in the share stream since it was made
	Error     string `json:"error,omitempty"`
}

// Status reads the share stream and the hub's consumer on it.
func (m *Sharing) Status(ctx context.Context) (Status, error) {
	st := Status{Member: m.cfg.Creds.Member, Share: string(m.cfg.Share)}
	nc, err := nats.Connect("", nats.InProcessServer(m.share), nats.Name("observer-team-status"))
	if err != nil {
		return st, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return st, err
	}
	str, err := js.Stream(ctx, ShareStream)
	if err != nil {
		return st, fmt.Errorf("share stream: %w", err)
	}
	info := str.CachedInfo()
	st.Shared, st.Held = info.State.LastSeq, info.State.Msgs
	c, err := js.PushConsumer(ctx, ShareStream, HubConsumer)
	if err != nil {
		return st, fmt.Errorf("hub consumer: %w", err)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		return st, err
	}
	st.Pending, st.Unacked = ci.NumPending, uint64(ci.NumAckPending)
	st.Connected = m.Connected() && ci.PushBound
	return st, nil
}

// Sharer copies the member's events from the observer stream (the main bus) into its share
// stream (the share server), stripped to the share level.
type Sharer struct {
	cfg             MemberConfig
	nc, snc         *nats.Conn          // the main bus, the share server
	js, sjs         jetstream.JetStream // the main bus, the share server
	logger          *slog.Logger
	key             []byte // ProjectKey of the member's seed
	shared, dropped uint64
}

// startSharer makes the share stream (checking what it was bound to) and the sharer's durable
// consumer on the observer stream, then copies events until ctx ends.
func startSharer(ctx context.Context, main *busserver.Server, share *server.Server, cfg MemberConfig) (*Sharer, error) {
	if cfg.Share == "" {
		cfg.Share = Usage
	}
	nc, err := main.Conn("observer-team-sharer")
	if err != nil {
		return nil, err
	}
	snc, err := nats.Connect("", nats.InProcessServer(share), nats.Name("observer-team-sharer"))
	if err != nil {
		nc.Close()
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err == nil {
		var sjs jetstream.JetStream
		if sjs, err = jetstream.New(snc); err == nil {
			s := &Sharer{cfg: cfg, nc: nc, snc: snc, js: js, sjs: sjs, logger: cfg.Logger, key: ProjectKey(cfg.Creds.Seed)}
			if err = s.ensure(ctx); err == nil {
				go s.run(ctx)
				return s, nil
			}
		}
	}
	nc.Close()
	snc.Close()
	return nil, err
}

const (
	metaHub    = "observer_hub"
	metaMember = "observer_member"
)

func (s *Sharer) ensure(ctx context.Context) error {
	hub, member := s.cfg.binding()
	want := jetstream.StreamConfig{
		Name:        ShareStream,
		Description: "events this member shares with its team hub, stripped to its share level",
		Subjects:    []string{shareSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      s.cfg.MaxAge,
		MaxBytes:    s.cfg.MaxBytes,
		Discard:     jetstream.DiscardOld,
		Duplicates:  bus.DuplicateWindow,
		MaxMsgSize:  bus.MaxPayload,
		Metadata:    map[string]string{metaHub: hub, metaMember: member},
	}
	str, err := s.sjs.Stream(ctx, ShareStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err := s.sjs.CreateStream(ctx, want); err != nil {
			return fmt.Errorf("team: create %s: %w", ShareStream, err)
		}
	case err != nil:
		return fmt.Errorf("team: %s: %w", ShareStream, err)
	default:
		info := str.CachedInfo()
		oldHub, oldMember := info.Config.Metadata[metaHub], info.Config.Metadata[metaMember]
		if (oldHub != hub || oldMember != member) && info.State.Msgs > 0 {
			if s.cfg.CarryPending {
				// Only what the previous hub did not confirm goes: the rest it has.
				if c, err := s.sjs.PushConsumer(ctx, ShareStream, HubConsumer); err == nil {
					if floor := c.CachedInfo().AckFloor.Stream; floor > 0 {
						if err := str.Purge(ctx, jetstream.WithPurgeSequence(floor+1)); err != nil {
							return fmt.Errorf("team: purge %s: %w", ShareStream, err)
						}
					}
				}
				s.logger.Warn("team: the events held for the previous hub or member go to the new one ([team] carry_pending)",
					"was_member", oldMember, "member", member)
			} else {
				// Purge keeps the sequence going, so a hub mirroring this stream before does not
				// take the next events for ones it already has.
				if err := str.Purge(ctx); err != nil {
					return fmt.Errorf("team: purge %s: %w", ShareStream, err)
				}
				s.logger.Warn("team: this member now shares with another hub or as another member; the events held for the previous one are not sent to the new one (they stay in the local store; set [team] carry_pending = true to send them)",
					"events", info.State.Msgs, "was_member", oldMember, "member", member)
			}
		}
		if _, err := s.sjs.UpdateStream(ctx, want); err != nil {
			return fmt.Errorf("team: update %s: %w", ShareStream, err)
		}
	}
	// The hub mirrors the share stream through this durable consumer: it delivers whenever the hub
	// listens, with acks carried by flow control, so it is also the record of what the hub has.
	hubCons := jetstream.ConsumerConfig{
		Durable:        HubConsumer,
		Description:    "the team hub's mirror of this member",
		DeliverSubject: DeliverSubject(member),
		AckPolicy:      jetstream.AckFlowControlPolicy,
		FlowControl:    true,
		IdleHeartbeat:  time.Second,
		MaxAckPending:  10000,
	}
	// Another member name delivers elsewhere: only then is the old durable replaced (a transient
	// error must not lose the record of what the hub has).
	if c, err := s.sjs.PushConsumer(ctx, ShareStream, HubConsumer); err == nil && c.CachedInfo().Config.DeliverSubject != hubCons.DeliverSubject {
		if err := s.sjs.DeleteConsumer(ctx, ShareStream, HubConsumer); err != nil {
			return fmt.Errorf("team: hub consumer: %w", err)
		}
	}
	if _, err := s.sjs.CreateOrUpdatePushConsumer(ctx, ShareStream, hubCons); err != nil {
		return fmt.Errorf("team: hub consumer: %w", err)
	}
	_, err = s.js.Consumer(ctx, bus.StreamName, ShareConsumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		// Sharing starts with the events produced from now on: history is not sent to a hub
		// implicitly.
		_, err = s.js.CreateConsumer(ctx, bus.StreamName, jetstream.ConsumerConfig{
			Durable:       ShareConsumer,
			Description:   "team mode: copies events into " + ShareStream,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       30 * time.Second,
			DeliverPolicy: jetstream.DeliverNewPolicy,
			MaxAckPending: 20000,
		})
	}
	if err != nil {
		return fmt.Errorf("team: sharer consumer: %w", err)
	}
	return nil
}

// StopSharing removes the sharer's consumer when team mode is off, so the observer stream does
// not keep events for it. It is a no-op when there is none.
func StopSharing(ctx context.Context, srv *busserver.Server) error {
	nc, err := srv.Conn("observer-team-off")
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	err = js.DeleteConsumer(ctx, bus.StreamName, ShareConsumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil
	}
	return err
}

func (s *Sharer) run(ctx context.Context) {
	defer s.nc.Close()
	defer s.snc.Close()
	for ctx.Err() == nil {
		err := s.consume(ctx)
		if ctx.Err() != nil {
			return
		}
		s.logger.Warn("team sharer interrupted; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (s *Sharer) consume(ctx context.Context) error {
	cons, err := s.js.Consumer(ctx, bus.StreamName, ShareConsumer)
	if err != nil {
		return err
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1000), jetstream.PullHeartbeat(2*time.Second))
	if err != nil {
		return err
	}
	defer it.Stop()
	var msgs []jetstream.Msg
	for {
		msgs = msgs[:0]
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return err
			}
			continue
		}
		msgs = append(msgs, m)
		events := bus.EventCount(m.Headers())
		// A batch waits at most 20 ms for more: a steady stream of events must not hold the
		// first of them back until 500 have come. (A batch message counts its events.)
		deadline := time.Now().Add(20 * time.Millisecond)
		for events < 500 {
			wait := time.Until(deadline)
			if wait <= 0 {
				break
			}
			m, err := it.Next(jetstream.NextMaxWait(min(wait, 5*time.Millisecond)))
			if err != nil {
				break
			}
			msgs = append(msgs, m)
			events += bus.EventCount(m.Headers())
		}
		if err := s.share(ctx, msgs); err != nil {
			s.logger.Warn("team: events not copied to the share stream; retrying", "events", len(msgs), "err", err)
			for _, m := range msgs {
				m.NakWithDelay(time.Second)
			}
			continue
		}
		for _, m := range msgs {
			m.Ack()
		}
	}
}

// share publishes msgs, stripped, into the share stream and waits for its acks.
func (s *Sharer) share(ctx context.Context, msgs []jetstream.Msg) error {
	var futures []jetstream.PubAckFuture
	for _, m := range msgs {
		raws, err := bus.Split(m.Headers(), m.Data())
		if err != nil {
			s.dropped++ // the writer quarantines it locally
			continue
		}
		// Each event of a batch message goes to the share stream on its own: the hub may run
		// an older observer that reads one event per message.
		for _, raw := range raws {
			out, subject, ok := Shareable(raw, s.cfg.Share, s.key)
			if !ok {
				s.dropped++ // the writer quarantines it locally
				continue
			}
			if out == nil {
				continue // withheld at this share level
			}
			f, err := s.sjs.PublishMsgAsync(&nats.Msg{Subject: subject, Data: out,
				Header: nats.Header{jetstream.MsgIDHeader: []string{bus.MsgID(out)}}})
			if err != nil {
				return err
			}
			futures = append(futures, f)
		}
	}
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for _, f := range futures {
		select {
		case <-f.Ok():
			s.shared++
		case err := <-f.Err():
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return errors.New("no ack from the share stream in 10s")
		}
	}
	return nil
}

// Shareable decodes an event, strips it to level (key: ProjectKey) and returns its bytes and share
// subject; ok is false for what does not decode. A conversation's message is withheld below share
// level full (a conversation is content: it reaches the hub only at full): out is nil, ok true.
func Shareable(data []byte, level Level, key []byte) (out []byte, subject string, ok bool) {
	ev, err := event.Decode(data)
	if err != nil {
		return nil, "", false
	}
	if ev.Kind == event.KindMessage && level != Full {
		return nil, "", true
	}
	Strip(&ev, level, key)
	out, err = event.Marshal(&ev)
	if err != nil {
		return nil, "", false
	}
	return out, "share" + strings.TrimPrefix(ev.Subject(), event.SubjectPrefix), true
}
