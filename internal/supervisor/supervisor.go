// Package supervisor runs observer's components as child processes of `observerctl up`.
//
// The supervisor hosts the bus itself, then starts each component in order and waits until it
// reports healthy (its heartbeat on the bus) before starting the next. A child that exits is
// restarted with exponential backoff (Options.BackoffBase, 0.5 s by default, doubling to 30 s, and
// back to the base after a minute of running); five exits within two minutes mark it
// crash-looping, and it is then retried only every Options.CrashLoopDelay (two minutes by default),
// loudly. Children are stopped in reverse order: SIGTERM, a grace period, then SIGKILL.
// They die with the supervisor: on Linux the kernel sends them SIGTERM when it exits (Pdeathsig),
// and everywhere each child also exits when its parent process changes.
//
// A child's health is ok while its heartbeats come and say so; degraded while they come, say ok,
// and list something that does not work (Health.Degraded: a listener that could not bind, say), the
// list then heading its detail; unhealthy when they stop or say not ok; down when it does not run.
// A child that exits with an error names it on its last line of stderr ("observer-proxy: listen on
// ..."), as every observer binary does; the supervisor adds that line to its last exit.
//
// One supervisor runs per home, enforced by a lock file; it answers `observerctl status`,
// `restart` and `down` on a unix socket in the home's run directory (0600).
package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/observerhq/observer/pkg/bus"
)

// maxBackoff caps the restart delay of a child that keeps exiting before it crash-loops.
const maxBackoff = 30 * time.Second

// Spec describes one child component.
type Spec struct {
	Name string   // writer, proxy, watch, dash
	Path string   // executable
	Args []string // arguments after the executable
	Env  []string // added to the supervisor's environment
	// Nice lowers the child's CPU priority by this much below the supervisor's own (0: the same;
	// at most to nice 19), so a supervisor run under `nice` never raises a child above itself. The
	// components that work in the background (writer, watcher, dashboard) run niced so that, on a
	// small machine, their bursts do not delay the proxy, which sits on the path of every model
	// request.
	Nice int
}

// Options configures a supervisor.
type Options struct {
	Specs        []Spec
	LogDir       string
	Bus          *bus.Client // in-process connection to the hosted bus, for heartbeats
	Logger       *slog.Logger
	Grace        time.Duration // SIGTERM to SIGKILL
	ReadyTimeout time.Duration // how long a child may take to report healthy
	// HealthTTL is how old a heartbeat may be before the child counts as unhealthy.
	HealthTTL time.Duration
	// BackoffBase is the first restart delay after a child exits (default 500ms). It doubles with
	// each exit up to 30s and falls back to the base once a child ran for more than a minute, or
	// is restarted on request.
	BackoffBase time.Duration
	// CrashLoopDelay is the restart delay once a child exited five times within two minutes
	// (default 2m).
	CrashLoopDelay time.Duration
}

// Child states.
const (
	StateStarting  = "starting"
	StateRunning   = "running"
	StateBackoff   = "backoff"
	StateCrashLoop = "crash-loop"
	StateStopped   = "stopped"
)

// ChildStatus is what status shows of one child.
type ChildStatus struct {
	Name      string    `json:"name"`
	PID       int       `json:"pid,omitempty"`
	State     string    `json:"state"`
	Health    string    `json:"health"` // ok, degraded, unhealthy, unknown, down
	StartedAt time.Time `json:"started_at,omitzero"`
	UptimeS   float64   `json:"uptime_s"`
	Restarts  int       `json:"restarts"`
	LastExit  string    `json:"last_exit,omitempty"`
	LastEvent time.Time `json:"last_event,omitzero"`
	Events    int64     `json:"events"`
	Detail    string    `json:"detail,omitempty"`
	// Problems is what the child's last heartbeat said does not work (Health.Degraded).
	Problems []string `json:"problems,omitempty"`
	// Notices are what the child's last heartbeat told beside its health (Health.Notices).
	Notices []bus.Notice `json:"notices,omitempty"`
}

type child struct {
	spec Spec

	mu        sync.Mutex
	cmd       *exec.Cmd
	state     string
	started   time.Time
	restarts  int
	lastExit  string
	health    bus.Health
	healthAt  time.Time
	exits     []time.Time
	restartCh chan struct{}
	ready     chan struct{} // closed at the first heartbeat of each run
}

// Supervisor runs the children.
type Supervisor struct {
	opts     Options
	children []*child
	byName   map[string]*child
	logger   *slog.Logger
	wg       sync.WaitGroup
}

// New makes a supervisor; Run starts it.
func New(opts Options) *Supervisor {
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	if opts.HealthTTL <= 0 {
		opts.HealthTTL = 5 * time.Second
	}
	if opts.BackoffBase <= 0 {
		opts.BackoffBase = 500 * time.Millisecond
	}
	if opts.CrashLoopDelay <= 0 {
		opts.CrashLoopDelay = 2 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Supervisor{opts: opts, byName: map[string]*child{}, logger: opts.Logger}
	for _, sp := range opts.Specs {
		ch := &child{spec: sp, state: StateStopped, restartCh: make(chan struct{}, 1)}
		s.children = append(s.children, ch)
		s.byName[sp.Name] = ch
	}
	return s
}

// Run starts the children in order, each after the previous reported healthy, and keeps them
// running until ctx ends; then it stops them in reverse order and returns.
func (s *Supervisor) Run(ctx context.Context) error {
	if s.opts.Bus != nil {
		sub, err := s.opts.Bus.SubscribeHealth(s.onHealth)
		if err != nil {
			return fmt.Errorf("subscribe to heartbeats: %w", err)
		}
		defer sub.Stop()
	}
	if err := os.MkdirAll(s.opts.LogDir, 0o700); err != nil {
		return err
	}
	childCtxs := make([]context.CancelFunc, len(s.children))
	dones := make([]chan struct{}, len(s.children))
	for i, ch := range s.children {
		cctx, cancel := context.WithCancel(context.Background())
		childCtxs[i] = cancel
		dones[i] = make(chan struct{})
		ready := make(chan struct{})
		go func() {
			defer close(dones[i])
			s.keep(cctx, ch, ready)
		}()
		select {
		case <-ready:
		case <-time.After(s.opts.ReadyTimeout):
			s.logger.Warn("component not healthy in time; starting the next anyway", "component", ch.spec.Name, "waited", s.opts.ReadyTimeout)
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	<-ctx.Done()
	for i := len(s.children) - 1; i >= 0; i-- {
		if childCtxs[i] != nil {
			childCtxs[i]()
			<-dones[i]
		}
	}
	return nil
}

func (s *Supervisor) onHealth(h bus.Health) {
	ch := s.byName[h.Component]
	if ch == nil {
		return
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.cmd == nil || ch.cmd.Process == nil || ch.cmd.Process.Pid != h.PID {
		return // a heartbeat from an older run or another process
	}
	if len(h.Degraded) > 0 && !sameProblems(h.Degraded, ch.health.Degraded) {
		s.logger.Warn("component is degraded", "component", h.Component, "problems", strings.Join(h.Degraded, "; "))
	}
	ch.health, ch.healthAt = h, time.Now()
	if ch.ready != nil {
		select {
		case <-ch.ready:
		default:
			close(ch.ready)
		}
	}
}

// sameProblems reports whether two heartbeats' problem lists say the same but for their figures.
// A component's problem may carry a running count or a size ("12 turns not recorded", "3.1 MB
// free") that changes with nearly every heartbeat; logging each would write a warning a second,
// on a full disk too. A problem that comes, goes or says something else is logged.
func sameProblems(a, b []string) bool {
	return slices.EqualFunc(a, b, func(x, y string) bool { return withoutDigits(x) == withoutDigits(y) })
}

// withoutDigits is s with each run of digits (and the points and commas inside one) as "#".
func withoutDigits(s string) string {
	var b strings.Builder
	inNum := false
	for i, r := range s {
		digit := r >= '0' && r <= '9'
		sep := inNum && (r == '.' || r == ',') && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'
		switch {
		case digit || sep:
			if !inNum {
				b.WriteByte('#')
			}
			inNum = true
		default:
			inNum = false
			b.WriteRune(r)
		}
	}
	return b.String()
}

// keep runs one child until ctx ends, restarting it with backoff. firstReady is closed the first
// time the child reports healthy (or gives up starting).
func (s *Supervisor) keep(ctx context.Context, ch *child, firstReady chan struct{}) {
	var once sync.Once
	signalReady := func() { once.Do(func() { close(firstReady) }) }
	defer signalReady()
	backoff := s.opts.BackoffBase
	for ctx.Err() == nil {
		ready := make(chan struct{})
		exited, err := s.start(ch, ready)
		if err != nil {
			s.logger.Error("cannot start component", "component", ch.spec.Name, "err", err)
			ch.mu.Lock()
			ch.lastExit = err.Error()
			ch.mu.Unlock()
			signalReady()
		} else {
			go func() {
				select {
				case <-ready:
					signalReady()
				case <-exited:
				}
			}()
			restart := false
			select {
			case <-ctx.Done():
				s.stop(ch, exited)
				return
			case <-ch.restartCh:
				s.logger.Info("restarting component on request", "component", ch.spec.Name)
				s.stop(ch, exited)
				restart = true
			case <-exited:
			}
			if restart {
				ch.mu.Lock()
				ch.restarts++
				ch.mu.Unlock()
				backoff = s.opts.BackoffBase
				continue
			}
		}
		// It exited on its own (or could not start).
		ch.mu.Lock()
		var ranFor time.Duration // a child that could not start did not run, whatever ch.started says
		if err == nil {
			ranFor = time.Since(ch.started)
		}
		now := time.Now()
		ch.exits = append(ch.exits, now)
		recent := ch.exits[:0]
		for _, t := range ch.exits {
			if now.Sub(t) < 2*time.Minute {
				recent = append(recent, t)
			}
		}
		ch.exits = recent
		if ranFor > time.Minute {
			backoff = s.opts.BackoffBase
		}
		delay := backoff
		ch.state = StateBackoff
		if len(recent) >= 5 {
			ch.state = StateCrashLoop
			delay = s.opts.CrashLoopDelay
			s.logger.Error("component is crash-looping; retrying later (see its log)", "component", ch.spec.Name, "in", delay,
				"exits_in_2m", len(recent), "last_exit", ch.lastExit, "log", s.logPath(ch.spec.Name))
		} else {
			s.logger.Warn("component exited; restarting", "component", ch.spec.Name, "exit", ch.lastExit, "in", delay)
		}
		ch.restarts++
		ch.mu.Unlock()
		backoff = min(backoff*2, maxBackoff)
		select {
		case <-ctx.Done():
			ch.mu.Lock()
			ch.state = StateStopped
			ch.mu.Unlock()
			return
		case <-ch.restartCh:
			backoff = s.opts.BackoffBase
		case <-time.After(delay):
		}
	}
}

func (s *Supervisor) logPath(name string) string { return filepath.Join(s.opts.LogDir, name+".log") }

// start launches the child with its output appended to its log file. exited is closed when it ends.
func (s *Supervisor) start(ch *child, ready chan struct{}) (exited chan struct{}, err error) {
	logf, err := openLog(s.logPath(ch.spec.Name))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(ch.spec.Path, ch.spec.Args...)
	cmd.Env = append(append(os.Environ(), ch.spec.Env...), fmt.Sprintf("OBSERVER_SUPERVISOR_PID=%d", os.Getpid()))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	ch.mu.Lock()
	ch.state = StateStarting
	ch.ready = ready
	ch.health, ch.healthAt = bus.Health{}, time.Time{}
	if err := cmd.Start(); err != nil {
		ch.mu.Unlock()
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", ch.spec.Path, err)
	}
	ch.cmd = cmd
	ch.started = time.Now()
	ch.mu.Unlock()
	if ch.spec.Nice != 0 {
		nice := min(ownNice()+ch.spec.Nice, 19)
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, nice); err != nil {
			s.logger.Warn("component priority not lowered", "component", ch.spec.Name, "nice", nice, "err", err)
		}
	}
	s.logger.Info("component started", "component", ch.spec.Name, "pid", cmd.Process.Pid)
	exited = make(chan struct{})
	go func() {
		err := cmd.Wait()
		logf.Close()
		why := exitText(err)
		if err != nil {
			if line := lastWords(s.logPath(ch.spec.Name), filepath.Base(ch.spec.Path)); line != "" {
				why += ": " + line
			}
		}
		ch.mu.Lock()
		ch.lastExit = why
		ch.state = StateStopped
		ch.mu.Unlock()
		close(exited)
	}()
	go func() {
		select {
		case <-ready:
			ch.mu.Lock()
			if ch.state == StateStarting {
				ch.state = StateRunning
			}
			ch.mu.Unlock()
		case <-exited:
		}
	}()
	return exited, nil
}

// stop sends SIGTERM, waits the grace period, then SIGKILL.
func (s *Supervisor) stop(ch *child, exited chan struct{}) {
	ch.mu.Lock()
	cmd := ch.cmd
	ch.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(s.opts.Grace):
		s.logger.Warn("component did not stop in time; killing it", "component", ch.spec.Name, "grace", s.opts.Grace)
		cmd.Process.Kill()
		<-exited
	}
	s.logger.Info("component stopped", "component", ch.spec.Name)
}

// Restart asks for a child to be restarted now.
func (s *Supervisor) Restart(name string) error {
	ch := s.byName[name]
	if ch == nil {
		return fmt.Errorf("%w %q", ErrUnknownComponent, name)
	}
	select {
	case ch.restartCh <- struct{}{}:
	default:
	}
	return nil
}

// ErrUnknownComponent reports a name that is not a supervised component.
var ErrUnknownComponent = errors.New("no such component")

// Status reports every child.
func (s *Supervisor) Status() []ChildStatus {
	out := make([]ChildStatus, 0, len(s.children))
	now := time.Now()
	for _, ch := range s.children {
		ch.mu.Lock()
		st := ChildStatus{Name: ch.spec.Name, State: ch.state, Restarts: ch.restarts, LastExit: ch.lastExit,
			Health: "unknown", LastEvent: ch.health.LastEvent, Events: ch.health.Events, Detail: ch.health.Detail,
			Problems: slices.Clone(ch.health.Degraded), Notices: slices.Clone(ch.health.Notices)}
		if len(st.Problems) > 0 {
			st.Detail = strings.Join(append(slices.Clone(st.Problems), st.Detail), "; ")
			st.Detail = strings.TrimSuffix(st.Detail, "; ")
		}
		if ch.cmd != nil && ch.cmd.Process != nil && ch.state != StateStopped && ch.state != StateBackoff && ch.state != StateCrashLoop {
			st.PID = ch.cmd.Process.Pid
			st.StartedAt = ch.started.UTC()
			st.UptimeS = now.Sub(ch.started).Seconds()
			switch {
			case !ch.healthAt.IsZero() && now.Sub(ch.healthAt) <= s.opts.HealthTTL && ch.health.OK && len(ch.health.Degraded) > 0:
				st.Health = "degraded"
			case !ch.healthAt.IsZero() && now.Sub(ch.healthAt) <= s.opts.HealthTTL && ch.health.OK:
				st.Health = "ok"
			case !ch.healthAt.IsZero() || now.Sub(ch.started) > s.opts.ReadyTimeout:
				st.Health = "unhealthy"
			}
		} else {
			st.Health = "down"
		}
		ch.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// lastWords returns the line a child that failed wrote last to its log, when it is the error line of
// an observer binary ("observer-proxy: listen on 127.0.0.1:8820 ...: address already in use"), with
// that prefix cut; else "".
func lastWords(path, binary string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-4096, 0)
	buf := make([]byte, fi.Size()-off)
	n, _ := f.ReadAt(buf, off)
	lines := strings.Split(strings.TrimRight(string(buf[:n]), "\n"), "\n")
	rest, ok := strings.CutPrefix(lines[len(lines)-1], binary+": ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(rest)
}

// openLog opens a component's log for appending, first moving aside one that has grown past 20 MB.
func openLog(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 20<<20 {
		os.Rename(path, path+".1")
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
}

func exitText(err error) string {
	if err == nil {
		return "exit 0"
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + signalName(ws.Signal())
		}
		return fmt.Sprintf("exit %d", ee.ExitCode())
	}
	return err.Error()
}

// signalName names a signal as kill(1) does: "SIGKILL (9)".
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
		syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
		syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGXCPU: "SIGXCPU",
		syscall.SIGXFSZ: "SIGXFSZ", syscall.SIGSYS: "SIGSYS",
	}
	if n, ok := names[sig]; ok {
		return fmt.Sprintf("%s (%d)", n, int(sig))
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}

// TailFile copies the last n lines of path to w.
func TailFile(w io.Writer, path string, n int) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	// Read backwards in chunks until n newlines are found.
	const chunk = 64 << 10
	var buf []byte
	off := size
	lines := 0
	for off > 0 && lines <= n {
		step := min(int64(chunk), off)
		off -= step
		b := make([]byte, step)
		if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
			return 0, err
		}
		buf = append(b, buf...)
		lines = 0
		for _, c := range buf {
			if c == '\n' {
				lines++
			}
		}
	}
	// Drop leading lines beyond n. An unterminated last line counts as a line.
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		lines++
	}
	if lines > n {
		skip := lines - n
		for i, c := range buf {
			if c == '\n' {
				skip--
				if skip == 0 {
					buf = buf[i+1:]
					break
				}
			}
		}
		if skip > 0 { // n <= 0: every line goes
			buf = nil
		}
	}
	_, err = w.Write(buf)
	return size, err
}

// ownNice is the supervisor's nice value (Linux's getpriority answers 20 - nice).
func ownNice() int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		return 0
	}
	return 20 - p
}
