package supervisor_test

import (
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/supervisor"
	"github.com/observerhq/observer/internal/testlog"
	"github.com/observerhq/observer/pkg/bus"
)

func TestSupervisor_Run_StartsInOrderAfterHealthy(t *testing.T) {
	e := newEnv(t, true)
	// Each child waits before its first heartbeat, so a supervisor that did not wait for it would
	// start the next one long before the previous reported ready.
	var specs []supervisor.Spec
	for _, name := range []string{"a", "b", "c"} {
		specs = append(specs, e.spec(t, name, "heartbeat", envReadyDelay+"=200ms"))
	}
	opts := e.options(specs...)
	opts.ReadyTimeout = 10 * time.Second
	r := start(t, opts)

	e.waitRecords(t, "ready", 3, 10*time.Second)
	recs := e.records(t)
	starts, ready := only(recs, "start"), only(recs, "ready")
	if got := names(starts); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("start order %v, want [a b c]", got)
	}
	for i := 1; i < len(starts); i++ {
		prev := ready[slices.IndexFunc(ready, func(x rec) bool { return x.name == starts[i-1].name })]
		if !starts[i].at.After(prev.at) {
			t.Errorf("%s started %v before %s reported ready", starts[i].name, prev.at.Sub(starts[i].at), prev.name)
		}
	}
	// A child records "ready" just before its heartbeat reaches the supervisor: poll for the state.
	for _, name := range []string{"a", "b", "c"} {
		r.waitStatus(t, name, "running", 5*time.Second, func(st supervisor.ChildStatus) bool { return st.State == supervisor.StateRunning })
	}
}

func TestSupervisor_Run_RestartsWithBackoffThenCrashLoop(t *testing.T) {
	e := newEnv(t, false)
	opts := e.options(e.spec(t, "x", "exit1"))
	opts.BackoffBase = 20 * time.Millisecond
	opts.CrashLoopDelay = 500 * time.Millisecond
	r := start(t, opts)

	// Five quick exits: delays 20, 40, 80, 160 ms between them, then the crash-loop delay. (That
	// the delays double from BackoffBase is TestSupervisor_Run_BacksOffWhenChildCannotStart's.)
	st := r.waitStatus(t, "x", "crash-looping", 60*time.Second, func(st supervisor.ChildStatus) bool {
		return st.State == supervisor.StateCrashLoop
	})
	if st.Restarts != 5 {
		t.Errorf("Restarts = %d at the crash loop, want 5", st.Restarts)
	}
	if st.LastExit != "exit 1" {
		t.Errorf("LastExit = %q, want %q", st.LastExit, "exit 1")
	}
	if st.PID != 0 || st.Health != "down" {
		t.Errorf("crash-looping child shows pid %d, health %q; want 0, down", st.PID, st.Health)
	}

	// It is tried again after the crash-loop delay, and crash-loops again at once.
	starts := e.waitRecords(t, "start", 6, 5*time.Second)
	want := []time.Duration{20, 40, 80, 160, 500}
	for i, d := range want {
		gap := starts[i+1].at.Sub(starts[i].at)
		if gap < d*time.Millisecond {
			t.Errorf("start %d came %v after start %d, want at least %v", i+2, gap, i+1, d*time.Millisecond)
		}
	}
	r.waitStatus(t, "x", "crash-looping with 6 restarts", 5*time.Second, func(st supervisor.ChildStatus) bool {
		return st.State == supervisor.StateCrashLoop && st.Restarts == 6
	})
}

func TestSupervisor_Run_BacksOffWhenChildCannotStart(t *testing.T) {
	e := newEnv(t, false)
	opts := e.options(supervisor.Spec{Name: "missing", Path: filepath.Join(e.dir, "no-such-binary")})
	opts.BackoffBase = 50 * time.Millisecond
	opts.CrashLoopDelay = time.Hour
	t0 := time.Now()
	r := start(t, opts)

	st := r.waitStatus(t, "missing", "crash-looping", 60*time.Second, func(st supervisor.ChildStatus) bool {
		return st.State == supervisor.StateCrashLoop
	})
	// Four growing delays (50+100+200+400ms) come before the fifth failure. A backoff that never
	// grew would get there after 200ms.
	if d := time.Since(t0); d < 700*time.Millisecond {
		t.Errorf("crash-loop after %v, want at least 750ms of doubling backoff", d)
	}
	if st.Restarts != 5 {
		t.Errorf("Restarts = %d, want 5", st.Restarts)
	}
	if !strings.Contains(st.LastExit, "no-such-binary") {
		t.Errorf("LastExit = %q, want the start error naming the executable", st.LastExit)
	}
}

func TestSupervisor_Status(t *testing.T) {
	e := newEnv(t, true)
	// Five heartbeats 100ms apart after a 300ms pause, then silence while it keeps running.
	opts := e.options(e.spec(t, "w", "heartbeat", envReadyDelay+"=300ms", envBeats+"=5"))
	opts.HealthTTL = 300 * time.Millisecond
	opts.BackoffBase = time.Minute // stay down once it exits
	s := supervisor.New(opts)
	if st := s.Status(); len(st) != 1 || st[0].State != supervisor.StateStopped || st[0].Health != "down" {
		t.Fatalf("Status before Run = %+v, want one stopped child, health down", st)
	}
	r := start(t, opts)

	st := r.waitStatus(t, "w", "starting", 5*time.Second, func(st supervisor.ChildStatus) bool { return st.PID != 0 })
	if st.State != supervisor.StateStarting || st.Health != "unknown" {
		t.Errorf("before its first heartbeat: state %q health %q, want starting, unknown", st.State, st.Health)
	}
	// A heartbeat under its name from another pid (an older run) does not count.
	if err := e.cl.PublishHealth(bus.Health{Component: "w", PID: st.PID + 1, Time: time.Now(), OK: true, Events: 999}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if st := r.status(t, "w"); st.Events == 999 {
		t.Errorf("a heartbeat from pid %d was taken for the child's (pid %d): %+v", st.PID+1, st.PID, st)
	}
	st = r.waitStatus(t, "w", "healthy", 5*time.Second, func(st supervisor.ChildStatus) bool { return st.Health == "ok" })
	pid := e.waitRecords(t, "start", 1, time.Second)[0].pid
	if st.PID != pid || st.State != supervisor.StateRunning {
		t.Errorf("healthy child: pid %d state %q, want pid %d, running", st.PID, st.State, pid)
	}
	if st.StartedAt.IsZero() || st.UptimeS <= 0 || st.Events < 1 {
		t.Errorf("healthy child: started_at %v uptime %v events %d, want them set", st.StartedAt, st.UptimeS, st.Events)
	}

	st = r.waitStatus(t, "w", "unhealthy", 5*time.Second, func(st supervisor.ChildStatus) bool { return st.Health != "ok" })
	if st.Health != "unhealthy" || st.State != supervisor.StateRunning || st.PID != pid {
		t.Errorf("silent child: health %q state %q pid %d, want unhealthy, running, %d", st.Health, st.State, st.PID, pid)
	}
	if st.Events != 5 {
		t.Errorf("silent child: events %d, want 5 from its last heartbeat", st.Events)
	}

	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Between the child's exit (stopped) and the supervisor scheduling its restart (backoff) there
	// is a moment: wait for the restart to be scheduled.
	st = r.waitStatus(t, "w", "down", 5*time.Second, func(st supervisor.ChildStatus) bool {
		return st.Health == "down" && st.State != supervisor.StateStopped
	})
	if st.State != supervisor.StateBackoff || st.PID != 0 || st.LastExit != "exit 0" || st.Restarts != 1 {
		t.Errorf("exited child: state %q pid %d last_exit %q restarts %d, want backoff, 0, exit 0, 1",
			st.State, st.PID, st.LastExit, st.Restarts)
	}
}

// A child whose heartbeats say ok but list something that does not work (an OTLP listener whose
// port another program holds) is degraded, not healthy, and its detail says what is wrong first.
func TestSupervisor_Status_Degraded(t *testing.T) {
	e := newEnv(t, true)
	const problem = "otlp/http listener 127.0.0.1:4318: address already in use"
	r := start(t, e.options(e.spec(t, "p", "heartbeat", envDegraded+"="+problem)))
	st := r.waitStatus(t, "p", "reporting", 10*time.Second, func(st supervisor.ChildStatus) bool { return st.Events > 0 })
	if st.Health != "degraded" || st.State != supervisor.StateRunning {
		t.Errorf("health %q state %q, want degraded, running", st.Health, st.State)
	}
	if len(st.Problems) != 1 || st.Problems[0] != problem {
		t.Errorf("problems %q, want [%q]", st.Problems, problem)
	}
	if want := problem + "; serving"; st.Detail != want {
		t.Errorf("detail %q, want %q", st.Detail, want)
	}
}

// A child whose problem says the same at every heartbeat but for a count (a running total of what
// it could not record) is logged as degraded once, not at each heartbeat: on a full disk that was a
// warning a second, written to the full disk.
func TestSupervisor_Run_LogsDegradedOnce(t *testing.T) {
	e := newEnv(t, true)
	var logs testlog.Buffer
	opts := e.options(e.spec(t, "p", "heartbeat", envDegraded+"=%d turns not recorded: disk full"))
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	r := start(t, opts)
	st := r.waitStatus(t, "p", "ten heartbeats", 20*time.Second, func(st supervisor.ChildStatus) bool { return st.Events >= 10 })
	if st.Health != "degraded" || len(st.Problems) != 1 || !strings.HasSuffix(st.Problems[0], " turns not recorded: disk full") {
		t.Errorf("health %q problems %q, want degraded with the count", st.Health, st.Problems)
	}
	if n := strings.Count(logs.String(), "component is degraded"); n != 1 {
		t.Errorf("%d log lines for %d heartbeats whose problem differed only in its count, want 1:\n%s", n, st.Events, logs.String())
	}
}

// A child that exits with an error line on stderr, as every observer binary does, has that line in
// its last exit: status names the address and the error, not only "exit 1".
func TestSupervisor_Run_LastExitNamesTheError(t *testing.T) {
	e := newEnv(t, false)
	opts := e.options(e.spec(t, "x", "fail-listen"))
	opts.BackoffBase = time.Minute
	r := start(t, opts)
	st := r.waitStatus(t, "x", "exited", 10*time.Second, func(st supervisor.ChildStatus) bool { return st.LastExit != "" })
	want := "exit 1: listen on 127.0.0.1:8820: listen tcp 127.0.0.1:8820: bind: address already in use"
	if st.LastExit != want {
		t.Errorf("LastExit = %q, want %q", st.LastExit, want)
	}
}

func TestSupervisor_Restart(t *testing.T) {
	e := newEnv(t, true)
	r := start(t, e.options(e.spec(t, "w", "heartbeat")))

	old := r.waitStatus(t, "w", "healthy", 5*time.Second, func(st supervisor.ChildStatus) bool { return st.Health == "ok" })
	if err := r.Restart("w"); err != nil {
		t.Fatalf("Restart(w) = %v", err)
	}
	st := r.waitStatus(t, "w", "healthy with a new pid", 5*time.Second, func(st supervisor.ChildStatus) bool {
		return st.Health == "ok" && st.PID != old.PID
	})
	if st.Restarts != 1 {
		t.Errorf("Restarts = %d, want 1", st.Restarts)
	}
	stops := only(e.records(t), "stop")
	if len(stops) != 1 || stops[0].pid != old.PID {
		t.Errorf("stop records %v, want one from the old pid %d (it was sent SIGTERM)", stops, old.PID)
	}
	if alive(old.PID) {
		t.Errorf("old pid %d still exists after the restart", old.PID)
	}

	err := r.Restart("nope")
	if !errors.Is(err, supervisor.ErrUnknownComponent) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Restart(nope) = %v, want ErrUnknownComponent naming it", err)
	}
}

func TestSupervisor_Run_StopsInReverseOrder(t *testing.T) {
	e := newEnv(t, true)
	opts := e.options(
		e.spec(t, "a", "heartbeat"),
		e.spec(t, "b", "ignore-term"),
		e.spec(t, "c", "heartbeat"),
	)
	const grace = 2 * time.Second // a child that handles SIGTERM exits well within it, even under -race on a loaded machine
	opts.Grace = grace
	r := start(t, opts)
	pids := map[string]int{}
	for _, name := range []string{"a", "b", "c"} {
		pids[name] = r.waitStatus(t, name, "healthy", 10*time.Second, func(st supervisor.ChildStatus) bool { return st.Health == "ok" }).PID
	}

	took := r.stop(t, 10*time.Second)
	if got := names(only(e.records(t), "stop")); !slices.Equal(got, []string{"c", "b", "a"}) {
		t.Errorf("SIGTERM order %v, want [c b a]", got)
	}
	if took < grace {
		t.Errorf("Run returned %v after the cancel, before b's grace period of %v ran out", took, grace)
	}
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) still exists after Run returned", name, pid)
		}
	}
	want := map[string]string{"a": "exit 0", "b": "killed by SIGKILL (9)", "c": "exit 0"}
	for _, st := range r.Status() {
		if st.LastExit != want[st.Name] || st.State != supervisor.StateStopped {
			t.Errorf("%s: last exit %q state %q, want %q, stopped", st.Name, st.LastExit, st.State, want[st.Name])
		}
	}
}

// A spec's Nice lowers that child's CPU priority, and only that child's.
func TestSupervisor_Nice(t *testing.T) {
	e := newEnv(t, true)
	low := e.spec(t, "low", "heartbeat")
	low.Nice = 10
	r := start(t, e.options(low, e.spec(t, "normal", "heartbeat")))
	prio := func(name string) int {
		st := r.waitStatus(t, name, "running", 10*time.Second, func(st supervisor.ChildStatus) bool { return st.PID != 0 })
		n, err := syscall.Getpriority(syscall.PRIO_PROCESS, st.PID)
		if err != nil {
			t.Fatal(err)
		}
		return n // Linux answers 20 - nice, other systems the nice value: compare the two children
	}
	// 10 below the supervisor's own, or as far as nice 19 allows when the test itself runs niced
	// (`nice make test`).
	own, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := min(10, 19-(20-own))
	if d := prio("low") - prio("normal"); d != want && d != -want {
		t.Errorf("the niced child's priority differs from the other's by %d, want %d", d, want)
	}
}
