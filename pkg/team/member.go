package team

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/observerhq/observer/pkg/bus"
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

// Configure gives the member's embedded bus its JetStream domain and its leafnode to the hub
// (bus.ServerConfig.Configure).
func (c *MemberConfig) Configure(o *server.Options) error {
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
	// The hub tells its leafnodes apart by server name: every member's must differ.
	o.ServerName = "observer-" + MemberDomain(c.Creds.Member)
	o.JetStreamDomain = MemberDomain(c.Creds.Member)
	// A hub back after a restart gets its members within 1-2 s (nats adds up to the interval as jitter).
	o.LeafNode.ReconnectInterval = time.Second
	o.LeafNode.Remotes = append(o.LeafNode.Remotes, &server.RemoteLeafOpts{
		URLs: urls, Nkey: c.Creds.Seed, TLS: true, TLSConfig: tc, TLSTimeout: 5,
		// Only what the hub asks of this machine crosses: its JetStream API (to mirror the share
		// stream) and the mirror's deliveries and flow control. Nothing the hub publishes reaches
		// the member's own streams.
		DenyImports: []string{event.SubjectPrefix + ".>", "observer.>", shareSubjects},
	})
	return nil
}

// HubConnected reports whether the member's bus has its leafnode to the hub up.
func HubConnected(srv *bus.Server) bool { return srv.NATS().NumLeafNodes() > 0 }

// Sharer copies the member's events into its share stream, stripped to the share level.
type Sharer struct {
	cfg             MemberConfig
	nc              *nats.Conn
	js              jetstream.JetStream
	logger          *slog.Logger
	shared, dropped uint64
}

// StartSharer makes the share stream (checking what it was bound to) and the sharer's durable
// consumer on the observer stream, then copies events until ctx ends.
func StartSharer(ctx context.Context, srv *bus.Server, cfg MemberConfig) (*Sharer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Share == "" {
		cfg.Share = Usage
	}
	nc, err := srv.Conn("observer-team-sharer")
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	s := &Sharer{cfg: cfg, nc: nc, js: js, logger: cfg.Logger}
	if err := s.ensure(ctx); err != nil {
		nc.Close()
		return nil, err
	}
	go s.run(ctx)
	return s, nil
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
	str, err := s.js.Stream(ctx, ShareStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		if _, err := s.js.CreateStream(ctx, want); err != nil {
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
				if c, err := s.js.PushConsumer(ctx, ShareStream, HubConsumer); err == nil {
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
		if _, err := s.js.UpdateStream(ctx, want); err != nil {
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
	if _, err := s.js.CreateOrUpdatePushConsumer(ctx, ShareStream, hubCons); err != nil {
		// Another member name: the old durable delivers elsewhere.
		if err := s.js.DeleteConsumer(ctx, ShareStream, HubConsumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("team: hub consumer: %w", err)
		}
		if _, err := s.js.CreateOrUpdatePushConsumer(ctx, ShareStream, hubCons); err != nil {
			return fmt.Errorf("team: hub consumer: %w", err)
		}
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
func StopSharing(ctx context.Context, srv *bus.Server) error {
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
		// A batch waits at most 20 ms for more: a steady stream of events must not hold the
		// first of them back until 500 have come.
		deadline := time.Now().Add(20 * time.Millisecond)
		for len(msgs) < 500 {
			wait := time.Until(deadline)
			if wait <= 0 {
				break
			}
			m, err := it.Next(jetstream.NextMaxWait(min(wait, 5*time.Millisecond)))
			if err != nil {
				break
			}
			msgs = append(msgs, m)
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
		out, subject, ok := Shareable(m.Data(), s.cfg.Share)
		if !ok {
			s.dropped++ // the writer quarantines it locally
			continue
		}
		f, err := s.js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: out,
			Header: nats.Header{jetstream.MsgIDHeader: []string{bus.MsgID(out)}}})
		if err != nil {
			return err
		}
		futures = append(futures, f)
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

// Shareable decodes an event, strips it to level and returns its bytes and share subject; ok is
// false for what does not decode.
func Shareable(data []byte, level Level) (out []byte, subject string, ok bool) {
	ev, err := event.Decode(data)
	if err != nil {
		return nil, "", false
	}
	Strip(&ev, level)
	out, err = event.Marshal(&ev)
	if err != nil {
		return nil, "", false
	}
	return out, "share" + strings.TrimPrefix(ev.Subject(), event.SubjectPrefix), true
}
