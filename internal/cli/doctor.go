package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"github.com/observerhq/observer/internal/prices"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/scrub"
	"github.com/observerhq/observer/pkg/store"
)

// Check statuses.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// check is one line of doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn, fail
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
	// Sessions are the capture check's recent sessions.
	Sessions []captureSession `json:"sessions,omitempty"`
}

// doctorReport is doctor's JSON.
type doctorReport struct {
	Home     string  `json:"home"`
	OK       bool    `json:"ok"` // no check failed
	Failures int     `json:"failures"`
	Warnings int     `json:"warnings"`
	Checks   []check `json:"checks"`
}

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check observer's setup and say how to fix each problem",
		Description: `Checks, in order, and prints one line per check with what to do about each problem:

  home        $OBSERVER_HOME exists and is private (0700)
  config      config.toml parses, every value is valid (type, range), and so are the OBSERVER_*
              environment overrides (a warning names an OBSERVER_ variable observer does not read)
  bus.token   the bus token exists, private (0600)
  store       observer.db exists, private (0600), and opens read-only
  schema      the store's schema is the one this observerctl knows (older: the writer migrates it)
  quarantine  no message the writer could not decode is waiting (a warning when some are)
  bus         the bus answers at [bus] host:port and accepts the token
  supervisor  ` + "`observerctl up`" + ` runs and all its components are healthy
  writer      the writer runs and holds the store (under the supervisor or a service unit)
  alerts:webhook  where [alerts] webhook_url sends alerts (its host only), and a warning when
              the writer's last delivery there failed (the alerts are stored and shown anyway)
  proxy       something listens on [proxy] addr
  otlp        something listens on [otlp] addr (OTLP/HTTP), the receiver observer-proxy runs for
              the clients' own telemetry (ok when [otlp] addr and grpc_addr are empty: it is off)
  otlp.grpc   something listens on [otlp] grpc_addr (OTLP/gRPC), when set
  dash        the dashboard answers HTTP at [dash] addr
  hooks:NAME  for each AI client found, observer's hook is registered for every event init adds
  commands    every command observer registered with the clients (hooks, observer-mcp) still
              exists: ` + "`make clean`" + ` or a moved checkout leaves hooks that fail on every event
  units       the binaries the service units run (` + "`observerctl service install`" + `) still exist
  client:NAME for each client observer reads, installed or recorded: its records are where
              observer-watch looks (a warning when it is installed without any), and how to point
              its API calls at the proxy
  capture     which capture paths (proxy, records, hooks, otlp) saw each recent session (the 10
              newest of the last 24 h); a warning hints at a client whose records came without a
              proxy turn (not pointed at the proxy), or that exports no telemetry to the receiver

Only reads: doctor changes nothing (not even the home's mode) and creates no file. What is
missing before observer's first start (the home, the token, the store) and what is down while
observer is stopped is a warning; wrong permissions, a config that does not parse, a damaged or
newer store, a bus that refuses the token and a component that runs but does not answer fail.

Exit codes: 0 no check failed (warnings allowed); 1 some check failed; 64 bad flags.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("doctor takes no arguments, got %q", c.Args().First())
			}
			home, err := observerHome(c)
			if err != nil {
				return err
			}
			rep := runDoctor(c.Context, home)
			if c.Bool("json") {
				writeJSON(c.App.Writer, rep)
			} else {
				printDoctor(c.App.Writer, rep)
			}
			if !rep.OK {
				return withCode(ExitFailure, errors.New(""))
			}
			return nil
		},
	}
}

// runDoctor runs every check on home.
func runDoctor(ctx context.Context, home string) doctorReport {
	rep := doctorReport{Home: home}
	add := func(name, status, detail, fix string) {
		rep.Checks = append(rep.Checks, check{Name: name, Status: status, Detail: detail, Fix: fix})
	}

	// home
	if fi, err := os.Stat(home); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			add("home", checkWarn, home+" does not exist yet", "`observerctl up` (or any observerctl command but doctor) creates it")
		} else {
			add("home", checkFail, err.Error(), "check the path given by --home or $OBSERVER_HOME")
		}
	} else if !fi.IsDir() {
		add("home", checkFail, home+" is not a directory", "point --home or $OBSERVER_HOME at a directory")
	} else if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		add("home", checkFail, fmt.Sprintf("%s is %04o: other users can read observer's data", home, perm), "chmod 700 "+home)
	} else {
		add("home", checkOK, fmt.Sprintf("%s (%04o)", home, perm), "")
	}

	// config
	cfg, detail, err := doctorConfig(home)
	switch {
	case err != nil:
		add("config", checkFail, err.Error(), "fix the key or line named, or move the file away to get the defaults back (observer writes them at its next start)")
	case len(cfg.Warnings) > 0:
		add("config", checkWarn, detail+"; but "+strings.Join(cfg.Warnings, "; "), "unset the variable, or correct its name")
	default:
		add("config", checkOK, detail, "")
	}

	doctorDisk(cfg, add)

	// bus.token
	tokenPath := cfg.TokenPath()
	token := ""
	if fi, err := os.Stat(tokenPath); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			add("bus.token", checkWarn, tokenPath+" does not exist yet: the bus makes it at its first start", "start observer: `observerctl up`")
		} else {
			add("bus.token", checkFail, err.Error(), "")
		}
	} else if perm := fi.Mode().Perm(); perm != 0o600 {
		add("bus.token", checkFail, fmt.Sprintf("%s is %04o: anyone who reads it can publish to and read the bus", tokenPath, perm), "chmod 600 "+tokenPath)
	} else if token, err = bus.ReadToken(tokenPath); err != nil || token == "" {
		add("bus.token", checkFail, fmt.Sprintf("%s is empty or unreadable (%v)", tokenPath, err), "remove it and restart observer (`observerctl down; observerctl up`): the bus makes a new one")
		token = ""
	} else {
		add("bus.token", checkOK, tokenPath+" (0600)", "")
	}

	// store, schema, quarantine
	doctorStore(ctx, cfg, add)

	// bus
	busURL := cfg.BusURL()
	if token == "" {
		add("bus", checkWarn, "not checked: no usable bus token", "start observer: `observerctl up`")
	} else {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		cl, err := bus.Connect(cctx, bus.Options{URL: busURL, Token: token, Name: "observerctl-doctor", Wait: true, Timeout: 2 * time.Second})
		cancel()
		switch {
		case err == nil:
			cl.Close()
			add("bus", checkOK, "reachable at "+busURL+" with the token", "")
		case errors.Is(err, bus.ErrUnavailable):
			add("bus", checkWarn, "bus down: nothing answers at "+busURL, "start it with `observerctl up`")
		default:
			add("bus", checkFail, err.Error(), "the bus at "+busURL+" is another home's, or was started before its token changed: stop it and start observer again (`observerctl down; observerctl up`), or set [bus] port")
		}
	}

	doctorTeam(ctx, cfg, token != "", add)

	// supervisor and writer
	var st statusReport
	running := map[string]bool{} // components the supervisor says run
	var problems []string        // what the running components say does not work
	var writerNotices []bus.Notice
	cc := &supervisor.ControlClient{Path: socketPath(&env{cfg: cfg})}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	serr := cc.Status(sctx, &st)
	cancel()
	writerPID, writerAlive := lockHolder(cfg.StorePath() + ".lock")
	if serr != nil {
		if errors.Is(serr, supervisor.ErrNotRunning) {
			add("supervisor", checkWarn, "observer is not running under `observerctl up`", "start it with `observerctl up` (or its service units: `observerctl service`)")
		} else {
			add("supervisor", checkFail, serr.Error(), "see `observerctl logs supervisor`")
		}
		if writerAlive {
			add("writer", checkOK, fmt.Sprintf("a writer (pid %d) holds the store, outside the supervisor", writerPID), "")
		} else {
			add("writer", checkWarn, "no writer runs: events wait on the bus or in the spool", "start observer: `observerctl up`")
		}
	} else {
		// A degraded component runs with part of it not working (a client database it cannot
		// read, a stream at its bound): a warning here; the checks of that part (otlp, disk)
		// fail on their own where it matters. One that is unhealthy or down fails.
		var sick []string
		failing := false
		for _, c := range st.Components {
			if c.State == supervisor.StateRunning {
				running[c.Name] = true
			}
			problems = append(problems, c.Problems...)
			if c.Health != "ok" && c.Name != "writer" {
				what := fmt.Sprintf("%s %s/%s", c.Name, c.State, c.Health)
				if len(c.Problems) > 0 {
					what += " (" + strings.Join(c.Problems, "; ") + ")"
				}
				sick = append(sick, what)
				failing = failing || c.Health != "degraded"
			}
		}
		if len(sick) > 0 {
			level := checkWarn
			if failing {
				level = checkFail
			}
			add("supervisor", level, fmt.Sprintf("supervisor pid %d; not healthy: %s", st.PID, strings.Join(sick, ", ")),
				"see `observerctl status` and `observerctl logs NAME`; `observerctl restart NAME`")
		} else {
			add("supervisor", checkOK, fmt.Sprintf("pid %d, up %s, %d component(s) healthy", st.PID, humanDuration(st.UptimeS), len(st.Components)), "")
		}
		w := supervisor.ChildStatus{}
		for _, c := range st.Components {
			if c.Name == "writer" {
				w = c
			}
		}
		switch {
		case w.Name == "":
			add("writer", checkFail, "the supervisor runs no writer", "restart observer: `observerctl down; observerctl up`")
		case w.Health != "ok":
			add("writer", checkFail, fmt.Sprintf("writer %s/%s %s", w.State, w.Health, strings.TrimSpace(w.Detail+" "+w.LastExit)),
				"see `observerctl logs writer`; `observerctl restart writer`")
		default:
			add("writer", checkOK, fmt.Sprintf("pid %d, healthy, last event %s", w.PID, ago(w.LastEvent)), "")
		}
		writerNotices = w.Notices
	}
	doctorAlerts(cfg, writerNotices, serr == nil, add)

	// proxy, dash
	supervised := serr == nil
	reach := func(name, addr, what string, probe func() (string, error)) {
		detail, err := probe()
		switch {
		case err == nil:
			add(name, checkOK, detail, "")
		case running[name]:
			add(name, checkFail, fmt.Sprintf("%s runs but %s does not answer: %v", name, addr, err), "see `observerctl logs "+name+"`; `observerctl restart "+name+"`")
		case supervised:
			add(name, checkWarn, fmt.Sprintf("nothing answers at %s, and the supervisor runs no %s", addr, name), "install observer-"+name+" beside observerctl (make build) and restart observer")
		default:
			add(name, checkWarn, fmt.Sprintf("nothing answers at %s", addr), "start observer: `observerctl up`"+what)
		}
	}
	reach("proxy", cfg.Proxy.Addr, "; then point the clients at it (ANTHROPIC_BASE_URL=http://"+cfg.Proxy.Addr+")", func() (string, error) {
		conn, err := net.DialTimeout("tcp", cfg.Proxy.Addr, 2*time.Second)
		if err != nil {
			return "", err
		}
		conn.Close()
		return "listening on " + cfg.Proxy.Addr, nil
	})
	// otlp: the receiver runs inside observer-proxy, on its own addresses; empty ones turn it off.
	if cfg.OTLP.Addr == "" && cfg.OTLP.GRPCAddr == "" {
		add("otlp", checkOK, "the OTLP receiver is off ([otlp] addr and grpc_addr are empty)", "")
	}
	for _, l := range []struct{ name, addr, what string }{
		{"otlp", cfg.OTLP.Addr, "OTLP/HTTP"}, {"otlp.grpc", cfg.OTLP.GRPCAddr, "OTLP/gRPC"},
	} {
		if l.addr == "" {
			continue
		}
		// Something may answer at the address while the proxy's receiver does not listen there:
		// another collector holding the port. The proxy's own report says so; the dial cannot.
		if i := slices.IndexFunc(problems, func(p string) bool { return strings.Contains(p, " listener "+l.addr+":") }); i >= 0 {
			add(l.name, checkFail, "the proxy's "+l.what+" receiver is not listening: "+problems[i],
				"stop the program that holds "+l.addr+" (`ss -ltnp` names it), or change [otlp] addr/grpc_addr and run `observerctl init --otel` again; then `observerctl restart proxy`")
			continue
		}
		conn, err := net.DialTimeout("tcp", l.addr, 2*time.Second)
		switch {
		case err == nil:
			conn.Close()
			add(l.name, checkOK, l.what+" receiver listening on "+l.addr, "")
		case running["proxy"]:
			add(l.name, checkFail, fmt.Sprintf("proxy runs but its %s receiver does not answer at %s: %v", l.what, l.addr, err),
				"see `observerctl logs proxy` (another OpenTelemetry collector may hold the port: change [otlp] addr or grpc_addr, then `observerctl init --otel` again); `observerctl restart proxy`")
		case supervised:
			add(l.name, checkWarn, fmt.Sprintf("nothing answers at %s, and the supervisor runs no proxy (the %s receiver runs in observer-proxy)", l.addr, l.what),
				"install observer-proxy beside observerctl (make build) and restart observer")
		default:
			add(l.name, checkWarn, fmt.Sprintf("nothing answers at %s (the %s receiver runs in observer-proxy)", l.addr, l.what), "start observer: `observerctl up`")
		}
	}
	reach("dash", cfg.Dash.Addr, "", func() (string, error) {
		hctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(hctx, "GET", "http://"+cfg.Dash.Addr+"/", nil)
		if err != nil {
			return "", err
		}
		if cfg.Dash.Token != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.Dash.Token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return fmt.Sprintf("http://%s/ answers (HTTP %d)", cfg.Dash.Addr, resp.StatusCode), nil
	})

	// hooks, the commands registered and the units, the clients whose records observer reads, and
	// the capture paths that saw their recent sessions
	doctorHooks(home, add)
	doctorCommands(home, add)
	doctorUnits(home, add)
	doctorClients(cfg, add)
	if c := doctorCapture(ctx, cfg, home, time.Now()); c != nil {
		rep.Checks = append(rep.Checks, *c)
	}

	for _, c := range rep.Checks {
		switch c.Status {
		case checkFail:
			rep.Failures++
		case checkWarn:
			rep.Warnings++
		}
	}
	rep.OK = rep.Failures == 0
	return rep
}

// doctorAlerts reports the [alerts] webhook: not set; how its last delivery went, as the writer's
// heartbeat tells it (a failure is a warning: the alerts are stored and shown all the same); or
// not checked, without a supervised writer to ask. The URL is a secret: only its host is shown.
func doctorAlerts(cfg config.Config, notices []bus.Notice, supervised bool, add func(name, status, detail, fix string)) {
	const name = "alerts:webhook"
	if cfg.Alerts.WebhookURL == "" {
		add(name, checkOK, "not set ([alerts] webhook_url is empty): alerts stay in observer (dashboard, live tail, observerctl budget)", "")
		return
	}
	for _, n := range notices {
		if n.Name != name {
			continue
		}
		if n.OK {
			add(name, checkOK, n.Detail, "")
		} else {
			add(name, checkWarn, n.Detail+"; the alerts are still stored and shown on the dashboard",
				"check [alerts] webhook_url and format (the webhook may have been revoked); `observerctl logs writer` says why each delivery failed")
		}
		return
	}
	what := "the writer does not run under `observerctl up`"
	if supervised {
		what = "the writer has not reported it yet"
	}
	add(name, checkOK, fmt.Sprintf("alerts go to %s (%s); delivery not checked: %s", scrub.URL(cfg.Alerts.WebhookURL), cfg.Alerts.Format, what), "")
}

// doctorConfig loads home's configuration as config.Load does, but without creating or changing
// anything. On an error it returns the defaults (with the environment's valid overrides), so that
// the other checks still run.
func doctorConfig(home string) (config.Config, string, error) {
	cfg := config.Default()
	cfg.Home = home
	path := config.Path(home)
	data, err := os.ReadFile(path)
	detail := path + " parses and every value is valid"
	var ferr error
	switch {
	case errors.Is(err, fs.ErrNotExist):
		detail = path + " does not exist yet: the defaults apply (observer writes them at its first start)"
	case err != nil:
		ferr = fmt.Errorf("read %s: %w", path, err)
	}
	if ferr == nil {
		cfg, ferr = config.Parse(home, data) // no file: the defaults, with the environment checked
	}
	if ferr != nil {
		cfg = config.Default()
		cfg.Home = home
		config.ApplyEnv(&cfg, os.LookupEnv) // the valid overrides, for the other checks
	}
	// The components refuse to start on a price override they cannot use.
	if err := prices.Validate(cfg.Pricing.Models); err != nil && ferr == nil {
		ferr = fmt.Errorf("%s: %w", path, err)
	}
	return cfg, detail, ferr
}

// doctorStore checks the store file, its schema and its quarantine.
func doctorStore(ctx context.Context, cfg config.Config, add func(name, status, detail, fix string)) {
	path := cfg.StorePath()
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			add("store", checkWarn, path+" does not exist yet: nothing was recorded", "start observer (`observerctl up`), or ingest the clients' history (`observerctl backfill`)")
		} else {
			add("store", checkFail, err.Error(), "")
		}
		return
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		add("store", checkFail, fmt.Sprintf("%s is %04o: other users can read what the agents did", path, perm), "chmod 600 "+path+"*")
		return
	}
	st, err := store.OpenReader(ctx, path)
	if err == nil {
		defer st.Close()
		err = st.ReadSchema(ctx)
	}
	if err != nil {
		add("store", checkFail, fmt.Sprintf("%s does not open read-only: %v", path, err),
			"check it with `sqlite3 "+path+" 'PRAGMA integrity_check'`; restore a backup, or move it away and run `observerctl backfill`")
		return
	}
	add("store", checkOK, fmt.Sprintf("%s (0600, %s)", path, byteSize(fi.Size())), "")

	latest := store.LatestSchemaVersion()
	switch v, err := st.SchemaVersion(ctx); {
	case err != nil:
		add("schema", checkFail, fmt.Sprintf("no schema version: %v", err), "move the file away and let the writer create a new store; `observerctl backfill` reads the history again")
	case v == latest:
		add("schema", checkOK, fmt.Sprintf("version %d, current", v), "")
	case v < latest:
		add("schema", checkWarn, fmt.Sprintf("version %d; this observerctl has %d: the writer migrates the store at its next start", v, latest), "restart the writer: `observerctl restart writer` (or `observerctl up`)")
	default:
		add("schema", checkFail, fmt.Sprintf("version %d was written by a newer observer (this one knows %d)", v, latest), "install the newer observer, the one that wrote it")
	}

	if q, err := st.QuarantineCount(ctx); err != nil {
		add("quarantine", checkFail, err.Error(), "")
	} else if q > 0 {
		add("quarantine", checkWarn, fmt.Sprintf("%d message(s) the writer could not decode are kept in the quarantine table", q),
			"see why: sqlite3 -readonly "+path+" \"SELECT datetime(received_at/1000,'unixepoch'), subject, reason FROM quarantine\"; `observerctl prune` removes old ones")
	} else {
		add("quarantine", checkOK, "empty", "")
	}
}

// doctorHooks checks, for every AI client found, that observer's hook is registered for each event
// init registers it for.
func doctorHooks(home string, add func(name, status, detail, fix string)) {
	userHome, err := os.UserHomeDir()
	if err != nil {
		add("hooks", checkWarn, "no home directory to look for clients in: "+err.Error(), "")
		return
	}
	// The command init registers from this observerctl counts too, wherever it is installed and
	// whatever its name.
	var homeArg string
	if home != filepath.Join(userHome, ".observer") {
		homeArg = home
	}
	ctl, _ := observerctlPath()
	found := 0
	for _, l := range clientconfig.LocateHooks(userHome, os.Getenv, exec.LookPath) {
		if !l.Found {
			continue
		}
		found++
		name := "hooks:" + l.Client
		fix := "`observerctl init --client " + l.Client + "`"
		data, err := os.ReadFile(l.File)
		if errors.Is(err, fs.ErrNotExist) {
			add(name, checkWarn, "observer's hook is not registered ("+l.File+" does not exist)", fix)
			continue
		}
		if err != nil {
			add(name, checkWarn, err.Error(), "")
			continue
		}
		d, err := clientconfig.ParseDoc(clientconfig.JSON, data)
		if err != nil {
			add(name, checkWarn, fmt.Sprintf("%s does not parse: %v", l.File, err), "fix the file, then "+fix)
			continue
		}
		var missing []string
		own := clientconfig.HookCommand(ctl, homeArg, l.Client)
		for _, ev := range clientconfig.HookEvents[l.Client] {
			list, _ := d.Lookup("hooks", ev)
			elems, _ := list.([]any)
			registered := false
			for _, el := range elems {
				if clientconfig.IsObserverHook(el) || slices.Contains(clientconfig.Commands(el), own) {
					registered = true
					break
				}
			}
			if !registered {
				missing = append(missing, ev)
			}
		}
		all := len(clientconfig.HookEvents[l.Client])
		switch {
		case len(missing) == 0 && l.Client == clientconfig.Codex:
			status, detail, fix := codexHookTrust(l.File, d, own)
			add(name, status, fmt.Sprintf("registered for all %d events in %s", all, l.File)+detail, fix)
		case len(missing) == 0:
			add(name, checkOK, fmt.Sprintf("registered for all %d events in %s", all, l.File), "")
		case len(missing) == all:
			add(name, checkWarn, "observer's hook is not registered in "+l.File, fix)
		default:
			add(name, checkWarn, fmt.Sprintf("registered in %s, but not for %s", l.File, strings.Join(missing, ", ")), fix)
		}
	}
	if found == 0 {
		add("hooks", checkWarn, "no AI client found (Claude Code, Codex, Cursor)", "")
	}
}

// codexHookTrust tells registered hooks Codex runs from those it does not: Codex runs a hook of
// hooks.json only once the user trusted it, and records the trust in config.toml beside it (see
// clientconfig.CodexHooks). It returns the check's status, what to add to its detail, and the fix.
func codexHookTrust(hooksFile string, hooks *clientconfig.Doc, own string) (status, detail, fix string) {
	if abs, err := filepath.Abs(hooksFile); err == nil {
		hooksFile = abs
	}
	configTOML := filepath.Join(filepath.Dir(hooksFile), "config.toml")
	data, _ := os.ReadFile(configTOML)
	ours := func(c string) bool { return c == own || clientconfig.IsObserverHook(map[string]any{"command": c}) }
	var untrusted, modified, off []string
	for _, h := range clientconfig.CodexHooks(hooksFile, hooks, data, ours) {
		switch {
		case !h.Enabled:
			off = append(off, h.Event)
		case h.Trust == clientconfig.CodexUntrusted:
			untrusted = append(untrusted, h.Event)
		case h.Trust == clientconfig.CodexModified:
			modified = append(modified, h.Event)
		}
	}
	list := func(evs []string) string { slices.Sort(evs); return strings.Join(slices.Compact(evs), ", ") }
	var notes []string
	if len(untrusted)+len(modified) > 0 {
		var which []string
		if len(untrusted) > 0 {
			which = append(which, "not trusted yet: "+list(untrusted))
		}
		if len(modified) > 0 {
			which = append(which, "changed since you trusted them: "+list(modified))
		}
		notes = append(notes, "installed, but Codex runs them only once you trust them ("+strings.Join(which, "; ")+")")
		fix = "run `codex` and answer \"Trust all and continue\" when it says hooks need review (or trust them one by one with /hooks); " +
			"`codex exec` skips untrusted hooks unless run with --dangerously-bypass-hook-trust"
	}
	if len(off) > 0 {
		notes = append(notes, "turned off in Codex: "+list(off))
		if fix != "" {
			fix += "; "
		}
		fix += "turn them on again with /hooks in `codex` (or remove enabled = false from their [hooks.state] in " + configTOML + ")"
	}
	if len(notes) == 0 {
		return checkOK, ", and trusted in Codex", ""
	}
	return checkWarn, "; " + strings.Join(notes, "; "), fix
}

// programExists reports whether a client can run program: an absolute (or ~/) path to an
// executable file, or a name found on PATH.
func programExists(program, userHome string) bool {
	if rest, ok := strings.CutPrefix(program, "~/"); ok {
		program = filepath.Join(userHome, rest)
	}
	if program == "" {
		return false
	}
	if !strings.Contains(program, "/") {
		_, err := exec.LookPath(program)
		return err == nil
	}
	fi, err := os.Stat(program)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// doctorCommands checks that the programs of the hook entries and MCP servers observer registered
// in the clients' files (init's manifest, and any entry running observerctl hook) still exist.
func doctorCommands(home string, add func(name, status, detail, fix string)) {
	userHome, err := os.UserHomeDir()
	if err != nil {
		return
	}
	regs := clientconfig.Registrations(home, clientconfig.LocateHooks(userHome, os.Getenv, exec.LookPath))
	if len(regs) == 0 {
		return // nothing registered: the hooks checks say so
	}
	type gone struct {
		file, program string
		where         []string
	}
	var missing []gone
	mcp := false
	for _, r := range regs {
		if programExists(r.Program, userHome) {
			continue
		}
		mcp = mcp || clientconfig.IsObserverMCP(r.Program)
		i := slices.IndexFunc(missing, func(g gone) bool { return g.file == r.File && g.program == r.Program })
		if i < 0 {
			missing = append(missing, gone{file: r.File, program: r.Program})
			i = len(missing) - 1
		}
		if !slices.Contains(missing[i].where, r.Where) {
			missing[i].where = append(missing[i].where, r.Where)
		}
	}
	if len(missing) == 0 {
		add("commands", checkOK, fmt.Sprintf("the %d command(s) observer registered with the clients exist", len(regs)), "")
		return
	}
	var details []string
	for _, g := range missing {
		where := strings.Join(g.where, ", ") + " runs"
		switch n := len(g.where); {
		case n > 3:
			where = fmt.Sprintf("%d entries (%s, %s and %d more) run", n, g.where[0], g.where[1], n-2)
		case n > 1:
			where = strings.Join(g.where, ", ") + " run"
		}
		details = append(details, fmt.Sprintf("%s: %s %s, which does not exist", g.file, where, g.program))
	}
	rerun := "init"
	if userHome != "" && home != filepath.Join(userHome, ".observer") {
		rerun = "--home " + clientconfig.ShellQuote(home) + " init"
	}
	if mcp {
		rerun += " --hooks --mcp"
	}
	p := binPlacement(filepath.Dir(missing[0].program))
	add("commands", checkFail, strings.Join(details, "; ")+" (the build they came from was cleaned, moved or deleted): the clients fail to run them",
		"install the binaries, then re-run init from the installed observerctl, which replaces observer's entries: `"+installCommand(p, rerun)+"`")
}

// doctorUnits checks that the binaries the service units observerctl wrote run still exist.
func doctorUnits(home string, add func(name, status, detail, fix string)) {
	m, err := newServiceManager(newServiceHost())
	if err != nil {
		return
	}
	userHome, _ := os.UserHomeDir()
	n := 0
	var bad []string
	var first string
	for _, u := range m.units {
		data, err := os.ReadFile(u.Path)
		if err != nil || !bytes.Contains(data, []byte(serviceMarker)) {
			continue
		}
		prog := unitProgram(m.kind, data)
		if prog == "" {
			continue
		}
		n++
		if !programExists(prog, userHome) {
			bad = append(bad, u.Path+" runs "+prog)
			if first == "" {
				first = prog
			}
		}
	}
	switch {
	case n == 0:
	case len(bad) == 0:
		add("units", checkOK, fmt.Sprintf("the binaries of the %d unit(s) in %s exist", n, m.dir), "")
	default:
		rerun := "service install --force"
		if userHome != "" && home != filepath.Join(userHome, ".observer") {
			rerun = "--home " + clientconfig.ShellQuote(home) + " " + rerun
		}
		add("units", checkFail, strings.Join(bad, "; ")+", which does not exist: observer does not start again",
			"install the binaries and rewrite the units from there: `"+installCommand(binPlacement(filepath.Dir(first)), rerun)+"`")
	}
}

// unitProgram is the program a unit written by service install runs: ExecStart's first word, or
// the first ProgramArguments string.
func unitProgram(kind string, data []byte) string {
	if kind == "systemd" {
		for line := range strings.Lines(string(data)) {
			v, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart=")
			if !ok {
				continue
			}
			if strings.HasPrefix(v, `"`) {
				if end := strings.Index(v[1:], `"`); end >= 0 {
					v = v[1 : end+1]
				}
			} else if f := strings.Fields(v); len(f) > 0 {
				v = f[0]
			}
			return strings.ReplaceAll(v, "%%", "%")
		}
		return ""
	}
	var prog string
	replacePlistString(string(data), "ProgramArguments", func(old, _ string) string {
		var v struct {
			S string `xml:",chardata"`
		}
		if xml.Unmarshal([]byte("<s>"+old+"</s>"), &v) == nil {
			prog = v.S
		}
		return old
	})
	return prog
}

// lockHolder says which process holds a lock file's flock, without trying the lock (taking it
// even briefly could make a starting writer fail). On Linux it reads /proc/locks; elsewhere it
// trusts the pid written in the file when that process is alive.
func lockHolder(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	if locks, err := os.ReadFile("/proc/locks"); err == nil {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return 0, false
		}
		for line := range strings.Lines(string(locks)) {
			// 1: FLOCK  ADVISORY  WRITE 14610 fe:00:9986323 0 EOF
			f := strings.Fields(line)
			if len(f) < 6 || f[1] != "FLOCK" {
				continue // a POSIX lock, or a waiter ("->")
			}
			dev := strings.Split(f[5], ":")
			if ino, err := strconv.ParseUint(dev[len(dev)-1], 10, 64); err == nil && ino == uint64(st.Ino) {
				pid, _ := strconv.Atoi(f[4])
				return pid, true
			}
		}
		return 0, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return pid, false
	}
	err = syscall.Kill(pid, 0)
	return pid, err == nil || errors.Is(err, syscall.EPERM)
}

func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

func printDoctor(w io.Writer, rep doctorReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tDETAIL")
	for _, c := range rep.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Status, strings.ReplaceAll(c.Detail, "\n", " "))
	}
	tw.Flush()
	var fixes []check
	for _, c := range rep.Checks {
		if c.Status != checkOK && c.Fix != "" {
			fixes = append(fixes, c)
		}
	}
	if len(fixes) > 0 {
		fmt.Fprintln(w, "\nto fix:")
		for _, c := range fixes {
			fmt.Fprintf(w, "  %s: %s\n", c.Name, c.Fix)
		}
	}
	fmt.Fprintf(w, "\n%d failure(s), %d warning(s)\n", rep.Failures, rep.Warnings)
}

// doctorTeam checks [team]: the credentials, and whether the running bus reaches its hub.
func doctorTeam(ctx context.Context, cfg config.Config, busUp bool, add func(name, status, detail, fix string)) {
	if cfg.Team.Credentials == "" {
		add("team", checkOK, "team mode off: nothing leaves this machine", "")
		return
	}
	e := &env{cfg: cfg, logger: slog.New(slog.DiscardHandler)}
	m, err := teamMember(e, e.logger)
	if err != nil {
		add("team", checkFail, err.Error(), "ask the hub's admin for new credentials (observerctl hub add-member) and run `observerctl team join FILE`")
		return
	}
	r := teamStatusReport{Member: m.Creds.Member, Hub: cmpSlice(m.Hub, m.Creds.Hub), Share: string(m.Share)}
	if !busUp {
		add("team", checkWarn, fmt.Sprintf("member %s (share %s): the bus is not running", r.Member, r.Share), "start observer: `observerctl up`")
		return
	}
	if err := readTeamState(ctx, e, &r); err != nil {
		add("team", checkFail, fmt.Sprintf("member %s: %v", r.Member, err), "restart observer so that its bus joins the hub: `observerctl down; observerctl up`")
		return
	}
	if !r.Connected {
		add("team", checkWarn, fmt.Sprintf("member %s is not connected to the hub at %s; %d events wait for it", r.Member, strings.Join(r.Hub, ","), r.Pending),
			"check that the hub runs and is reachable, and that this member is registered on it (observerctl hub members); see `observerctl logs supervisor`")
		return
	}
	add("team", checkOK, fmt.Sprintf("member %s, share %s, connected to the hub; %d events waiting", r.Member, r.Share, r.Pending), "")
}

// doctorDisk checks the free space on the home's disk: below bus.DiskLow the bus, the writer and
// the spool cannot write (what the proxy serves meanwhile is counted, not recorded); below what
// the stream's bound needs the next start is refused (busserver.CheckReserve, the bus's own start check):
// [bus] max_bytes, or [hub] max_bytes in a team hub's home.
func doctorDisk(cfg config.Config, add func(name, status, detail, fix string)) {
	free, err := bus.DiskFree(cfg.Home)
	if err != nil {
		add("disk", checkWarn, err.Error(), "")
		return
	}
	key, maxBytes := "[bus] max_bytes", cfg.Bus.MaxBytes
	if isHubHome(cfg.Home) {
		key, maxBytes = "[hub] max_bytes", cfg.Hub.MaxBytes
	}
	if free < bus.DiskLow {
		add("disk", checkFail, bus.DiskFull(cfg.Home)+": the bus, the writer and the spool cannot write; turns the proxy serves meanwhile are counted, not recorded",
			"free space on that disk: observer takes events again by itself once there is room (what it acknowledged is kept)")
		return
	}
	if err := busserver.CheckReserve(cfg.BusDir(), key, maxBytes); err != nil {
		add("disk", checkWarn, "the next start will be refused: "+err.Error(), "free space on that disk, or lower "+key)
		return
	}
	add("disk", checkOK, fmt.Sprintf("%s free on %s", bus.HumanBytes(free), cfg.Home), "")
}
