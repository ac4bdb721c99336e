package e2e

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/observerhq/observer/internal/fakeapi"
	"github.com/observerhq/observer/pkg/bus"
)

// TestChaos_DiskAndBus (issue 29) is TestChaos's run with a fault injector beside the killer. The
// same load and the same ledgers; two faults, one after the other, each until the suite is
// healthy again:
//
//   - disk: the suite's home (OBSERVER_HOME: store, stream, spool, proxy journal, logs) is a small
//     tmpfs (OBSERVER_CHAOS_TMPFS_MB, 128 MiB in the short mode), mounted by the test, which needs
//     root (CI runs as root). A fault fills it with a file (fillDisk: to its last 512 bytes) for
//     OBSERVER_CHAOS_DISK_HOLD, then deletes the file. Where no tmpfs can be mounted (not root, no
//     mount allowed) the disk fault is skipped, the reason logged and reported, and the run goes on
//     with the overflow alone. The clients' HOME (transcripts, Claude Code's and Codex's files) stays
//     off the tmpfs, in the suite's temporary directory: only observer's disk fills.
//   - overflow: the stream is bounded at 1 MiB ([bus] max_bytes through OBSERVER_BUS_MAX_BYTES); a
//     fault stops the writer (SIGSTOP) until status says the stream is full, holds
//     OBSERVER_CHAOS_BUS_HOLD more so the producers spool, then continues it (SIGCONT). The
//     supervisor does not restart a stopped child: its heartbeats stop and status shows it
//     unhealthy, nothing more (a child is restarted only when it exits); the writer's consumer
//     waits out its missed heartbeats on the same iterator. So a pause explains no restart: any
//     restart during a fault fails the run.
//
// Kills and faults never overlap: the killer and the injector take turns (chaosRun.faultMu), each
// holding the turn until the suite is healthy again. The proxy and the supervisor are not killed
// in this run: the proxy's count of the turns it could not record lives in its process, and a
// kill would take the count with the turns it counts (OBSERVER_CHAOS_KILL naming the proxy, or a
// non-zero OBSERVER_CHAOS_SUPERVISOR_EVERY, is refused). The killer kills the writer, the watcher
// and the dashboard. The load runs for the mode's duration (2 minutes in the short mode), and on
// until each fault has run once.
//
// Checks, beside TestChaos's (which still hold: transcripts, Claude Code's among them, stored
// exactly once; no client request or run may fail, since no proxy is killed; no restart that no
// kill explains):
//   - during each fault, a status sampled in it says so: a disk fault shows a component's "disk
//     full" (or the proxy's turns that may not have been recorded), an overflow the bus's "stream
//     full"; after it, every component is healthy again with no restart and no new pid.
//   - proxy: a served response without its api_turn is allowed only when it was served within a
//     disk-full window (from the start of the fill to the filler's removal, faultSlack either
//     side), and all of those together must not exceed what the proxy counted as "turns not
//     confirmed recorded" (its status detail, read at the end).
//   - hooks: a call that exited 1 (neither published nor spooled) is allowed only when it ran in a
//     disk-full window; it is counted apart. Every call that exited 0 is stored.
//   - MCP wrap: it answers every call whatever becomes of the call's event, and logs an event it
//     could neither publish nor spool ("mcp_call event lost"; also "events still queued at exit
//     were not published"). A call missing from the store is allowed only when its wrap process
//     ran in a disk-full window and logged at least as many losses as its session misses; a wrap
//     that logs a loss outside a disk-full window fails the run.
//   - overflow: every event seen in the spool while the writer was stopped is stored in the end.
//
// The report adds, per fault, what status said and when, how long the suite took to be healthy
// again, and for the disk faults the turns served in the window, recorded, recorded only after the
// space was freed, not recorded, and the proxy's count; for the overflows the events spooled by
// each producer and how many of them are stored.
//
// It runs when TestChaos does (OBSERVER_CHAOS=short|chaos|soak, or CI=true for the short form),
// with the same OBSERVER_CHAOS_* settings, and OBSERVER_CHAOS_FAULTS (disk,overflow),
// OBSERVER_CHAOS_FAULT_EVERY (mean pause between faults), _DISK_HOLD, _BUS_HOLD, _TMPFS_MB.
// scripts/chaos --faults runs it.
func TestChaos_DiskAndBus(t *testing.T) {
	cfg, ok := chaosConfigFromEnv(t)
	if !ok {
		t.Skip("chaos test with faults: set OBSERVER_CHAOS=short|chaos|soak (runs short under CI=true); scripts/chaos --faults runs it")
	}
	f := faultConfigFromEnv(t, &cfg)
	t.Logf("chaos with faults: mode %s, load %v, %.0f proxy req/s, kill every %v %v, faults %v every %v (disk held %v, writer stopped until the stream is full + %v), seed %d",
		cfg.mode, cfg.load, cfg.rate, cfg.killEvery, cfg.targets, f.kinds, f.every, f.diskHold, f.busHold, cfg.seed)
	runChaos(t, cfg, f)
}

// faultSlack widens a disk-full window on both sides when judging a loss: a batch the proxy
// published just before the fill may wait for its ack into the fill, and a hook that began just
// before the filler was removed may still fail.
const faultSlack = 3 * time.Second

// faultBusMaxBytes bounds the stream in the fault run: [bus] max_bytes's least value.
const faultBusMaxBytes = 1 << 20

// faultRun is the injector's settings and what it did.
type faultRun struct {
	kinds       []string // faults to inject, in turn: disk, overflow
	every       time.Duration
	diskHold    time.Duration
	busHold     time.Duration
	busFullWait time.Duration // longest wait for the stream to fill with the writer stopped
	tmpfsMB     int64
	rng         *rand.Rand // the injector's own

	home     string // the tmpfs holding the suite's home; "" without the disk fault
	diskSkip string // why the disk fault was skipped
	db       *sql.DB

	firstRound chan struct{} // closed once each kind ran once
	firstOnce  sync.Once

	mu        sync.Mutex
	recs      []*faultRec
	finalNR   int // the proxy's "turns not confirmed recorded" at the end
	finalNROK bool
}

// faultRec is one fault.
type faultRec struct {
	kind      string
	n         int
	from, to  time.Time     // disk: the fill began .. the filler was removed; overflow: SIGSTOP .. SIGCONT
	seen      string        // what status said of the fault while it lasted
	seenAfter time.Duration // from `from`
	recovered time.Duration // from `to` until every component was healthy again; -1: not within the wait
	failures  []string
	notes     []string

	// disk
	filled       time.Time       // the filler written
	nrBefore     int             // the proxy's count of turns not confirmed recorded before the fault
	nrAfter      int             // and once the suite was healthy again
	storedAtFree map[string]bool // api_turns' message ids stored when the filler was removed
	turnsLost    int             // served in the window (with slack), not stored
	hooksFailed  []string        // tool_use ids of the hook calls that exited 1 in the window
	mcpLost      int             // mcp calls missing, allowed by their wrap's count
	mcpReported  int             // what the wraps of the window said they lost

	// overflow
	writerPID int
	spooled   map[string]spooledEvent // by event id: seen in the spool while the writer was stopped
}

type spooledEvent struct{ kind, source string }

func (rec *faultRec) failf(format string, args ...any) {
	rec.failures = append(rec.failures, fmt.Sprintf(format, args...))
}

func faultConfigFromEnv(tb testing.TB, cfg *chaosConfig) *faultRun {
	tb.Helper()
	if os.Getenv("OBSERVER_CHAOS_KILL") == "" {
		cfg.targets = []string{"writer", "watch", "dash"}
	} else if slices.Contains(cfg.targets, "proxy") {
		tb.Fatalf("OBSERVER_CHAOS_KILL=%q: the fault run does not kill the proxy: its count of the turns it could not record lives in its process, and the checks read it at the end",
			os.Getenv("OBSERVER_CHAOS_KILL"))
	}
	if os.Getenv("OBSERVER_CHAOS_SUPERVISOR_EVERY") != "" && cfg.supervisorEvery != 0 {
		tb.Fatalf("OBSERVER_CHAOS_SUPERVISOR_EVERY=%d: the fault run does not kill the supervisor (the proxy would die with it, and its count of the turns it could not record)",
			cfg.supervisorEvery)
	}
	cfg.supervisorEvery = 0
	f := &faultRun{kinds: []string{"disk", "overflow"}, diskHold: 8 * time.Second, busHold: 5 * time.Second,
		busFullWait: 2 * time.Minute, firstRound: make(chan struct{}), rng: rand.New(rand.NewPCG(cfg.seed, 29))}
	switch cfg.mode {
	case "short":
		if os.Getenv("OBSERVER_CHAOS_DURATION") == "" {
			cfg.load = 2 * time.Minute
		}
		f.every, f.tmpfsMB = 10*time.Second, 128
	case "chaos":
		f.every, f.tmpfsMB = 30*time.Second, 512
	default:
		f.every, f.tmpfsMB = 2*time.Minute, 2048
	}
	env := func(name string, parse func(string) error) {
		if v := os.Getenv("OBSERVER_CHAOS_" + name); v != "" {
			if err := parse(v); err != nil {
				tb.Fatalf("OBSERVER_CHAOS_%s=%q: %v", name, v, err)
			}
		}
	}
	dur := func(p *time.Duration) func(string) error {
		return func(v string) (err error) {
			if *p, err = time.ParseDuration(v); err == nil && *p <= 0 {
				err = errors.New("must be positive")
			}
			return err
		}
	}
	env("FAULTS", func(v string) error {
		f.kinds = nil
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k == "" {
				continue
			}
			if k != "disk" && k != "overflow" {
				return fmt.Errorf("unknown fault %q (disk, overflow)", k)
			}
			if !slices.Contains(f.kinds, k) {
				f.kinds = append(f.kinds, k)
			}
		}
		if len(f.kinds) == 0 {
			return errors.New("no fault named (disk, overflow)")
		}
		return nil
	})
	env("FAULT_EVERY", dur(&f.every))
	env("DISK_HOLD", dur(&f.diskHold))
	env("BUS_HOLD", dur(&f.busHold))
	env("TMPFS_MB", func(v string) (err error) {
		if f.tmpfsMB, err = strconv.ParseInt(v, 10, 64); err == nil && f.tmpfsMB < 32 {
			err = errors.New("at least 32 (the store, the stream and the logs live there)")
		}
		return err
	})
	return f
}

// suiteEnv mounts the tmpfs for the disk fault (before newSuite, so that it is unmounted after
// the suite has stopped) and returns the suite's environment for the faults.
func (f *faultRun) suiteEnv(tb testing.TB) []string {
	if f == nil {
		return nil
	}
	tb.Helper()
	var env []string
	if slices.Contains(f.kinds, "disk") {
		home, why := tryMountTmpfs(tb, f.tmpfsMB<<20)
		if why != "" {
			f.diskSkip = why
			f.kinds = slices.DeleteFunc(f.kinds, func(k string) bool { return k == "disk" })
			tb.Logf("disk fault skipped: %s; the run goes on without it", why)
		} else {
			f.home = home
			env = append(env, "OBSERVER_HOME="+home)
		}
	}
	// The smallest bound a stream may have: it fills within seconds with the writer stopped; and
	// a tmpfs of a few hundred MB holds it (the bus refuses a bound its disk cannot hold).
	return append(env, fmt.Sprintf("OBSERVER_BUS_MAX_BYTES=%d", faultBusMaxBytes))
}

// adopt moves the suite's home to the tmpfs, when there is one (the suite's temporary directory
// keeps the clients' HOME).
func (f *faultRun) adopt(s *suite) {
	if f == nil {
		return
	}
	if f.home != "" {
		s.home = f.home
	}
	f.db = s.db()
}

// loadContext ends the load once the mode's time is over and each fault has run once.
func (f *faultRun) loadContext(r *chaosRun) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-time.After(r.cfg.load):
		case <-ctx.Done():
			return
		}
		select {
		case <-f.firstRound:
		case <-time.After(15 * time.Minute):
			r.t.Logf("the faults' first round did not end 15 minutes after the load time: ending the load")
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx, cancel
}

func (f *faultRun) firstRoundDone() { f.firstOnce.Do(func() { close(f.firstRound) }) }

// inject runs the faults in turn, one every f.every (jittered ±50%) after the suite is healthy
// again, until ctx ends. It holds the turn (r.faultMu) from the start of a fault until the suite
// is healthy after it. No new fault starts in the last 20 s of the load time once each ran.
func (f *faultRun) inject(ctx context.Context, r *chaosRun) {
	defer f.firstRoundDone()
	if len(f.kinds) == 0 {
		return
	}
	end := r.start.Add(r.cfg.load)
	for i := 0; ; i++ {
		gap := f.every/2 + time.Duration(f.rng.Int64N(int64(f.every)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(gap):
		}
		if i >= len(f.kinds) && time.Until(end) < 20*time.Second {
			<-ctx.Done()
			return
		}
		rec := &faultRec{kind: f.kinds[i%len(f.kinds)], n: i + 1}
		f.mu.Lock()
		f.recs = append(f.recs, rec)
		f.mu.Unlock()
		r.faultMu.Lock()
		if before, ok := f.waitHealthy(r, rec, "before the fault"); ok {
			switch rec.kind {
			case "disk":
				f.disk(ctx, r, rec, before)
			case "overflow":
				f.overflow(ctx, r, rec, before)
			}
		}
		r.faultMu.Unlock()
		if i+1 == len(f.kinds) {
			f.firstRoundDone()
		}
	}
}

// faultStatus is `observerctl status --json` with what the injector reads.
type faultStatus struct {
	Components []struct {
		Name     string `json:"name"`
		PID      int    `json:"pid"`
		State    string `json:"state"`
		Health   string `json:"health"`
		Restarts int    `json:"restarts"`
		LastExit string `json:"last_exit"`
		Detail   string `json:"detail"`
	} `json:"components"`
}

// fullStatus returns the status and whether every component is healthy (exit 0).
func (r *chaosRun) fullStatus() (faultStatus, bool) {
	cmd := exec.Command(r.s.bin("observerctl"), "status", "--json")
	cmd.Env = r.s.env
	out, err := cmd.Output()
	var st faultStatus
	json.Unmarshal(out, &st)
	return st, err == nil && len(st.Components) > 0
}

func (st faultStatus) summary() string {
	var parts []string
	for _, c := range st.Components {
		s := c.Name + " " + c.Health
		if c.Health != "ok" && c.Detail != "" {
			s += " (" + truncate(c.Detail, 160) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// proxyNotRecorded reads the proxy's count of turns not confirmed recorded from its detail.
func (st faultStatus) proxyNotRecorded() (int, bool) {
	for _, c := range st.Components {
		if c.Name != "proxy" || !proxyTurnsRE.MatchString(c.Detail) {
			continue
		}
		n := 0
		if m := proxyNotRecordedRE.FindStringSubmatch(c.Detail); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return n, true
	}
	return 0, false
}

// waitHealthy waits until every component is healthy: up to 2 minutes, and the 30 s the proxy
// stays degraded after its last turn not recorded (bus.LossRecently).
func (f *faultRun) waitHealthy(r *chaosRun, rec *faultRec, when string) (faultStatus, bool) {
	d := patient(0) + bus.LossRecently
	deadline := time.Now().Add(d)
	for {
		st, ok := r.fullStatus()
		if ok {
			return st, true
		}
		if time.Now().After(deadline) {
			rec.failf("%s: the suite was not healthy within %v: %s", when, d, st.summary())
			return st, false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// noRestarts fails rec for each component whose pid or restart count changed from before to after.
func (rec *faultRec) noRestarts(before, after faultStatus) {
	for _, b := range before.Components {
		for _, a := range after.Components {
			if a.Name == b.Name && (a.PID != b.PID || a.Restarts != b.Restarts) {
				rec.failf("%s restarted (pid %d -> %d, restarts %d -> %d, last exit %q; see logs/%s.log)",
					a.Name, b.PID, a.PID, b.Restarts, a.Restarts, a.LastExit, a.Name)
			}
		}
	}
}

// disk fills the tmpfs for f.diskHold, sampling status, then removes the filler and waits until
// the suite is healthy again.
func (f *faultRun) disk(ctx context.Context, r *chaosRun, rec *faultRec, before faultStatus) {
	rec.nrBefore, _ = before.proxyNotRecorded()
	rec.from = time.Now()
	filler, err := fillDiskErr(f.home)
	rec.filled = time.Now()
	if err != nil {
		rec.failf("fill the disk: %v", err)
	}
	r.t.Logf("fault %d: disk full at +%v (filled in %v)", rec.n, rec.from.Sub(r.start).Round(time.Millisecond), rec.filled.Sub(rec.from).Round(time.Millisecond))
	for err == nil && time.Since(rec.from) < f.diskHold && ctx.Err() == nil {
		if rec.seen == "" {
			st, _ := r.fullStatus()
			for _, c := range st.Components {
				if strings.Contains(c.Detail, "disk full") || strings.Contains(c.Detail, "may not have been recorded") {
					rec.seen, rec.seenAfter = c.Name+" "+c.Health+": "+truncate(c.Detail, 200), time.Since(rec.from)
					break
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	rec.storedAtFree = f.turnIDs()
	if filler != "" {
		if err := os.Remove(filler); err != nil {
			rec.failf("remove the filler: %v", err)
		}
	}
	rec.to = time.Now()
	if rec.seen == "" && err == nil {
		rec.failf("no status sampled in the %v the disk was full said so (no \"disk full\", no turns that may not have been recorded)",
			rec.to.Sub(rec.from).Round(time.Millisecond))
	}
	after, ok := f.waitHealthy(r, rec, "after the disk was freed")
	rec.recovered = -1
	if ok {
		rec.recovered = time.Since(rec.to)
	}
	rec.noRestarts(before, after)
	rec.nrAfter, _ = after.proxyNotRecorded()
	r.t.Logf("fault %d: disk freed at +%v, healthy again %v later; status said %q after %v",
		rec.n, rec.to.Sub(r.start).Round(time.Millisecond), rec.recovered.Round(time.Millisecond), truncate(rec.seen, 100), rec.seenAfter.Round(time.Millisecond))
}

// turnIDs returns the message ids of the api_turns stored now.
func (f *faultRun) turnIDs() map[string]bool {
	m := map[string]bool{}
	ids, err := counts(f.db, "SELECT message_id, 1 FROM api_turns WHERE message_id != ''")
	if err == nil {
		for id := range ids {
			m[id] = true
		}
	}
	return m
}

// overflow stops the writer until status says the stream is full, then f.busHold more, then
// continues it and waits until the suite is healthy again.
func (f *faultRun) overflow(ctx context.Context, r *chaosRun, rec *faultRec, before faultStatus) {
	for _, c := range before.Components {
		if c.Name == "writer" {
			rec.writerPID = c.PID
		}
	}
	if rec.writerPID == 0 {
		rec.failf("no writer pid in status: %s", before.summary())
		return
	}
	rec.spooled = map[string]spooledEvent{}
	rec.from = time.Now()
	if err := syscall.Kill(rec.writerPID, syscall.SIGSTOP); err != nil {
		rec.failf("SIGSTOP the writer (pid %d): %v", rec.writerPID, err)
		return
	}
	r.t.Logf("fault %d: writer (pid %d) stopped at +%v", rec.n, rec.writerPID, rec.from.Sub(r.start).Round(time.Millisecond))
	var full time.Time
	for {
		f.sampleSpool(r, rec)
		if full.IsZero() {
			st, _ := r.fullStatus()
			for _, c := range st.Components {
				if c.Name == "bus" && strings.Contains(c.Detail, "stream full") {
					full, rec.seen, rec.seenAfter = time.Now(), c.Name+" "+c.Health+": "+truncate(c.Detail, 200), time.Since(rec.from)
				}
			}
		}
		if !full.IsZero() && time.Since(full) >= f.busHold {
			break
		}
		if full.IsZero() && time.Since(rec.from) > f.busFullWait {
			rec.failf("the stream was not full %v after the writer stopped (status: no \"stream full\")", f.busFullWait)
			break
		}
		if full.IsZero() && ctx.Err() != nil {
			rec.notes = append(rec.notes, "the load ended before the stream was full")
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	rec.to = time.Now()
	if err := syscall.Kill(rec.writerPID, syscall.SIGCONT); err != nil {
		rec.failf("SIGCONT the writer (pid %d): %v", rec.writerPID, err)
	}
	after, ok := f.waitHealthy(r, rec, "after the writer continued")
	rec.recovered = -1
	if ok {
		rec.recovered = time.Since(rec.to)
	}
	rec.noRestarts(before, after)
	r.t.Logf("fault %d: writer continued at +%v, healthy again %v later; %d events seen spooled; status said %q after %v",
		rec.n, rec.to.Sub(r.start).Round(time.Millisecond), rec.recovered.Round(time.Millisecond), len(rec.spooled), truncate(rec.seen, 100), rec.seenAfter.Round(time.Millisecond))
}

// sampleSpool adds the events in the spool files now to rec.spooled. A line cut short (being
// written) is skipped; it is read at the next sample.
func (f *faultRun) sampleSpool(r *chaosRun, rec *faultRec) {
	files, _ := filepath.Glob(filepath.Join(r.s.home, "spool", "*.jsonl"))
	for _, path := range files {
		fh, err := os.Open(path)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, bus.MaxPayload+1024)
		for sc.Scan() {
			var ev struct{ ID, Kind, Source string }
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.ID != "" {
				rec.spooled[ev.ID] = spooledEvent{kind: ev.Kind, source: ev.Source}
			}
		}
		fh.Close()
	}
}

// diskWindow returns the disk fault whose window (with faultSlack) overlaps [from, to].
func (f *faultRun) diskWindow(from, to time.Time) *faultRec {
	for _, rec := range f.recs {
		if rec.kind == "disk" && !rec.from.IsZero() && !rec.to.IsZero() &&
			!from.After(rec.to.Add(faultSlack)) && !to.Before(rec.from.Add(-faultSlack)) {
			return rec
		}
	}
	return nil
}

// allowTurn reports whether a served response that has no api_turn was served in a disk-full
// window, and counts it there.
func (f *faultRun) allowTurn(req fakeapi.Request) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec := f.diskWindow(req.Time, req.Time); rec != nil {
		rec.turnsLost++
		return true
	}
	return false
}

// allowHook reports whether a hook call that failed exited 1 in a disk-full window, and counts it there.
func (f *faultRun) allowHook(h hookFailure) bool {
	if f == nil || h.code != 1 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec := f.diskWindow(h.from, h.to); rec != nil {
		rec.hooksFailed = append(rec.hooksFailed, h.id)
		return true
	}
	return false
}

// allowMCP takes out of the mcp row's missing the calls of wrap processes that ran in a disk-full
// window and logged at least as many losses, and fails a wrap that logged a loss outside one.
func (f *faultRun) allowMCP(row producerRow, missing []string, runs map[string]mcpRun, rep *chaosReport) (producerRow, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bySession := map[string]int{}
	for _, k := range missing {
		session, _, _ := strings.Cut(k, "/")
		bySession[session]++
	}
	var still []string
	for _, k := range missing {
		session, _, _ := strings.Cut(k, "/")
		run, ok := runs[session]
		if rec := f.diskWindow(run.from, run.to); ok && rec != nil && bySession[session] <= run.lost {
			row.missing--
			row.allowed++
			rec.mcpLost++
			continue
		}
		still = append(still, k)
	}
	for session, run := range runs {
		if run.lost == 0 {
			continue
		}
		if rec := f.diskWindow(run.from, run.to); rec != nil {
			rec.mcpReported += run.lost
		} else {
			rep.failf("mcp wrap %s (+%v..+%v) logged %d mcp_call events not recorded, outside any disk-full window",
				session, run.from.Sub(f.recsStart()).Round(time.Millisecond), run.to.Sub(f.recsStart()).Round(time.Millisecond), run.lost)
		}
	}
	return row, still
}

// recsStart is a time origin for messages: the first fault's start, or now.
func (f *faultRun) recsStart() time.Time {
	if len(f.recs) > 0 && !f.recs[0].from.IsZero() {
		return f.recs[0].from
	}
	return time.Now()
}

// eventTables is where each kind of event is stored, by event id.
var eventTables = map[string]string{
	"action": "actions", "token_usage": "token_usage", "api_turn": "api_turns", "compression": "compression_events",
	"session": "session_events", "hook": "hook_events", "mcp_call": "mcp_calls",
}

// check adds the faults' failures to rep and works out the report's figures.
func (f *faultRun) check(r *chaosRun, rep *chaosReport) {
	if f == nil {
		return
	}
	st, _ := r.fullStatus()
	nr, ok := st.proxyNotRecorded()
	db := r.s.db()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finalNR, f.finalNROK = nr, ok
	ran := map[string]bool{}
	lost := 0
	for _, rec := range f.recs {
		ran[rec.kind] = true
		at := max(0, rec.from.Sub(r.start)).Round(time.Millisecond)
		for _, msg := range rec.failures {
			rep.failf("%s fault %d at +%v: %s", rec.kind, rec.n, at, msg)
		}
		lost += rec.turnsLost
		if rec.kind == "overflow" {
			for id, ev := range rec.spooled {
				table := eventTables[ev.kind]
				if table == "" {
					continue
				}
				if countOf(db, "SELECT count(*) FROM "+table+" WHERE event_id = '"+strings.ReplaceAll(id, "'", "''")+"'") != 1 {
					rep.failf("overflow fault %d at +%v: the %s event %s (from %s) was seen in the spool and is not stored once", rec.n, at, ev.kind, id, ev.source)
				}
			}
		}
	}
	for _, k := range f.kinds {
		if !ran[k] {
			rep.failf("the %s fault never ran (the load ended before its turn)", k)
		}
	}
	if !ok {
		rep.failf("the proxy's status detail gives no turn counts at the end: %s", st.summary())
	} else if lost > nr {
		rep.failf("%d turns served in disk-full windows are not stored, but the proxy counted %d as not confirmed recorded: %d lost without a word",
			lost, nr, lost-nr)
	}
}

// diskFigures are a disk fault's turns: served in the window (without slack), recorded in the
// end, of which recorded only after the filler was removed.
func (f *faultRun) diskFigures(r *chaosRun, rec *faultRec, turns map[string]bool) (served, recorded, after int) {
	for _, req := range r.fake.Requests() {
		if req.Method != "POST" || req.ResponseID == "" || req.Status != 200 || req.Time.Before(rec.from) || req.Time.After(rec.to) {
			continue
		}
		served++
		if turns[req.ResponseID] {
			recorded++
			if !rec.storedAtFree[req.ResponseID] {
				after++
			}
		}
	}
	return served, recorded, after
}

// report writes the faults' section of the report.
func (f *faultRun) report(b *strings.Builder, r *chaosRun) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(b, "\n== faults: %v, one every %v (±50%%) once the suite is healthy again\n", f.kinds, f.every)
	if f.home != "" {
		used := "?"
		var fs syscall.Statfs_t
		if syscall.Statfs(f.home, &fs) == nil {
			used = bus.HumanBytes(int64(fs.Blocks-fs.Bfree) * fs.Bsize)
		}
		fmt.Fprintf(b, "disk: the home on a %d MiB tmpfs (%s used at the end), filled for %v; ", f.tmpfsMB, used, f.diskHold)
	} else if f.diskSkip != "" {
		fmt.Fprintf(b, "disk: SKIPPED (%s); ", f.diskSkip)
	}
	fmt.Fprintf(b, "overflow: [bus] max_bytes %s, the writer stopped until the stream is full, then %v more\n", bus.HumanBytes(faultBusMaxBytes), f.busHold)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "#\tfault\tat\tlasted\tstatus said (after)\thealthy again after\tresult\t")
	for _, rec := range f.recs {
		result := "ok"
		if len(rec.failures) > 0 {
			result = fmt.Sprintf("%d failures", len(rec.failures))
		}
		if len(rec.notes) > 0 {
			result += " (" + strings.Join(rec.notes, "; ") + ")"
		}
		if rec.from.IsZero() {
			fmt.Fprintf(w, "%d\t%s\t-\t-\tnot injected\t-\t%s\t\n", rec.n, rec.kind, result)
			continue
		}
		healthy := rec.recovered.Round(100 * time.Millisecond).String()
		if rec.recovered < 0 {
			healthy = "NOT"
		}
		fmt.Fprintf(w, "%d\t%s\t+%v\t%v\t%s (%v)\t%s\t%s\t\n", rec.n, rec.kind, rec.from.Sub(r.start).Round(time.Second),
			rec.to.Sub(rec.from).Round(100*time.Millisecond), truncate(rec.seen, 90), rec.seenAfter.Round(100*time.Millisecond), healthy, result)
	}
	w.Flush()

	turns := map[string]bool{}
	if ids, err := counts(r.s.db(), "SELECT message_id, 1 FROM api_turns WHERE message_id != ''"); err == nil {
		for id := range ids {
			turns[id] = true
		}
	}
	w = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "disk fault\tturns served\trecorded\trecorded after space was freed\tnot recorded\tcounted by the proxy\thooks exited 1\tmcp calls lost (logged)\t")
	for _, rec := range f.recs {
		if rec.kind != "disk" {
			continue
		}
		served, recorded, after := f.diskFigures(r, rec, turns)
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d (%d)\t\n", rec.n, served, recorded, after, rec.turnsLost, rec.nrAfter-rec.nrBefore,
			len(rec.hooksFailed), rec.mcpLost, rec.mcpReported)
	}
	w.Flush()
	if f.finalNROK {
		fmt.Fprintf(b, "the proxy counted %d turns not confirmed recorded in all (not recorded includes the %v of slack either side of a window)\n", f.finalNR, faultSlack)
	}
	db := r.s.db()
	for _, rec := range f.recs {
		if rec.kind != "overflow" {
			continue
		}
		bySource := map[string]int{}
		stored := 0
		for id, ev := range rec.spooled {
			bySource[ev.source]++
			if table := eventTables[ev.kind]; table != "" &&
				countOf(db, "SELECT count(*) FROM "+table+" WHERE event_id = '"+strings.ReplaceAll(id, "'", "''")+"'") == 1 {
				stored++
			}
		}
		var sources []string
		for s, n := range bySource {
			sources = append(sources, fmt.Sprintf("%s %d", s, n))
		}
		sort.Strings(sources)
		fmt.Fprintf(b, "overflow fault %d: %d events spooled by producers while the writer was stopped (%s), %d of them stored\n",
			rec.n, len(rec.spooled), strings.Join(sources, ", "), stored)
	}
	hooks, _ := counts(db, "SELECT tool_use_id, count(*) FROM hook_events WHERE tool_use_id LIKE 'chaos-%' GROUP BY tool_use_id")
	for _, rec := range f.recs {
		if len(rec.hooksFailed) == 0 {
			continue
		}
		stored := 0
		for _, id := range rec.hooksFailed {
			if hooks[id] > 0 {
				stored++
			}
		}
		fmt.Fprintf(b, "disk fault %d: %d hook calls exited 1 (neither published nor spooled), %d of them stored all the same (a late ack)\n",
			rec.n, len(rec.hooksFailed), stored)
	}
}
