package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/team"
)

// hubDir holds a hub's TLS files, its members registry and its cluster secret.
func hubDir(e *env) string { return filepath.Join(e.cfg.Home, "hub") }

func membersFile(e *env) string {
	if f := e.cfg.Hub.MembersFile; f != "" {
		return expandHome(f)
	}
	return filepath.Join(hubDir(e), "members.json")
}

func clusterSecretFile(e *env) string {
	if f := e.cfg.Hub.ClusterSecretFile; f != "" {
		return expandHome(f)
	}
	return filepath.Join(hubDir(e), "cluster-secret")
}

func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, rest)
		}
	}
	return p
}

// isHubHome reports whether home is a team hub's: `hub init` made its certificate authority.
func isHubHome(home string) bool {
	_, err := os.Stat(filepath.Join(home, "hub", "ca.pem"))
	return err == nil
}

// hubURL is the URL new members' credentials name.
func hubURL(e *env) string {
	if e.cfg.Hub.URL != "" {
		return e.cfg.Hub.URL
	}
	_, port, _ := net.SplitHostPort(e.cfg.Hub.Addr)
	host := "127.0.0.1"
	if len(e.cfg.Hub.Hostnames) > 0 {
		host = e.cfg.Hub.Hostnames[0]
	}
	return "tls://" + net.JoinHostPort(host, port)
}

func hubCommand() *cli.Command {
	return &cli.Command{
		Name:  "hub",
		Usage: "run a team hub: members' observer buses join it, and their events land in its store and dashboard",
		Description: `A hub is this suite in another role: a NATS server that members' embedded buses join as leafnodes
(TLS, one key per member), the writer of the team's store, and the dashboard in team view. Use a
home of its own (--home or OBSERVER_HOME), not the one your own suite runs on.

  observerctl --home ~/observer-hub hub init --addr 0.0.0.0:7422 --hostname hub.example.com
  observerctl --home ~/observer-hub hub add-member alice      # writes alice.observer-team
  observerctl --home ~/observer-hub hub up

Then on alice's machine: observerctl team join alice.observer-team && observerctl up.`,
		Subcommands: []*cli.Command{
			{
				Name:  "init",
				Usage: "set the hub up: its listen address, names, TLS certificate authority and cluster secret",
				Description: `Writes [hub] addr, hostnames and url, and the hub's own bus port and dashboard address, into this
home's config.toml; makes the hub's certificate authority and leafnode certificate (hub/, 0600) and
its cluster secret. Running it again keeps the CA (members' credentials stay valid) and remakes the
certificate when a hostname was added.

Exit codes: 0 done; 1 a file could not be written; 64 bad flags or a bad value.`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "addr", Usage: "where members connect (host:port); 0.0.0.0:7422 accepts other machines"},
					&cli.StringSliceFlag{Name: "hostname", Usage: "a name or address members reach the hub by (repeat for several)"},
					&cli.StringFlag{Name: "url", Usage: "the URL members' credentials name, when it is not tls://<hostname>:<port>"},
					&cli.IntFlag{Name: "bus-port", Value: 4257, Usage: "the hub's own bus port (loopback), apart from a member suite's 4247 on the same machine"},
					&cli.StringFlag{Name: "dash-addr", Value: "127.0.0.1:8091", Usage: "where the hub's dashboard listens, apart from a member suite's 8081"},
				},
				Action: hubInit,
			},
			{
				Name:  "add-member",
				Usage: "register a member and write its credentials file (hand it to the member privately)",
				Description: `Makes the member's nkey, adds its public key to the hub's registry (a running hub reads it within
2 s) and writes the member's credentials (the seed, the hub's URL and CA) to --out with mode 0600.

Exit codes: 0 done; 1 a file could not be written; 64 a bad or already registered name.`,
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "where to write the credentials (default ./NAME.observer-team)"},
				},
				Action: hubAddMember,
			},
			{
				Name:        "remove-member",
				Usage:       "unregister a member: it cannot connect any more (its events already stored stay)",
				Description: `Exit codes: 0 done; 1 the registry could not be written; 64 no such member.`,
				ArgsUsage:   "NAME",
				Action:      hubRemoveMember,
			},
			{
				Name:        "members",
				Usage:       "list the registered members",
				Description: `Exit codes: 0 done; 1 the registry cannot be read.`,
				Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action:      hubMembers,
			},
			{
				Name:  "up",
				Usage: "run the hub (NATS with the team's streams, the writer, the dashboard), supervised",
				Description: `Runs in the foreground until Ctrl-C or ` + "`observerctl down`" + ` (with this home). observerctl status,
logs, restart and down work on it as on any suite.

Exit codes: 0 stopped normally; 1 it could not start (a port is taken, no TLS certificate: run
observerctl hub init); 64 bad flags or a bad config.toml.`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "run in the background and return once everything is healthy"},
					&cli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long a component may take to stop before it is killed"},
				},
				Action: func(c *cli.Context) error { return runSuite(c, true) },
			},
		},
	}
}

func hubInit(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	path := config.Path(e.cfg.Home)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	set := func(key string, v any) error {
		out, err := config.SetKey(data, "hub", key, v)
		if err == nil {
			data = out
		}
		return err
	}
	if a := c.String("addr"); a != "" {
		if err := set("addr", a); err != nil {
			return err
		}
	}
	if hs := c.StringSlice("hostname"); len(hs) > 0 {
		if err := set("hostnames", hs); err != nil {
			return err
		}
	}
	if u := c.String("url"); u != "" {
		if err := set("url", u); err != nil {
			return err
		}
	}
	for _, kv := range []struct {
		section, key, flag string
		v                  any
	}{{"bus", "port", "bus-port", c.Int("bus-port")}, {"dash", "addr", "dash-addr", c.String("dash-addr")}} {
		if _, set := os.LookupEnv("OBSERVER_" + strings.ToUpper(kv.section+"_"+kv.key)); set && !c.IsSet(kv.flag) {
			continue // the environment decides, as it does for every command
		}
		out, err := config.SetKey(data, kv.section, kv.key, kv.v)
		if err != nil {
			return err
		}
		data = out
	}
	cfg, err := config.Parse(e.cfg.Home, data)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	e.cfg = cfg
	if _, err := team.EnsureTLS(hubDir(e), cfg.Hub.Hostnames); err != nil {
		return err
	}
	if err := ensureSecret(clusterSecretFile(e)); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "hub set up in %s\n  members connect to %s (listening on %s)\n  TLS: %s (its CA goes into every member's credentials)\n",
		e.cfg.Home, hubURL(e), cfg.Hub.Addr, hubDir(e))
	fmt.Fprintf(e.stdout, "  its dashboard: http://%s\n", cfg.Dash.Addr)
	fmt.Fprintf(e.stdout, "next: observerctl --home %s hub add-member NAME, then observerctl --home %s hub up\n", e.cfg.Home, e.cfg.Home)
	return nil
}

// ensureSecret makes a random secret file (0600) when there is none.
func ensureSecret(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	var b [24]byte
	rand.Read(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	_, err = f.WriteString(hex.EncodeToString(b[:]) + "\n")
	return err
}

func hubAddMember(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	if name == "" || c.NArg() > 1 {
		return withCode(ExitUsage, errors.New("usage: observerctl hub add-member NAME"))
	}
	if err := team.ValidName(name); err != nil {
		return withCode(ExitUsage, err)
	}
	ms, err := team.LoadMembers(membersFile(e))
	if err != nil {
		return err
	}
	if slices.ContainsFunc(ms, func(m team.Member) bool { return m.Name == name }) {
		return withCode(ExitUsage, fmt.Errorf("member %s is already registered (observerctl hub remove-member %s first to give it new credentials)", name, name))
	}
	ca, err := team.EnsureTLS(hubDir(e), e.cfg.Hub.Hostnames)
	if err != nil {
		return err
	}
	if e.cfg.Hub.CertFile != "" {
		ca = nil // the user's own certificate: members trust the system's roots
	}
	creds, pub, err := team.NewMember(name, []string{hubURL(e)}, ca)
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "" {
		out = name + ".observer-team"
	}
	if err := creds.Write(out); err != nil {
		return fmt.Errorf("write credentials: %w", err)
	}
	ms = append(ms, team.Member{Name: name, NKey: pub, Added: time.Now().UTC()})
	if err := os.MkdirAll(filepath.Dir(membersFile(e)), 0o700); err != nil {
		return err
	}
	if err := team.SaveMembers(membersFile(e), ms); err != nil {
		os.Remove(out)
		return err
	}
	fmt.Fprintf(e.stdout, "member %s registered; credentials in %s (mode 0600: hand them over privately)\n", name, out)
	fmt.Fprintf(e.stdout, "on %s's machine: observerctl team join %s [--share usage|actions|full], then observerctl up\n", name, filepath.Base(out))
	return nil
}

func hubRemoveMember(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	name := c.Args().First()
	ms, err := team.LoadMembers(membersFile(e))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(ms, func(m team.Member) bool { return m.Name == name })
	if i < 0 {
		return withCode(ExitUsage, fmt.Errorf("no member %q (see observerctl hub members)", name))
	}
	ms = slices.Delete(ms, i, i+1)
	if err := team.SaveMembers(membersFile(e), ms); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "member %s removed: a running hub drops its connection within seconds; its stored events stay\n", name)
	return nil
}

func hubMembers(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	ms, err := team.LoadMembers(membersFile(e))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		if ms == nil {
			ms = []team.Member{}
		}
		writeJSON(e.stdout, ms)
		return nil
	}
	if len(ms) == 0 {
		fmt.Fprintln(e.stdout, "no members yet: observerctl hub add-member NAME")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tADDED\tPUBLIC KEY")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Added.Format(time.DateOnly), m.NKey)
	}
	return tw.Flush()
}

// hostHub starts a hub's NATS server in this process (with its team streams) and connects to it.
func hostHub(ctx context.Context, e *env, logger *slog.Logger, name string) (*busserver.Server, *bus.Client, error) {
	token, err := bus.LoadOrCreateToken(e.cfg.TokenPath())
	if err != nil {
		return nil, nil, err
	}
	var secret string
	if e.cfg.Hub.ClusterAddr != "" {
		data, err := os.ReadFile(clusterSecretFile(e))
		if err != nil {
			return nil, nil, withCode(ExitUsage, fmt.Errorf("hub cluster secret: %w (run observerctl hub init, and give every node the same file)", err))
		}
		secret = strings.TrimSpace(string(data))
	}
	h, err := team.NewHub(team.HubConfig{
		Dir: hubDir(e), MembersFile: membersFile(e), Token: token, LeafAddr: e.cfg.Hub.Addr,
		CertFile: expandHome(e.cfg.Hub.CertFile), KeyFile: expandHome(e.cfg.Hub.KeyFile),
		NodeName: e.cfg.Hub.NodeName, ClusterName: e.cfg.Hub.ClusterName, ClusterAddr: e.cfg.Hub.ClusterAddr,
		Routes: e.cfg.Hub.Routes, ClusterSecret: secret, Replicas: e.cfg.Hub.Replicas,
		MaxAge: e.cfg.Hub.MaxAge.D(), MaxBytes: e.cfg.Hub.MaxBytes, AckWait: e.cfg.Writer.AckWait.D(), Logger: logger,
	})
	if err != nil {
		return nil, nil, withCode(ExitUsage, err)
	}
	bc := busConfig(e, token, logger)
	bc.Configure, bc.Setup, bc.Stream = h.Configure, h.Setup, team.TeamStream
	// The hub's stream is bounded by [hub] max_bytes, not [bus] max_bytes: the start check says so.
	bc.MaxBytes, bc.MaxBytesKey = e.cfg.Hub.MaxBytes, "[hub] max_bytes"
	srv, err := busserver.Start(ctx, bc)
	if err != nil {
		return nil, nil, err
	}
	go h.Watch(ctx, srv, 2*time.Second)
	go daemon.TrimMemory(ctx)
	cl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: token, Name: name, Logger: logger})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	logger.Info("team hub is up", "members_connect_to", e.cfg.Hub.Addr, "members", len(h.Members()),
		"cluster", e.cfg.Hub.ClusterAddr, "replicas", e.cfg.Hub.Replicas)
	return srv, cl, nil
}

// teamMember reads [team]: nil when team mode is off.
func teamMember(e *env, logger *slog.Logger) (*team.MemberConfig, error) {
	t := e.cfg.Team
	if t.Credentials == "" {
		return nil, nil
	}
	creds, err := team.LoadCredentials(expandHome(t.Credentials))
	if err != nil {
		return nil, fmt.Errorf("[team] credentials: %w", err)
	}
	level, err := team.ParseLevel(t.Share)
	if err != nil {
		return nil, fmt.Errorf("[team] share: %w", err)
	}
	return &team.MemberConfig{Creds: creds, Hub: t.Hub, Share: level, CarryPending: t.CarryPending,
		MaxAge: t.MaxAge.D(), MaxBytes: t.MaxBytes, Logger: logger}, nil
}

// startSharing starts the sharer of a member, or removes a former member's sharer consumer.
func startSharing(ctx context.Context, e *env, srv *busserver.Server, m *team.MemberConfig, logger *slog.Logger) error {
	if m == nil {
		return team.StopSharing(ctx, srv)
	}
	if _, err := team.StartMember(ctx, srv, *m, filepath.Join(e.cfg.Home, "team", "share")); err != nil {
		return err
	}
	logger.Info("team mode: sharing with the hub", "member", m.Creds.Member, "share", m.Share, "hub", strings.Join(cmpSlice(m.Hub, m.Creds.Hub), ","))
	return nil
}

func cmpSlice(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

func teamCommand() *cli.Command {
	return &cli.Command{
		Name:  "team",
		Usage: "join a team hub, see what this machine shares, leave",
		Subcommands: []*cli.Command{
			{
				Name:  "join",
				Usage: "join a hub with the credentials file its admin gave you",
				Description: `Copies the credentials into this home (team/credentials, 0600) and sets [team] credentials and
share in config.toml. Sharing starts when observer (re)starts, with the events from then on.

Exit codes: 0 done; 1 a file could not be written; 64 bad credentials or share level.`,
				ArgsUsage: "CREDENTIALS",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "share", Value: "usage", Usage: "what leaves this machine: usage (tokens, cost, models, counts), actions (plus files and commands, no outputs or prompts), full (everything, scrubbed)"},
				},
				Action: teamJoin,
			},
			{
				Name:        "status",
				Usage:       "show the hub, the share level, whether the hub is connected and how many events wait for it",
				Description: `Exit codes: 0 done (also when observer is not running: it says so); 64 bad [team] settings.`,
				Flags:       []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
				Action:      teamStatus,
			},
			{
				Name:  "leave",
				Usage: "stop sharing with the hub (at the next start of observer)",
				Description: `Clears [team] credentials in config.toml; what was shared stays on the hub.

Exit codes: 0 done; 1 config.toml could not be written.`,
				Action: teamLeave,
			},
		},
	}
}

func teamJoin(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	src := c.Args().First()
	if src == "" {
		return withCode(ExitUsage, errors.New("usage: observerctl team join CREDENTIALS [--share usage|actions|full]"))
	}
	if _, err := team.ParseLevel(c.String("share")); err != nil {
		return withCode(ExitUsage, err)
	}
	creds, err := team.LoadCredentials(src)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	dir := filepath.Join(e.cfg.Home, "team")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	dst := filepath.Join(dir, "credentials")
	data, err := creds.Marshal()
	if err != nil {
		return err
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return err
	}
	path := config.Path(e.cfg.Home)
	cfgData, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"credentials", dst}, {"share", c.String("share")}} {
		if cfgData, err = config.SetKey(cfgData, "team", kv.k, kv.v); err != nil {
			return err
		}
	}
	if _, err := config.Parse(e.cfg.Home, cfgData); err != nil {
		return withCode(ExitUsage, err)
	}
	if err := os.WriteFile(path, cfgData, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "joined as %s (share level %s; hub %s); credentials kept in %s\n", creds.Member, c.String("share"), strings.Join(creds.Hub, ","), dst)
	fmt.Fprintln(e.stdout, "events from now on are shared once observer (re)starts: observerctl down; observerctl up")
	return nil
}

func teamLeave(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	path := config.Path(e.cfg.Home)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if data, err = config.SetKey(data, "team", "credentials", ""); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "team mode off at the next start of observer (observerctl down; observerctl up); nothing is shared after it")
	return nil
}

type teamStatusReport struct {
	Member    string   `json:"member"`
	Hub       []string `json:"hub"`
	Share     string   `json:"share"`
	Running   bool     `json:"running"`
	Connected bool     `json:"connected"`         // the hub's mirror listens to this member
	Pending   uint64   `json:"pending"`           // shared events not sent to the hub yet
	Unacked   uint64   `json:"unconfirmed"`       // sent, not yet confirmed by the hub's flow control
	Shared    uint64   `json:"shared"`            // events put in the share stream since it was made
	Error     string   `json:"error,omitempty"`   // what went wrong reading the bus
	Binding   string   `json:"binding,omitempty"` // the member the share stream holds events for
}

func teamStatus(c *cli.Context) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	m, err := teamMember(e, e.logger)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if m == nil {
		fmt.Fprintln(e.stdout, "team mode is off: nothing leaves this machine (observerctl team join CREDENTIALS to join a hub)")
		return nil
	}
	r := teamStatusReport{Member: m.Creds.Member, Hub: cmpSlice(m.Hub, m.Creds.Hub), Share: string(m.Share)}
	if err := readTeamState(c.Context, e, &r); err != nil {
		r.Error = err.Error()
	}
	if c.Bool("json") {
		writeJSON(e.stdout, r)
		return nil
	}
	fmt.Fprintf(e.stdout, "member %s, share level %s, hub %s\n", r.Member, r.Share, strings.Join(r.Hub, ","))
	switch {
	case !r.Running:
		fmt.Fprintf(e.stdout, "observer is not running here (%s)\n", r.Error)
	case r.Error != "":
		fmt.Fprintf(e.stdout, "share stream: %s\n", r.Error)
	default:
		state := "not connected: events wait here until it is"
		if r.Connected {
			state = "connected"
		}
		fmt.Fprintf(e.stdout, "hub: %s; %d events waiting for it, %d sent and not yet confirmed, %d shared in all\n", state, r.Pending, r.Unacked, r.Shared)
	}
	return nil
}

func readTeamState(ctx context.Context, e *env, r *teamStatusReport) error {
	var st team.Status
	err := askBusHost(ctx, e, team.StatusSubject, nil, &st)
	if errors.Is(err, bus.ErrUnavailable) {
		return fmt.Errorf("bus at %s: %w", e.cfg.BusURL(), err)
	}
	r.Running = true
	if err != nil {
		return fmt.Errorf("the bus host did not say (%v): restart observer so that it joins the hub (observerctl down; observerctl up)", err)
	}
	if st.Error != "" {
		return errors.New(st.Error)
	}
	r.Pending, r.Unacked, r.Shared, r.Connected, r.Binding = st.Pending, st.Unacked, st.Shared, st.Connected, st.Member
	return nil
}
