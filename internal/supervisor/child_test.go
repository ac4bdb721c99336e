package supervisor_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
)

// The test binary doubles as the supervised child: with SUPERVISOR_TEST_CHILD set it runs one of
// the child modes below instead of the tests.
const (
	envMode       = "SUPERVISOR_TEST_CHILD"       // exit1, fail-listen, heartbeat, ignore-term
	envName       = "SUPERVISOR_TEST_NAME"        // component name it heartbeats as
	envRecord     = "SUPERVISOR_TEST_RECORD"      // file it appends start, ready and stop records to
	envBusURL     = "SUPERVISOR_TEST_BUS_URL"     // no heartbeats when empty
	envBusToken   = "SUPERVISOR_TEST_BUS_TOKEN"   //
	envReadyDelay = "SUPERVISOR_TEST_READY_DELAY" // wait this long before the first heartbeat
	envBeats      = "SUPERVISOR_TEST_BEATS"       // stop heartbeating after this many (0: never)
	envDegraded   = "SUPERVISOR_TEST_DEGRADED"    // what its heartbeats say does not work (%d: the beat's number)
)

const testToken = "supervisor-test-token"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envMode); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// runChild is the child process. It appends "<name> start|ready|stop <pid> <unix nanos>" lines to
// the record file: start when it runs, ready when it sends its first heartbeat, stop when it gets
// SIGTERM.
func runChild(mode string) int {
	// Catch SIGTERM before anything else, so that an ignore-term child never dies of it.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	name := os.Getenv(envName)
	record(name, "start")
	if mode == "exit1" {
		return 1
	}
	if mode == "fail-listen" { // as an observer binary reports an error on its way out
		fmt.Fprintln(os.Stderr, `{"level":"INFO","msg":"starting"}`)
		fmt.Fprintf(os.Stderr, "%s: listen on 127.0.0.1:8820: listen tcp 127.0.0.1:8820: bind: address already in use\n", filepath.Base(os.Args[0]))
		return 1
	}
	// Die with the test process even when SIGTERM is ignored: the supervisor sets
	// OBSERVER_SUPERVISOR_PID, so this notices being orphaned.
	ctx, cancel := daemon.WatchParent(context.Background())
	defer cancel()

	var cl *bus.Client
	if url := os.Getenv(envBusURL); url != "" {
		var err error
		cl, err = bus.Connect(ctx, bus.Options{URL: url, Token: os.Getenv(envBusToken), Name: name, Wait: true})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child: connect:", err)
			return 3
		}
		defer cl.Close()
	}
	delay, _ := time.ParseDuration(os.Getenv(envReadyDelay))
	maxBeats, _ := strconv.Atoi(os.Getenv(envBeats))
	next := time.After(delay)
	beats := 0
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "child: orphaned")
			return 2
		case <-term:
			record(name, "stop")
			if mode != "ignore-term" {
				return 0
			}
		case <-next:
			next = time.After(100 * time.Millisecond)
			if cl == nil || (maxBeats > 0 && beats >= maxBeats) {
				continue
			}
			if beats == 0 {
				record(name, "ready")
			}
			beats++
			h := bus.Health{Component: name, PID: os.Getpid(), Time: time.Now(), OK: true, Events: int64(beats), Detail: "serving"}
			if d := os.Getenv(envDegraded); d != "" {
				if strings.Contains(d, "%d") { // a running count, as the proxy's was
					d = fmt.Sprintf(d, beats)
				}
				h.Degraded = []string{d}
			}
			err := cl.PublishHealth(h)
			if err != nil {
				fmt.Fprintln(os.Stderr, "child: heartbeat:", err)
			}
		}
	}
}

func record(name, what string) {
	f, err := os.OpenFile(os.Getenv(envRecord), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: record:", err)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s %d %d\n", name, what, os.Getpid(), time.Now().UnixNano())
}

// rec is one line a child recorded.
type rec struct {
	name, what string
	pid        int
	at         time.Time
}

// readRecords returns the records in the order the children wrote them.
func readRecords(tb testing.TB, path string) []rec {
	tb.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []rec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue // a line being written right now
		}
		pid, err1 := strconv.Atoi(fields[2])
		ns, err2 := strconv.ParseInt(fields[3], 10, 64)
		if err1 != nil || err2 != nil {
			tb.Fatalf("bad record line %q", sc.Text())
		}
		out = append(out, rec{name: fields[0], what: fields[1], pid: pid, at: time.Unix(0, ns)})
	}
	return out
}

// only keeps the records of one kind ("start", "ready", "stop").
func only(recs []rec, what string) []rec {
	var out []rec
	for _, r := range recs {
		if r.what == what {
			out = append(out, r)
		}
	}
	return out
}

func names(recs []rec) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.name
	}
	return out
}

// testEnv is what a test's children share: the record file, the log dir and, optionally, a bus.
type testEnv struct {
	dir    string
	record string
	srv    *busserver.Server
	cl     *bus.Client // the supervisor's in-process connection
}

// newEnv makes a temp dir for logs and records; withBus also starts a real embedded bus.
func newEnv(tb testing.TB, withBus bool) *testEnv {
	tb.Helper()
	dir := tb.TempDir()
	e := &testEnv{dir: dir, record: filepath.Join(dir, "records")}
	if !withBus {
		return e
	}
	srv, err := busserver.Start(context.Background(), busserver.Config{Dir: filepath.Join(dir, "bus"), Port: -1, Token: testToken})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	cl, err := bus.Connect(context.Background(), bus.Options{Server: srv, Token: testToken, Name: "supervisor-test", Wait: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cl.Close)
	e.srv, e.cl = srv, cl
	return e
}

// spec returns a child spec running the test binary in mode; extra adds environment variables.
func (e *testEnv) spec(tb testing.TB, name, mode string, extra ...string) supervisor.Spec {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	env := []string{envMode + "=" + mode, envName + "=" + name, envRecord + "=" + e.record}
	if e.srv != nil {
		env = append(env, envBusURL+"="+e.srv.ClientURL(), envBusToken+"="+testToken)
	}
	// -test.run=^$ keeps a child that somehow lost its mode from running the tests again.
	return supervisor.Spec{Name: name, Path: exe, Args: []string{"-test.run=^$"}, Env: append(env, extra...)}
}

func (e *testEnv) options(specs ...supervisor.Spec) supervisor.Options {
	return supervisor.Options{Specs: specs, LogDir: filepath.Join(e.dir, "logs"), Bus: e.cl}
}

func (e *testEnv) records(tb testing.TB) []rec {
	tb.Helper()
	return readRecords(tb, e.record)
}

// running is a supervisor whose Run goroutine the test controls.
type running struct {
	*supervisor.Supervisor
	cancel context.CancelFunc
	done   chan error
}

// start runs a supervisor until the test stops it or ends.
func start(tb testing.TB, opts supervisor.Options) *running {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Supervisor: supervisor.New(opts), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- r.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(15 * time.Second):
			tb.Error("Run did not return after its context was cancelled")
		}
	})
	return r
}

// stop cancels Run's context and returns how long Run took to return.
func (r *running) stop(tb testing.TB, within time.Duration) time.Duration {
	tb.Helper()
	t0 := time.Now()
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			tb.Errorf("Run = %v, want nil", err)
		}
		r.done <- err // for the cleanup
	case <-time.After(within):
		tb.Fatalf("Run did not return within %v of the cancel", within)
	}
	return time.Since(t0)
}

// status returns one child's status.
func (r *running) status(tb testing.TB, name string) supervisor.ChildStatus {
	tb.Helper()
	for _, st := range r.Status() {
		if st.Name == name {
			return st
		}
	}
	tb.Fatalf("Status has no %q", name)
	return supervisor.ChildStatus{}
}

// waitStatus polls until cond holds for the child's status and returns that status.
func (r *running) waitStatus(tb testing.TB, name, what string, within time.Duration, cond func(supervisor.ChildStatus) bool) supervisor.ChildStatus {
	tb.Helper()
	within = max(within, time.Minute) // a bound on a hang, not a latency: a loaded machine is slow
	deadline := time.Now().Add(within)
	for {
		st := r.status(tb, name)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not %s within %v; last status %+v", name, what, within, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitRecords polls the record file until it holds n records of kind what.
func (e *testEnv) waitRecords(tb testing.TB, what string, n int, within time.Duration) []rec {
	tb.Helper()
	within = max(within, time.Minute)
	deadline := time.Now().Add(within)
	for {
		got := only(e.records(tb), what)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d %q records within %v, want %d: %v", len(got), what, within, n, e.records(tb))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alive reports whether a process with pid exists (and is not a reaped zombie).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}
