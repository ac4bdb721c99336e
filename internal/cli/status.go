package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/observerhq/observer/pkg/config"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/internal/webhook"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/team"
)

// statusReport is the JSON of `observerctl status --json` (and of the control socket).
type statusReport struct {
	Running    bool                     `json:"running"`
	PID        int                      `json:"pid,omitempty"`
	Version    string                   `json:"version,omitempty"`
	Home       string                   `json:"home"`
	StartedAt  time.Time                `json:"started_at,omitzero"`
	UptimeS    float64                  `json:"uptime_s"`
	Bus        *busStatus               `json:"bus,omitempty"`
	Components []supervisor.ChildStatus `json:"components"`
}

type busStatus struct {
	URL       string    `json:"url"`
	Pending   uint64    `json:"pending"` // published, not yet stored by the writer
	Published uint64    `json:"published"`
	LastEvent time.Time `json:"last_event,omitzero"`
	Spooled   int       `json:"spool_files"`
}

func (s *statusReport) allHealthy() bool {
	if !s.Running || len(s.Components) == 0 {
		return false
	}
	for _, c := range s.Components {
		if c.Health != "ok" {
			return false
		}
	}
	return true
}

// settled reports whether every component has come up, healthy or degraded (it runs, but part of
// it does not work, such as an OTLP listener whose port another program holds): waiting longer
// changes nothing.
func (s *statusReport) settled() bool {
	if !s.Running || len(s.Components) == 0 {
		return false
	}
	for _, c := range s.Components {
		if c.Health != "ok" && c.Health != "degraded" {
			return false
		}
	}
	return true
}

// degraded says, one line per component, what does not work in the degraded ones.
func (s *statusReport) degraded() []string {
	var out []string
	for _, c := range s.Components {
		if c.Health == "degraded" {
			out = append(out, c.Name+": "+strings.Join(c.Problems, "; "))
		}
	}
	return out
}

func buildStatus(ctx context.Context, e *env, srv *busserver.Server, sup *supervisor.Supervisor, started time.Time) statusReport {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	now := time.Now()
	st := statusReport{Running: true, PID: os.Getpid(), Version: Version, Home: e.cfg.Home,
		StartedAt: started.UTC(), UptimeS: now.Sub(started).Seconds()}
	bs := &busStatus{URL: e.cfg.BusURL()}
	busChild := supervisor.ChildStatus{Name: "bus", PID: os.Getpid(), State: supervisor.StateRunning,
		StartedAt: started.UTC(), UptimeS: st.UptimeS, Health: "ok"}
	stats, err := srv.Stats(ctx)
	if err != nil {
		busChild.Health, busChild.Detail = "unhealthy", err.Error()
	} else {
		bs.Pending, bs.Published, bs.LastEvent = stats.Pending, stats.Published, stats.LastEvent
		busChild.LastEvent, busChild.Events = stats.LastEvent, int64(stats.Published)
		busChild.Detail = fmt.Sprintf("%d pending for the writer", stats.Pending)
		if stats.Full() {
			busChild.Health = "degraded"
			busChild.Problems = []string{fmt.Sprintf("stream full: %s of its %s ([bus] max_bytes); new events wait in the producers' spools until the writer makes room",
				bus.HumanBytes(int64(stats.Bytes)), bus.HumanBytes(stats.MaxBytes))}
			busChild.Detail = busChild.Problems[0] + "; " + busChild.Detail
		}
	}
	if files, err := filepath.Glob(filepath.Join(e.cfg.SpoolDir(), "*.jsonl")); err == nil {
		bs.Spooled = len(files)
	}
	st.Bus = bs
	st.Components = append([]supervisor.ChildStatus{busChild}, sup.Status()...)
	markDiskFull(st.Components, bus.DiskFull(e.cfg.Home), srv.StoreError())
	return st
}

// markDiskFull shows a full disk on the components it stops (diskFull is bus.DiskFull's line for
// the home, storeErr the bus's write error): the bus and the writer cannot store, so they are
// unhealthy; the proxy and the watcher still serve and read, but what they capture is not
// recorded, or waits, so they are degraded. The dashboard only reads and keeps its health.
func markDiskFull(comps []supervisor.ChildStatus, diskFull, storeErr string) {
	for i := range comps {
		c := &comps[i]
		problem := diskFull
		if c.Name == "bus" && storeErr != "" {
			if problem == "" {
				problem = "the stream cannot store events: " + storeErr + " (it takes them again by itself once the disk has room)"
			} else {
				problem += "; the stream cannot store events until there is room (it recovers by itself)"
			}
		}
		if problem == "" {
			continue
		}
		switch c.Name {
		case "bus", "writer":
			if c.Health != "down" {
				c.Health = "unhealthy"
			}
		case "proxy", "watch":
			if c.Health == "ok" {
				c.Health = "degraded"
			}
		default:
			continue
		}
		c.Problems = append([]string{problem}, c.Problems...)
		if !strings.HasPrefix(c.Detail, problem) {
			c.Detail = strings.TrimSuffix(problem+"; "+c.Detail, "; ")
		}
	}
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show each component: pid, uptime, restarts, health, last event",
		Description: `HEALTH is ok; degraded when the component runs but part of it does not work (DETAIL says
what, on which address, and why: an OTLP listener whose port another program holds, say);
unhealthy when its heartbeats stop or say it fails; down when it does not run (DETAIL then gives
its last exit and error).

Exit code 0 when observer runs and every component is healthy, 1 when some component is not
(degraded included), 69 when observer is not running.`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			cc := &supervisor.ControlClient{Path: socketPath(e)}
			var st statusReport
			if err := cc.Status(c.Context, &st); err != nil {
				if !errors.Is(err, supervisor.ErrNotRunning) {
					return err
				}
				st = statusReport{Running: false, Home: e.cfg.Home, Components: []supervisor.ChildStatus{}}
				if c.Bool("json") {
					writeJSON(e.stdout, st)
					return withCode(ExitUnavailable, errors.New(""))
				}
				return withCode(ExitUnavailable, fmt.Errorf("observer is not running (home %s); start it with `observerctl up`", e.cfg.Home))
			}
			if c.Bool("json") {
				writeJSON(e.stdout, st)
			} else {
				printStatus(e.stdout, &st)
			}
			if !st.allHealthy() {
				return withCode(ExitFailure, errors.New(""))
			}
			return nil
		},
	}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func printStatus(w io.Writer, st *statusReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tPID\tSTATE\tHEALTH\tUPTIME\tRESTARTS\tLAST EVENT\tDETAIL")
	for _, c := range st.Components {
		pid := "-"
		if c.PID > 0 {
			pid = fmt.Sprint(c.PID)
		}
		detail := c.Detail
		if c.LastExit != "" && c.Health != "ok" {
			detail = strings.TrimSpace(detail + " last exit: " + c.LastExit)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", c.Name, pid, c.State, c.Health,
			humanDuration(c.UptimeS), c.Restarts, ago(c.LastEvent), detail)
	}
	tw.Flush()
	if st.Bus != nil && st.Bus.Spooled > 0 {
		fmt.Fprintf(w, "%d spool file(s) waiting to be published\n", st.Bus.Spooled)
	}
}

func humanDuration(s float64) string {
	if s <= 0 {
		return "-"
	}
	d := time.Duration(s * float64(time.Second))
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	default:
		return d.Round(time.Minute).String()
	}
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return humanDuration(time.Since(t).Seconds()) + " ago"
}

func downCommand() *cli.Command {
	return &cli.Command{
		Name:        "down",
		Usage:       "stop observer (components in reverse order, then the bus)",
		Description: `Exit codes: 0 stopped, or observer was not running; 1 still stopping after 60 s; 64 bad flags.`,
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			cc := &supervisor.ControlClient{Path: socketPath(e)}
			if err := cc.Down(c.Context); err != nil {
				if errors.Is(err, supervisor.ErrNotRunning) {
					fmt.Fprintln(e.stdout, "observer is not running")
					return nil
				}
				return err
			}
			lockPath := filepath.Join(e.cfg.RunDir(), "supervisor.lock")
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if l, err := lockFile(lockPath); err == nil {
					l.Close()
					fmt.Fprintln(e.stdout, "observer stopped")
					return nil
				}
				time.Sleep(100 * time.Millisecond)
			}
			return errors.New("observer is still stopping after 60s; see `observerctl logs supervisor`")
		},
	}
}

func restartCommand() *cli.Command {
	return &cli.Command{
		Name:  "restart",
		Usage: "restart one component",
		Description: `Exit codes: 0 restarted; 1 it failed to restart; 64 no or an unknown component name; 69 observer
is not running.`,
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErr("restart needs one component name (writer, proxy, watch, dash)")
			}
			name := c.Args().First()
			cc := &supervisor.ControlClient{Path: socketPath(e)}
			if err := cc.Restart(c.Context, name); err != nil {
				switch {
				case errors.Is(err, supervisor.ErrNotRunning):
					return withCode(ExitUnavailable, err)
				case errors.Is(err, supervisor.ErrUnknownComponent):
					return usageErr("no component %q runs here (see `observerctl status`)", name)
				}
				return err
			}
			fmt.Fprintf(e.stdout, "restarting %s\n", name)
			return nil
		},
	}
}

var logNames = []string{"supervisor", "writer", "proxy", "watch", "dash"}

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:        "logs",
		Usage:       "print a component's log",
		Description: `Exit codes: 0 done (with -f: until Ctrl-C); 1 no log yet; 64 no or an unknown name.`,
		ArgsUsage:   "NAME (" + strings.Join(logNames, ", ") + "; the bus logs to supervisor)",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing new lines"},
			&cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Value: 100, Usage: "lines to print from the end"},
		},
		Action: func(c *cli.Context) error {
			e, err := loadOrLastGood(c)
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageErr("logs needs one name: %s", strings.Join(logNames, ", "))
			}
			name := c.Args().First()
			if name == "bus" {
				name = "supervisor"
			}
			if !slices.Contains(logNames, name) {
				return usageErr("no log named %q: choose one of %s", name, strings.Join(logNames, ", "))
			}
			path := filepath.Join(e.cfg.LogDir(), name+".log")
			off, err := supervisor.TailFile(e.stdout, path, c.Int("lines"))
			if err != nil {
				if errors.Is(err, os.ErrNotExist) {
					return fmt.Errorf("no log yet at %s (has %s run?)", path, name)
				}
				return err
			}
			if !c.Bool("follow") {
				return nil
			}
			return follow(c.Context, e.stdout, path, off)
		},
	}
}

// follow prints what is appended to path from offset on, until ctx ends; a rotated or truncated
// log is followed from its start.
func follow(ctx context.Context, w io.Writer, path string, off int64) error {
	buf := make([]byte, 64<<10)
	for {
		f, err := os.Open(path)
		if err == nil {
			fi, _ := f.Stat()
			if fi != nil && fi.Size() < off {
				off = 0
			}
			for {
				n, _ := f.ReadAt(buf, off)
				if n == 0 {
					break
				}
				w.Write(buf[:n])
				off += int64(n)
			}
			f.Close()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// runWriter is the writer process: it owns the store and consumes the bus until ctx ends.
func runWriter(ctx context.Context, e *env) error { return runWriterOpts(ctx, e, false) }

// runWriterOpts runs the writer; teamHub makes it a hub's (the team stream, events under members).
func runWriterOpts(ctx context.Context, e *env, teamHub bool) error {
	go daemon.TrimMemory(ctx)
	st, err := store.OpenWriter(ctx, e.cfg.StorePath())
	if err != nil {
		return err
	}
	defer st.Close()
	defer retainOnStart(ctx, e, st)() // [retention], once per start, beside the writer's batches
	token, err := waitToken(ctx, e)
	if err != nil {
		return nil // stopped while waiting
	}
	cl, err := bus.Connect(ctx, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observer-writer", Logger: e.logger})
	if err != nil {
		return err
	}
	defer cl.Close()
	pf, err := prices.Follow(e.cfg.Home, e.logger)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	go pf.Run(ctx)
	autoUpdatePrices(ctx, e)
	w := &writer.Writer{Store: st, Bus: cl, Logger: e.logger, Heartbeat: time.Second, Prices: pf, Budget: e.cfg.Budget,
		ConfigSource: func() (config.Config, error) { return config.Load(e.cfg.Home) },
		Limits:       &e.cfg.Limits,
		Options:      bus.ConsumeOptions{BatchSize: e.cfg.Writer.BatchSize, FlushInterval: e.cfg.Writer.FlushInterval.D()}}
	if teamHub {
		w.Team, w.Options.Stream, w.Options.Consumer = true, team.TeamStream, team.WriterConsumer
	}
	// [alerts]: every alert the writer publishes also goes to the webhook, when one is set (or
	// set later: config.toml is read again at every budget check).
	w.Webhook = webhook.New(e.cfg.Alerts, e.logger)
	w.Model = writerModel(e, st, pf, cl, teamHub) // nil unless [memory] model is set
	e.logger.Info("writer is up", "store", st.Path(), "bus", e.cfg.BusURL())
	err = w.Run(ctx)
	s := w.Stats()
	e.logger.Info("writer stopped", "stored", s.Stored, "duplicates", s.Duplicates, "quarantined", s.Quarantined)
	return err
}

// autoUpdatePrices starts the daily fetch of LiteLLM's price database when [pricing] auto_update is
// on (the default) and says so in the log at start, either way: it is observer's one outbound call
// besides the proxy's forwarding (a GET of a public file, nothing sent).
func autoUpdatePrices(ctx context.Context, e *env) {
	p := e.cfg.Pricing
	if !p.AutoUpdate {
		e.logger.Info("price database auto-update is off ([pricing] auto_update = false): prices change only with observerctl prices update")
		return
	}
	if !prices.IsURL(p.URL) {
		e.logger.Warn("[pricing] auto_update is on but url is not an http(s) URL; prices are not updated", "url", p.URL)
		return
	}
	e.logger.Info("price database auto-update is on: LiteLLM's public price file is fetched at most once per update_every "+
		"(one GET, nothing sent, the last good copy kept); [pricing] auto_update = false turns it off",
		"url", p.URL, "every", p.UpdateEvery.D().String())
	go (&prices.AutoUpdater{Home: e.cfg.Home, URL: p.URL, Every: p.UpdateEvery.D(), Logger: e.logger}).Run(ctx)
}
