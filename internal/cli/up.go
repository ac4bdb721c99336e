package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
)

// backgroundNice is the CPU priority of the components off the request path (writer, watcher,
// dashboard): on 2 cores the writer's store bursts (~10 ms of CPU every 50 ms under load) moved
// the proxy's p99 by about a millisecond; niced, they wait for the proxy instead. The units set the
// same (deploy/).
const backgroundNice = 10

// components lists the children `up` runs, in start order. The writer is this binary; the others
// are separate executables looked up beside observerctl, then on PATH, and skipped when absent.
func components(e *env, hub bool) ([]supervisor.Spec, []string) {
	self, _ := os.Executable()
	specs := []supervisor.Spec{{Name: "writer", Path: self, Args: []string{"writer"}, Nice: backgroundNice}}
	others := []struct{ name, bin string }{
		{"proxy", "observer-proxy"}, {"watch", "observer-watch"}, {"dash", "observer-dash"},
	}
	if hub {
		// A hub stores and shows the team's events; it captures nothing of its own. A node of a
		// hub cluster without [hub] writer is NATS only.
		specs[0].Args = []string{"writer", "--team"}
		others = others[2:]
		if !e.cfg.Hub.Writer {
			specs, others = nil, nil
		}
	}
	var missing []string
	for _, c := range others {
		path := filepath.Join(filepath.Dir(self), c.bin)
		if _, err := os.Stat(path); err != nil {
			p, err := exec.LookPath(c.bin)
			if err != nil {
				missing = append(missing, c.bin)
				continue
			}
			path = p
		}
		spec := supervisor.Spec{Name: c.name, Path: path}
		if c.name != "proxy" {
			spec.Nice = backgroundNice
		}
		specs = append(specs, spec)
	}
	for i := range specs {
		specs[i].Env = []string{"OBSERVER_HOME=" + e.cfg.Home}
	}
	return specs, missing
}

// socketPath is the supervisor's control socket: run/observerctl.sock, or a short path under the
// temp directory when the home's path is too long for a unix socket.
func socketPath(e *env) string {
	p := filepath.Join(e.cfg.RunDir(), "observerctl.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(e.cfg.Home))
	return filepath.Join(os.TempDir(), fmt.Sprintf("observer-%d-%s.sock", os.Getuid(), hex.EncodeToString(sum[:6])))
}

func upCommand() *cli.Command {
	return &cli.Command{
		Name:  "up",
		Usage: "start observer: the bus, the writer and every installed component, supervised",
		Description: `Runs in the foreground until Ctrl-C or ` + "`observerctl down`" + `. It hosts the bus, starts the writer and
then observer-proxy, observer-watch and observer-dash where they are installed beside observerctl or
on PATH, each once the previous one reports healthy, and restarts any that exits. Logs go to
$OBSERVER_HOME/logs/<component>.log.

Exit codes: 0 stopped normally (Ctrl-C, ` + "`observerctl down`" + `), or with --detach once everything
is healthy; 1 it could not start (observer already runs on this home, the bus cannot listen), or
with --detach, it runs but some component is degraded (status says what);
64 bad flags or a bad config.toml.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "detach", Aliases: []string{"d"}, Usage: "run in the background and return once everything is healthy"},
			&cli.DurationFlag{Name: "grace", Value: 10 * time.Second, Usage: "how long a component may take to stop before it is killed"},
		},
		Action: runUp,
	}
}

func runUp(c *cli.Context) error { return runSuite(c, false) }

// runSuite runs the supervisor: a member's suite (up), or a team hub's (hub up).
func runSuite(c *cli.Context, hub bool) error {
	e, err := load(c)
	if err != nil {
		return err
	}
	for _, d := range []string{e.cfg.RunDir(), e.cfg.LogDir(), e.cfg.SpoolDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	lockPath := filepath.Join(e.cfg.RunDir(), "supervisor.lock")
	lock, err := lockFile(lockPath)
	if err != nil {
		return err
	}
	if c.Bool("detach") {
		lock.Close()
		return detach(c, e, hub)
	}
	defer lock.Close()

	logFile, err := os.OpenFile(filepath.Join(e.cfg.LogDir(), "supervisor.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// Log to the terminal (or whatever stderr is) and to supervisor.log, once when they are one file.
	logger := slog.New(slog.NewMultiHandler(e.logger.Handler(), newLogger(logFile, e.cfg.Log.Level).Handler()))
	if sameFile(e.stderr, logFile) {
		logger = e.logger
	}

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	host := hostBus
	if hub {
		host = hostHub
	}
	srv, cl, err := host(ctx, e, logger, "observerctl-up")
	if err != nil {
		return err
	}
	defer srv.Close()
	defer cl.Close()
	homeLost := guardHome(ctx, e, logger, srv, cancel)

	specs, missing := components(e, hub)
	sup := supervisor.New(supervisor.Options{
		Specs: specs, LogDir: e.cfg.LogDir(), Bus: cl, Logger: logger, Grace: c.Duration("grace"),
	})
	started := time.Now()
	ctrl := &supervisor.Control{
		Status: func() any {
			return buildStatus(context.Background(), e, srv, sup, started)
		},
		Restart: sup.Restart,
		Down:    cancel,
	}
	if err := ctrl.Listen(socketPath(e)); err != nil {
		return err
	}
	defer ctrl.Close()
	logger.Info("observer is up", "home", e.cfg.Home, "bus", e.cfg.BusURL(), "store", e.cfg.StorePath(),
		"components", len(specs), "not_installed", strings.Join(missing, ","))
	err = sup.Run(ctx)
	logger.Info("observer is down")
	if lost := homeLost(); lost != nil {
		return lost
	}
	return err
}

// guardHome stops the bus at once, then the suite (cancel), when observer's home, its bus store,
// its store file or its run directory is removed or replaced while the bus runs: what the bus or
// the writer would take after that goes into deleted files. With the bus gone the producers spool
// (the hook, the proxy, the watcher, whose cursors move only past what was published or spooled),
// and the next start stores what they spooled. The returned func gives the error to exit with,
// once the home was lost.
func guardHome(ctx context.Context, e *env, logger *slog.Logger, srv *busserver.Server, cancel func()) func() error {
	var lost atomic.Pointer[error]
	paths := []string{e.cfg.Home, e.cfg.BusDir(), e.cfg.StorePath(), e.cfg.RunDir()}
	go supervisor.GuardPaths(ctx, paths, 2*time.Second, func(path, what string) {
		logger.Error("observer's data was "+what+" while the suite ran; stopping the bus and every component, so that producers spool instead of writing into deleted files",
			"path", path, "home", e.cfg.Home)
		srv.Close()
		err := fmt.Errorf("%s was %s while observer ran: the suite stopped (events produced since are spooled and stored at the next `observerctl up`)", path, what)
		lost.Store(&err)
		cancel()
	})
	return func() error {
		if p := lost.Load(); p != nil {
			return *p
		}
		return nil
	}
}

// hostBus starts the bus in this process (making its token on first start) and connects to it in
// process; the client drains the spool every 2 s, the hook calls' and everyone else's.
func hostBus(ctx context.Context, e *env, logger *slog.Logger, name string) (*busserver.Server, *bus.Client, error) {
	token, err := bus.LoadOrCreateToken(e.cfg.TokenPath())
	if err != nil {
		return nil, nil, err
	}
	bc := busConfig(e, token, logger)
	member, err := teamMember(e, logger)
	if err != nil {
		return nil, nil, withCode(ExitUsage, err)
	}
	srv, err := busserver.Start(ctx, bc)
	if err != nil {
		return nil, nil, err
	}
	if err := startSharing(ctx, e, srv, member, logger); err != nil {
		srv.Close()
		return nil, nil, err
	}
	go daemon.TrimMemory(ctx) // the bus host keeps a burst's peak otherwise
	cl, err := bus.Connect(ctx, bus.Options{Server: srv, Token: token, Name: name,
		SpoolDir: e.cfg.SpoolDir(), DrainEvery: 2 * time.Second, Logger: logger})
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return srv, cl, nil
}

func busConfig(e *env, token string, logger *slog.Logger) busserver.Config {
	return busserver.Config{
		Dir: e.cfg.BusDir(), Host: e.cfg.Bus.Host, Port: e.cfg.Bus.Port, Token: token,
		MaxAge: e.cfg.Bus.MaxAge.D(), MaxBytes: e.cfg.Bus.MaxBytes, AckWait: e.cfg.Writer.AckWait.D(), Logger: logger,
	}
}

// lockFile takes an exclusive, non-blocking lock; the holder's pid is written into the file.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		return nil, fmt.Errorf("observer is already running here (supervisor pid %s); see `observerctl status`", strings.TrimSpace(string(data)))
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// detach starts `observerctl up` in a new session with its output in logs/supervisor.log, and
// waits until every component is healthy.
func detach(c *cli.Context, e *env, hub bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(e.cfg.LogDir(), "supervisor.log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close()
	args := []string{"--home", e.cfg.Home, "up", "--grace", c.Duration("grace").String()}
	if hub {
		args = []string{"--home", e.cfg.Home, "hub", "up", "--grace", c.Duration("grace").String()}
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The profiles the environment asks for are the supervisor's, which writes them to the same
	// files: this process, which only starts it, writes none.
	abandonProfiles()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start supervisor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	cc := &supervisor.ControlClient{Path: socketPath(e)}
	deadline := time.After(60 * time.Second)
	for {
		select {
		case err := <-exited:
			var tail strings.Builder
			supervisor.TailFile(&tail, logPath, 10)
			return fmt.Errorf("supervisor exited during start-up (%v); last lines of %s:\n%s", err, logPath, tail.String())
		case <-deadline:
			return fmt.Errorf("observer did not become healthy within 60s; see `observerctl status` and %s", logPath)
		case <-time.After(100 * time.Millisecond):
		}
		var st statusReport
		if cc.Status(c.Context, &st) != nil {
			continue
		}
		if st.allHealthy() {
			fmt.Fprintf(e.stdout, "observer is up (supervisor pid %d, home %s)\n", st.PID, st.Home)
			printStatus(e.stdout, &st)
			return nil
		}
		if st.settled() {
			fmt.Fprintf(e.stdout, "observer is up, degraded (supervisor pid %d, home %s)\n", st.PID, st.Home)
			printStatus(e.stdout, &st)
			return fmt.Errorf("observer runs, but not all of it works:\n  %s\nsee `observerctl status` and `observerctl doctor`; after fixing, `observerctl restart NAME`",
				strings.Join(st.degraded(), "\n  "))
		}
	}
}

func busCommand() *cli.Command {
	return &cli.Command{
		Name:  "bus",
		Usage: "run the bus alone (the command of the observer-bus service unit)",
		Description: `Hosts the embedded NATS bus until SIGINT or SIGTERM.

Exit codes: 0 stopped by a signal; 1 the bus cannot start (its port is taken, its directory is not
writable); 64 bad flags or a bad config.toml.`,
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv, cl, err := hostBus(ctx, e, e.logger, "observer-bus")
			if err != nil {
				return err
			}
			defer srv.Close()
			defer cl.Close()
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			homeLost := guardHome(ctx, e, e.logger, srv, cancel)
			e.logger.Info("bus is up", "url", e.cfg.BusURL(), "dir", e.cfg.BusDir())
			<-ctx.Done()
			return homeLost()
		},
	}
}

func writerCommand() *cli.Command {
	return &cli.Command{
		Name:  "writer",
		Usage: "run the store writer alone (the command of the observer-writer service unit)",
		Description: `Consumes the bus's events into the store until SIGINT or SIGTERM (or its supervisor goes
away); it also keeps the analysis, applies [retention] at start, checks [budget] and reprices
stored rows when [pricing] changes.

Exit codes: 0 stopped; 1 the store cannot be opened or the bus cannot be reached; 64 bad flags
or a bad config.toml.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "team", Usage: "a team hub's writer: store the team stream's events under their members (observerctl hub up runs it so)"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			ctx, cancel := daemon.WatchParent(ctx)
			defer cancel()
			if c.Bool("team") {
				return runWriterOpts(ctx, e, true)
			}
			return runWriter(ctx, e)
		},
	}
}

// waitToken waits for the bus's token file, which the bus creates at its first start.
func waitToken(ctx context.Context, e *env) (string, error) {
	for {
		tok, err := bus.ReadToken(e.cfg.TokenPath())
		if err == nil {
			return tok, nil
		}
		if !errors.Is(err, bus.ErrUnavailable) {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func sameFile(w any, f *os.File) bool {
	wf, ok := w.(*os.File)
	if !ok {
		return false
	}
	a, err1 := wf.Stat()
	b, err2 := f.Stat()
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
