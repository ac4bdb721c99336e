package team

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
)

// Member is one entry of the hub's registry.
type Member struct {
	Name  string    `json:"name"`
	NKey  string    `json:"nkey"` // public key
	Added time.Time `json:"added"`
}

// LoadMembers reads the hub's registry (a JSON list; a missing file is an empty one).
func LoadMembers(path string) ([]Member, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseMembers(path, data)
}

func parseMembers(path string, data []byte) ([]Member, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var ms []Member
	if err := json.Unmarshal(data, &ms); err != nil {
		return nil, fmt.Errorf("hub members %s: %w", path, err)
	}
	for _, m := range ms {
		if err := ValidName(m.Name); err != nil {
			return nil, fmt.Errorf("hub members %s: %w", path, err)
		}
		if !nkeys.IsValidPublicUserKey(m.NKey) {
			return nil, fmt.Errorf("hub members %s: member %s has no valid public nkey", path, m.Name)
		}
	}
	return ms, nil
}

// SaveMembers writes the registry whole (mode 0600), through a temporary file.
func SaveMembers(path string, ms []Member) error {
	data, err := json.MarshalIndent(ms, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// HubConfig configures a hub's NATS side.
type HubConfig struct {
	Dir         string // TLS files
	MembersFile string // the registry, read again whenever it changes
	Token       string // the hub's own processes (writer, dashboard) present it
	LeafAddr    string // host:port members connect to
	CertFile    string // optional: the user's own certificate and key for LeafAddr
	KeyFile     string
	NoTLS       bool // tests of failure paths only; members then connect in plain text

	// Cluster: NodeName is this node's name (unique in the cluster), ClusterAddr where other
	// nodes reach it, Routes the other nodes' cluster addresses (host:port), ClusterSecret what
	// nodes present to each other. Replicas is the streams' replica count (1, or 3 in a cluster).
	NodeName      string
	ClusterName   string
	ClusterAddr   string
	Routes        []string
	ClusterSecret string
	Replicas      int

	MaxAge   time.Duration // how long mirrors keep members' events (the hub store keeps them after)
	MaxBytes int64
	AckWait  time.Duration
	Logger   *slog.Logger
}

// Hub is the NATS side of a running hub: its authentication, and the streams of its members.
type Hub struct {
	cfg    HubConfig
	auth   *hubAuth
	mu     sync.Mutex
	loaded []byte          // the registry's bytes the members were read from
	have   map[string]bool // members whose mirror and source exist
}

// NewHub checks cfg and reads the registry.
func NewHub(cfg HubConfig) (*Hub, error) {
	if cfg.Token == "" {
		return nil, errors.New("hub: a token is required")
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Hub{cfg: cfg, auth: &hubAuth{token: cfg.Token, logger: cfg.Logger}, have: map[string]bool{}}
	h.loaded, _ = os.ReadFile(cfg.MembersFile)
	ms, err := parseMembers(cfg.MembersFile, h.loaded)
	if err != nil {
		return nil, err
	}
	h.auth.set(ms)
	return h, nil
}

// Configure sets a hub's options on the embedded server (busserver.Config.Configure).
func (h *Hub) Configure(o *server.Options) error {
	o.ServerName = cmp.Or(h.cfg.NodeName, "hub")
	o.JetStreamDomain = HubDomain
	o.Authorization = ""
	o.CustomClientAuthentication = h.auth
	o.AlwaysEnableNonce = true
	// The replies to the JetStream requests the hub makes name the domain, stream and consumer
	// they ask about ($JSC.R.<domain>.<account hash>.<stream>.<consumer>.<id>), so a member can
	// be let answer only its own mirror's (MemberPermissions).
	if o.FeatureFlags == nil {
		o.FeatureFlags = map[string]bool{}
	}
	o.FeatureFlags[server.FeatureFlagJsAPIReplyFormatV2] = true
	host, port, err := splitHostPort(h.cfg.LeafAddr)
	if err != nil {
		return fmt.Errorf("[hub] addr: %w", err)
	}
	o.LeafNode.Host, o.LeafNode.Port = host, port
	if !h.cfg.NoTLS {
		tc, err := ServerTLS(h.cfg.Dir, h.cfg.CertFile, h.cfg.KeyFile)
		if err != nil {
			return err
		}
		o.LeafNode.TLSConfig, o.LeafNode.TLSTimeout = tc, 5
	}
	if h.cfg.ClusterAddr != "" {
		if h.cfg.ClusterSecret == "" {
			return errors.New("hub: a cluster needs a secret shared by its nodes")
		}
		host, port, err := splitHostPort(h.cfg.ClusterAddr)
		if err != nil {
			return fmt.Errorf("[hub] cluster_addr: %w", err)
		}
		o.Cluster = server.ClusterOpts{Name: cmp.Or(h.cfg.ClusterName, "observer-hub"), Host: host, Port: port,
			Username: "observer-hub", Password: h.cfg.ClusterSecret}
		for _, r := range h.cfg.Routes {
			u := &url.URL{Scheme: "nats-route", Host: r, User: url.UserPassword("observer-hub", h.cfg.ClusterSecret)}
			o.Routes = append(o.Routes, u)
		}
	}
	return nil
}

// Setup creates the team stream and the writer's consumer, then each member's mirror
// (busserver.Config.Setup). It keeps js to add members that join later (Watch).
func (h *Hub) Setup(ctx context.Context, js jetstream.JetStream) error {
	// In a cluster the meta leader must be elected before streams can be made.
	// A request sent before there is a leader goes unanswered: ask again every 2 s.
	var err error
	for ctx.Err() == nil {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err = js.AccountInfo(actx)
		cancel()
		if err == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("hub: JetStream not ready: %w", err)
	}
	return h.sync(ctx, js)
}

// Members returns the registry as the hub last read it.
func (h *Hub) Members() []Member { return h.auth.list() }

// Watch reads the registry again whenever it changes, until ctx ends: a member added with
// `observerctl hub add-member` can connect without a restart, and one removed cannot any more.
func (h *Hub) Watch(ctx context.Context, srv *busserver.Server, every time.Duration) {
	nc, err := srv.Conn("observer-hub-members")
	if err != nil {
		h.cfg.Logger.Error("hub members are not followed", "err", err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		h.cfg.Logger.Error("hub members are not followed", "err", err)
		return
	}
	last := h.loaded
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// The file is small: compare its bytes (two writes within one clock tick share an mtime).
		data, err := os.ReadFile(h.cfg.MembersFile)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			h.cfg.Logger.Error("hub members not reloaded", "err", err)
			continue
		}
		if bytes.Equal(data, last) && h.synced() {
			continue
		}
		ms, err := parseMembers(h.cfg.MembersFile, data)
		if err != nil {
			h.cfg.Logger.Error("hub members not reloaded", "err", err)
			continue
		}
		last = data
		h.auth.set(ms)
		h.cfg.Logger.Info("hub members loaded", "members", len(ms))
		live := func(id uint64) bool { return srv.NATS().GetLeafNode(id) != nil }
		for _, id := range h.auth.removed(live) {
			if srv.NATS().DisconnectClientByID(id) == nil {
				h.cfg.Logger.Info("cut off a removed member's leafnode", "connection", id)
			}
		}
		if err := h.sync(ctx, js); err != nil {
			h.cfg.Logger.Warn("hub streams not updated yet; trying again", "err", err)
		}
	}
}

func (h *Hub) synced() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.auth.list() {
		if !h.have[m.Name] {
			return false
		}
	}
	return true
}

// sync makes the mirror of every registered member and the team stream sourcing them all.
func (h *Hub) sync(ctx context.Context, js jetstream.JetStream) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	ms := h.auth.list()
	if err := h.dropStaleMirrors(ctx, js, ms); err != nil {
		return err
	}
	var sources []*jetstream.StreamSource
	for _, m := range ms {
		err := retry(ctx, func(ctx context.Context) error {
			_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
				Name:        MirrorStream(m.Name),
				Description: "member " + m.Name + "'s shared events, mirrored from its machine",
				Metadata:    map[string]string{mirrorKeyMeta: m.NKey},
				Storage:     jetstream.FileStorage,
				Retention:   jetstream.LimitsPolicy,
				MaxAge:      h.cfg.MaxAge,
				// No byte bound of its own: JetStream reserves a stream's bound on disk, and one
				// per member would exhaust it. A mirror holds at most what the member's share
				// stream holds, which the member bounds ([team] max_bytes), for MaxAge.
				Replicas: h.cfg.Replicas,
				// Durable sourcing: the member keeps a durable consumer for the hub (Sharer), which
				// the mirror repositions; when the member comes back online its deliveries resume at
				// once (a mirror's own consumer would wait for the next retry, up to minutes).
				Mirror: &jetstream.StreamSource{Name: ShareStream,
					External: &jetstream.ExternalStream{APIPrefix: "$JS." + MemberDomain(m.Name) + ".API", DeliverPrefix: deliverPrefix(m.Name)},
					Consumer: &jetstream.StreamConsumerSource{Name: HubConsumer, DeliverSubject: DeliverSubject(m.Name)}},
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("hub: mirror of member %s: %w", m.Name, err)
		}
		// The hub names the member: only share.> subjects of this member's own mirror enter
		// the team stream, as team.<member>.>.
		sources = append(sources, &jetstream.StreamSource{Name: MirrorStream(m.Name),
			SubjectTransforms: []jetstream.SubjectTransformConfig{{Source: shareSubjects, Destination: teamPrefix + m.Name + ".>"}}})
	}
	err := retry(ctx, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name:        TeamStream,
			Description: "every member's events, kept until the hub's writer has stored them",
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.InterestPolicy,
			MaxAge:      h.cfg.MaxAge,
			MaxBytes:    h.cfg.MaxBytes,
			Replicas:    h.cfg.Replicas,
			Sources:     sources,
			MaxMsgSize:  bus.MaxPayload,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("hub: team stream: %w", err)
	}
	err = retry(ctx, func(ctx context.Context) error {
		_, err := js.CreateOrUpdateConsumer(ctx, TeamStream, jetstream.ConsumerConfig{
			Durable:       WriterConsumer,
			Description:   "the hub's store writer",
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       cmp.Or(h.cfg.AckWait, 15*time.Second),
			DeliverPolicy: jetstream.DeliverAllPolicy,
			MaxAckPending: 50000,
			MaxWaiting:    16,
			Replicas:      h.cfg.Replicas,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("hub: writer consumer: %w", err)
	}
	h.have = map[string]bool{}
	for _, m := range ms {
		h.have[m.Name] = true
	}
	return nil
}

// mirrorKeyMeta is the metadata key of a mirror that names the member key it was made for.
const mirrorKeyMeta = "observer_nkey"

// dropStaleMirrors deletes the mirrors of members no longer registered, and those made for
// another key of a member: a member's share stream starts over with a new machine or key, and a
// mirror that remembers the old stream's sequence would skip the new one's first events. What
// the mirrors held is in the team stream or the store already.
func (h *Hub) dropStaleMirrors(ctx context.Context, js jetstream.JetStream, ms []Member) error {
	keys := map[string]string{}
	for _, m := range ms {
		keys[MirrorStream(m.Name)] = m.NKey
	}
	// Every JetStream call goes through retry: in a cluster a request sent before the meta leader
	// is elected (or while it changes) is dropped, and would otherwise wait out the whole setup.
	var listed []string
	err := retry(ctx, func(ctx context.Context) error {
		listed = listed[:0]
		names := js.StreamNames(ctx)
		for name := range names.Name() {
			listed = append(listed, name)
		}
		return names.Err()
	})
	if err != nil {
		return fmt.Errorf("hub: list streams: %w", err)
	}
	var stale []string
	for _, name := range listed {
		if !strings.HasPrefix(name, "TEAM_") {
			continue
		}
		key, registered := keys[name]
		if registered {
			var str jetstream.Stream
			err := retry(ctx, func(ctx context.Context) (err error) {
				str, err = js.Stream(ctx, name)
				return err
			})
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				// Listed, then gone: in a cluster the list may be a step ahead of (or behind)
				// the stream's own answer while the meta leader settles. Nothing to drop.
				continue
			}
			if err != nil {
				return fmt.Errorf("hub: read mirror %s: %w", name, err)
			}
			if str.CachedInfo().Config.Metadata[mirrorKeyMeta] == key {
				continue
			}
		}
		stale = append(stale, name)
	}
	for _, name := range stale {
		if err := retry(ctx, func(ctx context.Context) error { return js.DeleteStream(ctx, name) }); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("hub: drop mirror %s: %w", name, err)
		}
		h.cfg.Logger.Info("hub: dropped the mirror of a removed member or an old key", "stream", name)
	}
	return nil
}

// retry runs a JetStream API call with a 5 s bound per attempt, again while ctx lasts when the
// attempt went unanswered: in a cluster a request sent while the leader changes is dropped.
func retry(ctx context.Context, call func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := call(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrNoResponders) ||
			errors.Is(err, nats.ErrTimeout) || strings.Contains(err.Error(), "temporarily unavailable")) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// hubAuth admits the hub's own processes by token and members' leafnodes by nkey, each member
// with permissions that keep it to its own subjects, under its own name only.
type hubAuth struct {
	token   string
	logger  *slog.Logger
	mu      sync.RWMutex
	byKey   map[string]Member
	conns   map[uint64]string    // leafnode connection id -> its nkey, to cut a removed key off
	refused map[string]time.Time // key and claimed name -> when a refusal was last logged
}

// claimLogEvery bounds how often the refusal of one key's claim is logged: a member's server
// tries again every second or two for as long as it runs.
const claimLogEvery = time.Minute

// removed returns the connections whose key is no longer registered (a member removed, or given
// a new key), and forgets them and the connections that are gone (live reports whether one still
// is).
func (a *hubAuth) removed(live func(uint64) bool) []uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var ids []uint64
	for id, key := range a.conns {
		if !live(id) {
			delete(a.conns, id)
			continue
		}
		if _, ok := a.byKey[key]; !ok {
			ids = append(ids, id)
			delete(a.conns, id)
		}
	}
	return ids
}

func (a *hubAuth) set(ms []Member) {
	m := make(map[string]Member, len(ms))
	for _, x := range ms {
		m[x.NKey] = x
	}
	a.mu.Lock()
	a.byKey = m
	a.mu.Unlock()
}

func (a *hubAuth) list() []Member {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]Member, 0, len(a.byKey))
	for _, m := range a.byKey {
		out = append(out, m)
	}
	slices.SortFunc(out, func(x, y Member) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// Check implements server.Authentication.
func (a *hubAuth) Check(c server.ClientAuthentication) bool {
	o := c.GetOpts()
	switch c.Kind() {
	case server.CLIENT:
		if o.Token != "" && subtle.ConstantTimeCompare([]byte(o.Token), []byte(a.token)) == 1 {
			c.RegisterUser(&server.User{Username: "observer"})
			return true
		}
	case server.LEAF:
		a.mu.RLock()
		m, ok := a.byKey[o.Nkey]
		a.mu.RUnlock()
		if !ok || o.Sig == "" {
			return false
		}
		pub, err := nkeys.FromPublicKey(o.Nkey)
		if err != nil {
			return false
		}
		sig, err := decodeSig(o.Sig)
		if err != nil || pub.Verify(c.GetNonce(), sig) != nil {
			return false
		}
		// The key decides the member, and the leafnode must present that member's name: NATS
		// replaces a leafnode with a newer one of the same server name, so a key admitted under
		// another member's name (credentials edited to member = "bob") would cut bob off every
		// time it connects.
		if o.Name != LeafName(m.Name) {
			a.refuseClaim(m, o.Nkey, o.Name)
			return false
		}
		c.RegisterUser(&server.User{Username: m.Name, Permissions: MemberPermissions(m.Name)})
		a.mu.Lock()
		if a.conns == nil {
			a.conns = map[uint64]string{}
		}
		a.conns[c.GetID()] = m.NKey
		a.mu.Unlock()
		return true
	}
	return false
}

// refuseClaim logs a leafnode refused for naming itself other than its key's member, at most once
// a minute per key and name.
func (a *hubAuth) refuseClaim(m Member, key, name string) {
	claimed := strings.TrimPrefix(name, LeafName(""))
	if claimed == name || ValidName(claimed) != nil {
		claimed = name // not a member's share server name at all
	}
	a.mu.Lock()
	id, now := key+" "+name, time.Now()
	if now.Sub(a.refused[id]) < claimLogEvery {
		a.mu.Unlock()
		return
	}
	if a.refused == nil {
		a.refused = map[string]time.Time{}
	}
	for k, at := range a.refused {
		if now.Sub(at) >= claimLogEvery {
			delete(a.refused, k)
		}
	}
	a.refused[id] = now
	a.mu.Unlock()
	if a.logger != nil {
		a.logger.Warn("hub: refused a leafnode whose key belongs to one member and whose name claims another member; "+
			"its credentials file names the wrong member (ask the hub's admin for the member's own)",
			"member", m.Name, "claimed", claimed, "server_name", name, "want", LeafName(m.Name))
	}
}

// MemberPermissions are a member's leafnode permissions on the hub. Publish is what the member's
// machine may send: its mirror's deliveries (deliver.<member>.>) and the answers to the requests
// the hub's mirror makes of its share stream's consumer ($JSC.R.<its domain>.*.TEAM_OUT.hub.*,
// a random id per request). The hub's own replies and those of the requests it makes of other
// members are out of its reach: it may neither answer them nor learn their subjects. Subscribe
// is what the hub sends it: its own domain's JetStream API and the mirror's flow control.
func MemberPermissions(member string) *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{deliverPrefix(member) + ".>", replySubjects(member)}},
		Subscribe: &server.SubjectPermission{Allow: []string{"$JS." + MemberDomain(member) + ".API.>", "$JS.FC.>"}},
	}
}

// replySubjects matches the replies to the hub's requests about its mirror's consumer on member's
// share stream, in JetStream's scoped reply format (server.FeatureFlagJsAPIReplyFormatV2, set on
// the hub by Configure); the second token is a hash of the hub's account.
func replySubjects(member string) string {
	return "$JSC.R." + MemberDomain(member) + ".*." + ShareStream + "." + HubConsumer + ".*"
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", addr)
	}
	return host, port, nil
}
