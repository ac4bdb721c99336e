// Package watchcli is the observer-watch command: it follows the clients' transcript files as
// they grow and publishes their events, with the same cursors as `observerctl scan`.
//
// Changes are noticed through fsnotify on every directory that holds transcripts (and on the
// roots, and on each directory created under a watched one, for new projects and sessions). Where
// the notifications report writes inside a watched directory (inotify, on Linux), a pass runs on a
// change and otherwise every RescanEvery, for what no notification could name: the watcher idles
// idle. Elsewhere (kqueue reports no writes to a directory's files; a file system without
// notifications) a pass runs every PollEvery, a stat per file. Each pass reads only what was
// appended since the cursor; a file rewritten in place (shorter than its cursor, or its
// fingerprinted bytes changed: see package ingest) is read again from its start and logged at info
// level ("transcript rewritten; read again from its start", file, why).
// Malformed lines never stop a file: they are skipped and logged at warn level per file, with the
// pass's count and the file's total ("malformed transcript lines skipped", file, count, file_total);
// a line skipped for passing the line limit (ingest.MaxLine) is logged on its own with its size
// ("transcript line of N bytes at offset O passes the 64 MiB line limit, skipped", file, offset,
// line_bytes, limit_bytes).
// A client database the watcher cannot read (corrupt, permission denied, locked past the busy
// timeout, a schema its reader does not know) makes the watcher degraded: its heartbeat lists
// "<client>: cannot read <path>: <error>" until a pass reads it or it is gone, so `observerctl
// status` and `doctor` show it, and it is logged once when it starts and when it ends. A database
// pass streams its rows (package ingest); after a large pass the watcher returns the memory it
// used to the system at once (daemon.TrimNow), since a watcher idles most of its life.
// Usage is priced with config.toml's price overrides, followed while the watcher runs
// (internal/prices); the writer reprices what was stored before a change.
//
// While it follows sessions live the watcher also publishes their lifecycle (active, idle,
// finalized, epochs; timings [watch] idle_after and finalize_after), classifies the freshness of
// live file reads, and follows the transcripts hooks announce: see live.go.
package watchcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/daemon"
	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/transcript"
)

// Version is set by main.
var Version = "dev"

// PollEvery is the interval between passes where file notifications do not report writes (or do
// not work). A pass over files that did not grow costs a stat each.
const PollEvery = 500 * time.Millisecond

// RescanEvery is the interval between passes, when no change is notified, where notifications
// report writes inside watched directories (inotify).
const RescanEvery = 10 * time.Second

// notifiesWrites reports whether fsnotify tells of writes to the files of a watched directory on
// this system: inotify does; kqueue (macOS, the BSDs) reports only a directory's own changes.
var notifiesWrites = runtime.GOOS == "linux"

// Run runs observer-watch and returns the exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return daemon.Run(ctx, &cli.App{
		Name:    "observer-watch",
		Usage:   "follow the clients' transcripts and publish their events",
		Version: Version,
		Flags:   []cli.Flag{daemon.HomeFlag},
		Action:  watch,
	}, args, stdout, stderr)
}

func watch(c *cli.Context) error {
	ctx, stop, cfg, logger, err := daemon.Start(c)
	if err != nil {
		return err
	}
	defer stop()
	defer daemon.StartCPUProfile("observer-watch", logger)()

	cur, err := ingest.OpenCursors(filepath.Join(cfg.Home, "watch", "cursors.json"))
	if err != nil {
		return err
	}
	defer cur.Close()
	cl, err := bus.Connect(ctx, bus.Options{URL: cfg.BusURL(), TokenFile: cfg.TokenPath(), Name: "observer-watch",
		SpoolDir: cfg.SpoolDir(), DrainEvery: 5 * time.Second, Timeout: 10 * time.Second, Logger: logger})
	if err != nil {
		return err
	}
	defer cl.Close()

	pf, err := prices.Follow(cfg.Home, logger)
	if err != nil {
		return cli.Exit(err, 64)
	}
	go pf.Run(ctx)
	readers.UseStore(cfg.StorePath()) // Aider's histories are looked for in the projects the store knows
	base := readers.WithPrices(readers.All(), pf.Table)
	lv, err := newLive(cfg, cl, logger, base, readers.RootsOf(base))
	if err != nil {
		return err
	}
	defer lv.close()
	lv.hooked.prices = pf.Table
	s := &ingest.Scanner{Adapters: lv.base, Cursors: cur, Publisher: lv.publisher(cl)}

	hs := &healthState{}
	go cl.Heartbeat(ctx, time.Second, hs.health)
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		logger.Warn("file notifications unavailable; polling only", "err", err, "every", PollEvery)
		fw = nil
	} else {
		defer fw.Close()
	}
	watched := map[string]bool{}
	// `observerctl scan` and `backfill` while the suite runs: this process owns the cursors, so it
	// does their pass, between its own, and streams the progress back.
	requests := make(chan scanJob)
	if sub, err := cl.ServeStream(bus.ScanSubject, func(req []byte, send func([]byte) error) {
		j := scanJob{send: send, done: make(chan struct{})}
		if err := json.Unmarshal(req, &j.req); err != nil {
			sendUpdate(send, ingest.ScanUpdate{Error: "bad scan request: " + err.Error()})
			return
		}
		select {
		case requests <- j:
			<-j.done
		case <-ctx.Done():
			sendUpdate(send, ingest.ScanUpdate{Error: "observer-watch is stopping"})
		}
	}); err != nil {
		logger.Warn("scan requests not served", "err", err)
	} else {
		defer sub.Stop()
	}
	logger.Info("watch is up", "roots", strings.Join(readers.RootsOf(base), ", "))
	for {
		lv.beforePass(s)
		sum, err := s.Scan(ctx)
		if sum.Events > 0 {
			logger.Debug("pass", "files_read", sum.Read, "events", sum.Events, "malformed", sum.Malformed)
		}
		reportRewritten(logger, sum)
		reportMalformed(logger, sum)
		hs.afterPass(logger, s, sum)
		if sum.Lines >= releaseAfter {
			// daemon.Start's TrimMemory gives a burst's peak back within TrimEvery anyway; a
			// large pass is such a burst, and the watcher knows when it ends: give it back now,
			// by the same rule (nothing when little is held), not 30 s later.
			daemon.TrimNow()
		}
		if err != nil && ctx.Err() == nil {
			logger.Warn("pass failed; retrying", "err", err)
		}
		if ctx.Err() == nil {
			hs.events.Add(int64(lv.afterPass(ctx, cl)))
		}
		if fw != nil {
			roots := slices.Concat(readers.RootsOf(base), lv.hooked.extraRoots())
			if watchDirs(fw, roots, s.Dirs(), watched, logger) > 0 && notifiesWrites {
				// What was written in a new directory between this pass's look and its watch
				// told nothing: one more pass, now that it is watched.
				continue
			}
		}
		var req *scanJob
		if !wait(ctx, fw, watched, lv.life.NextDue(), lv.wakeup(), requests, &req) {
			return nil
		}
		if req != nil {
			n := requestedPass(ctx, *req, s, lv.publisher(cl), logger)
			hs.events.Add(n)
			close(req.done)
		}
	}
}

// releaseAfter is the rows or lines a pass reads from which the watcher returns its free memory
// to the system right after it (daemon.TrimNow) rather than at daemon.TrimMemory's next tick.
const releaseAfter = 10000

// healthState is what the watcher's heartbeat says: the loop writes it, the heartbeat reads it.
type healthState struct {
	events, passes, last atomic.Int64
	unreadable           atomic.Pointer[[]ingest.Unreadable] // the databases the last pass could not read
}

func (hs *healthState) health() bus.Health {
	h := bus.Health{Component: "watch", OK: true, Events: hs.events.Load(),
		Detail: fmt.Sprintf("%d passes, %d events", hs.passes.Load(), hs.events.Load())}
	if ms := hs.last.Load(); ms > 0 {
		h.LastEvent = time.UnixMilli(ms).UTC()
	}
	if u := hs.unreadable.Load(); u != nil {
		for _, d := range *u {
			h.Degraded = append(h.Degraded, d.String())
		}
	}
	return h
}

// afterPass counts a pass, takes the databases it could not read from s, and logs its errors: a
// database that cannot be read once when that starts (or its error changes) and once when it is
// read again or gone, not at every pass.
func (hs *healthState) afterPass(logger *slog.Logger, s *ingest.Scanner, sum ingest.Summary) {
	hs.passes.Add(1)
	if sum.Events > 0 {
		hs.events.Add(sum.Events)
		hs.last.Store(time.Now().UnixMilli())
	}
	var before []ingest.Unreadable
	if p := hs.unreadable.Load(); p != nil {
		before = *p
	}
	now := s.Unreadable()
	hs.unreadable.Store(&now)
	known := map[string]bool{}
	for _, u := range before {
		known[u.Path] = true
	}
	for _, u := range now {
		if !slices.Contains(before, u) {
			logger.Warn("client database cannot be read", "client", u.Client, "file", u.Path, "err", u.Err)
		}
		delete(known, u.Path)
	}
	for path := range known {
		logger.Info("client database no longer unreadable", "file", path)
	}
	for _, e := range sum.Errors {
		if !slices.ContainsFunc(now, func(u ingest.Unreadable) bool { return strings.HasPrefix(e, u.Path+": ") }) {
			logger.Warn("transcript not read", "err", e)
		}
	}
}

// scanJob is one scan request waiting for the watcher's loop.
type scanJob struct {
	req  ingest.ScanRequest
	send func([]byte) error
	done chan struct{}
}

func sendUpdate(send func([]byte) error, u ingest.ScanUpdate) {
	if data, err := json.Marshal(u); err == nil {
		send(data)
	}
}

// requestedPass reads, for a scan request, the files of its client modified since its time, with
// the watcher's cursors and publisher, sending progress at most every 250 ms and the summary at
// the end. It returns the events published.
func requestedPass(ctx context.Context, j scanJob, own *ingest.Scanner, pub ingest.Publisher, logger *slog.Logger) int64 {
	ads := own.Adapters
	if j.req.Client != "" {
		sel, err := readers.Select(j.req.Client)
		if err != nil {
			sendUpdate(j.send, ingest.ScanUpdate{Error: err.Error()})
			return 0
		}
		ads = slices.DeleteFunc(slices.Clone(ads), func(a transcript.Adapter) bool { return a.Client() != sel[0].Client() })
	}
	var last time.Time
	s := &ingest.Scanner{Adapters: ads, Cursors: own.Cursors, Publisher: pub, Since: j.req.Since,
		Progress: func(p ingest.Progress) {
			if time.Since(last) >= 250*time.Millisecond || p.FilesDone == p.Files {
				last = time.Now()
				sendUpdate(j.send, ingest.ScanUpdate{Progress: &p})
			}
		}}
	logger.Info("scan requested", "client", j.req.Client, "since", j.req.Since)
	sum, err := s.Scan(ctx)
	if err != nil {
		sendUpdate(j.send, ingest.ScanUpdate{Summary: &sum, Error: err.Error()})
	} else {
		sendUpdate(j.send, ingest.ScanUpdate{Summary: &sum})
	}
	return sum.Events
}

// reportRewritten logs each file a pass read again from its start because it was rewritten.
func reportRewritten(logger *slog.Logger, sum ingest.Summary) {
	for _, path := range slices.Sorted(maps.Keys(sum.Rewritten)) {
		logger.Info("transcript rewritten; read again from its start", "file", path, "why", sum.Rewritten[path])
	}
}

// reportMalformed logs, per file, the malformed lines a pass skipped (invalid JSON or UTF-8, a
// line longer than ingest.MaxLine): count is this pass's, file_total every one the file's cursor
// has passed, which a re-read after a crash does not inflate. A line longer than the limit is
// logged on its own too, saying so.
func reportMalformed(logger *slog.Logger, sum ingest.Summary) {
	for _, l := range sum.LongLines {
		logger.Warn("transcript "+l.String(), "file", l.File, "offset", l.Offset, "line_bytes", l.Bytes, "limit_bytes", l.Limit)
	}
	files := slices.Sorted(maps.Keys(sum.MalformedFiles))
	for _, path := range files {
		m := sum.MalformedFiles[path]
		logger.Warn("malformed transcript lines skipped", "file", path, "count", m.Lines, "file_total", m.Total)
	}
	if n := sum.Malformed - malformedIn(sum); n > 0 {
		logger.Warn("malformed transcript lines skipped", "count", n) // not attributed to a file
	}
}

func malformedIn(sum ingest.Summary) int64 {
	var n int64
	for _, m := range sum.MalformedFiles {
		n += m.Lines
	}
	return n
}

// watchDirs adds a watch on every directory that holds a transcript (dirs), and on the roots; a
// root that does not exist yet is watched at its nearest existing ancestor, so that its creation
// starts a pass. It returns how many directories it began to watch.
func watchDirs(fw *fsnotify.Watcher, roots, dirs []string, watched map[string]bool, logger *slog.Logger) int {
	added := 0
	add := func(d string) {
		if watched[d] {
			return
		}
		if err := fw.Add(d); err == nil {
			watched[d] = true
			added++
		} else if !errors.Is(err, os.ErrNotExist) {
			logger.Debug("cannot watch", "dir", d, "err", err)
		}
	}
	for _, d := range roots {
		for {
			if _, err := os.Stat(d); err == nil || filepath.Dir(d) == d {
				break
			}
			d = filepath.Dir(d)
		}
		add(d)
	}
	for _, d := range dirs {
		add(d)
	}
	return added
}

// wait returns after a file event (gathering the burst that follows it for a moment), a hook's
// arrival (wake), a scan request, a notification error (events lost), at due (a session's next
// change of state with time: idle, finalized) or after PollEvery or RescanEvery (notifiesWrites)
// if sooner, or false when ctx ends. A directory created under a watched one is watched at once,
// so that what is then written in it is told too.
func wait(ctx context.Context, fw *fsnotify.Watcher, watched map[string]bool, due time.Time, wake <-chan struct{}, requests <-chan scanJob, req **scanJob) bool {
	var evs <-chan fsnotify.Event
	var errs <-chan error
	every := PollEvery
	if fw != nil {
		evs, errs = fw.Events, fw.Errors
		if notifiesWrites {
			every = RescanEvery
		}
	}
	if !due.IsZero() {
		every = min(every, max(time.Until(due), 0)+10*time.Millisecond)
	}
	t := time.NewTimer(every)
	defer t.Stop()
	created := func(ev fsnotify.Event) {
		if !ev.Has(fsnotify.Create) || watched[ev.Name] {
			return
		}
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() && fw.Add(ev.Name) == nil {
			watched[ev.Name] = true
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	case j := <-requests:
		*req = &j
	case <-errs:
		// Events were lost (the kernel's queue overflowed): a pass finds what they told.
	case ev := <-evs:
		created(ev)
		time.Sleep(20 * time.Millisecond)
	drain:
		for {
			select {
			case ev := <-evs:
				created(ev)
			default:
				break drain
			}
		}
	}
	return true
}
