package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/lifecycle"
	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
)

func scanCommand() *cli.Command {
	return &cli.Command{
		Name:  "scan",
		Usage: "ingest the existing " + clientProducts() + " history (resumable; a second run changes nothing)",
		Description: `Reads every transcript file from where the last scan stopped and publishes its events. When
observer runs, its observer-watch (which owns the reading position of every file) does the reading
for this command and streams its progress back, and the events go through its bus; otherwise scan
hosts a writer itself for the run and hands it the events directly, without a bus (each batch is
counted as read only once it is stored, so a scan stopped at any point resumes without loss).
--dry-run counts from a snapshot of the reading positions, whether observer runs or not.

` + clientLocations() + `

Exit codes: 0 done; 1 some files could not be read (listed); 64 bad flags; 69 the store is held by a
writer whose bus cannot be reached.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "client", Usage: clientFlagUsage},
			&cli.StringFlag{Name: "since", Usage: "only files modified since a duration ago (24h, 7d) or a date"},
			&cli.BoolFlag{Name: "dry-run", Usage: "read and count, publish nothing, remember nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		},
		Action: runScan,
	}
}

func runScan(c *cli.Context) error {
	h, err := ingestFromFlags(c, func(p ingest.Progress, took time.Duration) string {
		mb := float64(p.BytesDone) / (1 << 20)
		return fmt.Sprintf("scanning: %d/%d files, %.1f/%.1f MB (%.0f MB/s)", p.FilesDone, p.Files, mb,
			float64(p.Bytes)/(1<<20), mb/max(took.Seconds(), 0.001))
	})
	if err != nil {
		return err
	}
	sum, e := h.sum, h.e
	if c.Bool("json") {
		writeJSON(e.stdout, sum)
	} else {
		verb := "scanned"
		if h.dryRun {
			verb = "would ingest (dry run)"
		}
		fmt.Fprintf(e.stdout, "%s %d of %d files: %d lines, %d events, %d malformed lines, %.1f MB in %.2fs (%.0f MB/s)\n",
			verb, sum.Read, sum.Files, sum.Lines, sum.Events, sum.Malformed, float64(sum.Bytes)/(1<<20), sum.Seconds,
			float64(sum.Bytes)/(1<<20)/max(sum.Seconds, 0.001))
		if sum.TotalSeconds > 0 {
			fmt.Fprintf(e.stdout, "stored, indexed and analysed in %.2fs\n", sum.TotalSeconds)
		}
		for t, n := range sum.Unknown {
			fmt.Fprintf(e.stdout, "  unknown record type %q: %d line(s)\n", t, n)
		}
	}
	return h.result()
}

// historyRun is one ingestion of the clients' history by scan or backfill.
type historyRun struct {
	e       *env
	ads     []transcript.Adapter
	dryRun  bool
	sum     ingest.Summary
	scanErr error
}

// ingestFromFlags reads --client, --since and --dry-run and runs ingestHistory, showing progress
// on a terminal as line words it.
func ingestFromFlags(c *cli.Context, line func(p ingest.Progress, took time.Duration) string) (*historyRun, error) {
	e, err := load(c)
	if err != nil {
		return nil, err
	}
	ads, err := readers.Select(c.String("client"))
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	since, err := parseSince(c.String("since"), time.Now())
	if err != nil {
		return nil, usageErr("--since: %v", err)
	}
	var progress func(ingest.Progress)
	if f, ok := e.stderr.(*os.File); ok && isTerminal(f) {
		start := time.Now()
		progress = func(p ingest.Progress) { fmt.Fprint(e.stderr, "\r"+line(p, time.Since(start))+"   ") }
	}
	h := &historyRun{e: e, ads: ads, dryRun: c.Bool("dry-run")}
	h.sum, h.scanErr = ingestHistory(c.Context, e, c.String("client"), ads, since, h.dryRun, progress)
	return h, nil
}

// result is the run's error: the scan's own, or the files it could not read.
func (h *historyRun) result() error {
	if h.scanErr != nil {
		return h.scanErr
	}
	if len(h.sum.Errors) > 0 {
		return fmt.Errorf("%d file(s) could not be read:\n  %s", len(h.sum.Errors), strings.Join(h.sum.Errors, "\n  "))
	}
	return nil
}

// ingestHistory reads the adapters' files from their cursors and publishes their events (scan's
// work, which backfill shares); progress, when set, is called as files are read.
func ingestHistory(ctx context.Context, e *env, client string, ads []transcript.Adapter, since time.Time, dryRun bool, progress func(ingest.Progress)) (ingest.Summary, error) {
	start := time.Now()
	pset, err := prices.Build(e.cfg.Pricing.Models) // usage is priced with config.toml's overrides
	if err != nil {
		return ingest.Summary{}, withCode(ExitUsage, fmt.Errorf("config %s: %w", config.Path(e.cfg.Home), err))
	}
	readers.WithPrices(ads, prices.Static(pset).Table)
	cursorsPath := filepath.Join(e.cfg.Home, "watch", "cursors.json")
	cur, err := ingest.OpenCursors(cursorsPath)
	switch {
	case errors.Is(err, ingest.ErrBusy) && dryRun:
		// The watcher (or another scan) owns the cursors: count from a snapshot of them.
		if cur, err = ingest.ReadCursors(cursorsPath); err != nil {
			return ingest.Summary{}, err
		}
	case errors.Is(err, ingest.ErrBusy):
		return scanViaWatcher(ctx, e, client, since, progress, err)
	case err != nil:
		return ingest.Summary{}, err
	}
	defer cur.Close()

	s := &ingest.Scanner{Adapters: ads, Cursors: cur, DryRun: dryRun, Since: since, Progress: progress}
	// Sessions follow the same lifecycle as under the watcher (which holds the cursors' lock
	// whenever it runs, so the two never share the state file): history comes out finalized at
	// its last record, with the epochs of its compactions.
	life := lifecycle.New(lifecycle.Config{IdleAfter: e.cfg.Watch.IdleAfter.D(), FinalizeAfter: e.cfg.Watch.FinalizeAfter.D()})
	lifePath := filepath.Join(e.cfg.Home, "watch", "lifecycle.json")
	if err := life.Load(lifePath); err != nil {
		e.logger.Warn("session states not loaded; starting over", "err", err)
	}
	var pub ingest.Publisher
	var finish func() error
	hosted := false
	if !s.DryRun {
		s.Connect = func() (ingest.Publisher, error) {
			p, done, err := scanPublisher(ctx, e)
			finish, pub = done, p
			_, hosted = p.(*writer.Direct)
			if hosted {
				s.Gather = writer.DirectBatch // each publication one transaction
			}
			return observing{next: p, life: life}, err
		}
	}
	sum, scanErr := s.Scan(ctx)
	if s.Progress != nil {
		fmt.Fprintln(e.stderr)
	}
	if pub != nil && scanErr == nil {
		if evs, commit := life.Tick(); len(evs) > 0 {
			if _, err := pub.PublishBatch(ctx, evs); err != nil {
				scanErr = fmt.Errorf("session states: %w", err)
			} else {
				commit()
				sum.Events += int64(len(evs))
			}
		}
		if life.Dirty() {
			if err := life.Save(lifePath); err != nil {
				e.logger.Warn("session states not saved", "err", err)
			}
		}
	}
	if finish != nil {
		if err := finish(); err != nil && scanErr == nil {
			scanErr = err
		}
	}
	if hosted {
		sum.TotalSeconds = time.Since(start).Seconds()
	}
	return sum, scanErr
}

// scanViaWatcher has the running watcher, which owns the cursors (busy says so), read the history
// for this scan, showing its progress as it comes. Without an answer it says who holds them.
func scanViaWatcher(ctx context.Context, e *env, client string, since time.Time, progress func(ingest.Progress), busy error) (ingest.Summary, error) {
	token, err := bus.ReadToken(e.cfg.TokenPath())
	if err != nil {
		return ingest.Summary{}, withCode(ExitUnavailable, fmt.Errorf("%w, and observer's bus token cannot be read (%v): is another scan running?", busy, err))
	}
	cl, err := bus.Connect(ctx, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observerctl-scan", Timeout: 5 * time.Second, Logger: e.logger})
	if err != nil {
		return ingest.Summary{}, withCode(ExitUnavailable, fmt.Errorf("%w, and observer's bus at %s does not answer: is another scan running? (`observerctl status`)", busy, e.cfg.BusURL()))
	}
	defer cl.Close()
	fmt.Fprintln(e.stderr, "observer is running: its observer-watch reads the history for this scan")
	req, _ := json.Marshal(ingest.ScanRequest{Client: client, Since: since})
	var sum *ingest.Summary
	var failed string
	err = cl.RequestStream(ctx, bus.ScanSubject, req, 5*time.Second, 2*time.Minute, func(data []byte) bool {
		var u ingest.ScanUpdate
		if json.Unmarshal(data, &u) != nil {
			return false
		}
		if u.Progress != nil && progress != nil {
			progress(*u.Progress)
		}
		sum, failed = u.Summary, u.Error
		return u.Done()
	})
	if progress != nil {
		fmt.Fprintln(e.stderr)
	}
	switch {
	case errors.Is(err, bus.ErrNoResponder):
		return ingest.Summary{}, withCode(ExitUnavailable, fmt.Errorf("%w, and observer-watch does not answer on the bus: another scan may be running", busy))
	case err != nil:
		return ingest.Summary{}, err
	case sum == nil:
		return ingest.Summary{}, errors.New(failed)
	case failed != "":
		return *sum, errors.New(failed)
	}
	e.logger.Debug("history read by the running observer-watch", "events", sum.Events)
	return *sum, nil
}

// observing publishes a scan's batches, with the epoch events their compactions call for, and lets
// the lifecycle tracker keep what they taught it once they are published.
type observing struct {
	next ingest.Publisher
	life *lifecycle.Tracker
}

func (o observing) PublishBatch(ctx context.Context, evs []event.Event) (int, error) {
	extra, commit := o.life.Observe(evs)
	n, err := o.next.PublishBatch(ctx, append(evs[:len(evs):len(evs)], extra...))
	if err == nil {
		commit()
	}
	return n, err
}

// scanPublisher publishes to the running bus, or hosts a writer for this run when observer is
// not running. done waits until the writer has caught up (rollups, indexes, analysis), then
// stops it and closes the store.
func scanPublisher(ctx context.Context, e *env) (ingest.Publisher, func() error, error) {
	if token, err := bus.ReadToken(e.cfg.TokenPath()); err == nil {
		cl, err := bus.Connect(ctx, bus.Options{URL: e.cfg.BusURL(), Token: token, Name: "observerctl-scan",
			SpoolDir: e.cfg.SpoolDir(), Wait: true, Timeout: 30 * time.Second, Logger: e.logger})
		if err == nil {
			return cl, func() error { cl.Close(); return nil }, nil
		}
	}
	st, err := store.OpenWriter(ctx, e.cfg.StorePath())
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, nil, withCode(ExitUnavailable, fmt.Errorf("%w, but its bus at %s does not answer: check `observerctl status`", err, e.cfg.BusURL()))
		}
		return nil, nil, err
	}
	// No bus: the events go straight to a writer in this process (writer.Direct), each batch
	// acknowledged to the scanner only once committed, so its cursors move after the commit as
	// they would after the bus's acknowledgement.
	direct := writer.NewDirect()
	wctx, cancel := context.WithCancel(context.Background())
	// Bulk: rows first, then the rollups, the full-text index and the analysis, once the run has
	// stored everything (writer.Writer.Bulk).
	w := &writer.Writer{Store: st, Direct: direct, Logger: e.logger, Prices: scanPrices(e), Bulk: true}
	wdone := make(chan struct{})
	var werr error
	go func() { werr = w.Run(wctx); close(wdone) }()
	done := func() error {
		start := time.Now()
		cancel()
		<-wdone
		e.logger.Debug("the writer has caught up", "took", time.Since(start))
		if err := st.Close(); err != nil && werr == nil {
			werr = err
		}
		return werr
	}
	return direct, done, nil
}

// scanPrices is the price table of the writer a scan hosts: config.toml's overrides (checked
// before the scan started), so that it reprices what an override change left behind.
func scanPrices(e *env) *prices.Follower {
	pset, err := prices.Build(e.cfg.Pricing.Models)
	if err != nil {
		return nil
	}
	return prices.Static(pset)
}

// clientFlagUsage is the --client flag's help of scan, backfill and reconcile.
var clientFlagUsage = func() string {
	var names []string
	for _, c := range client.All() {
		n := c.Name
		if len(c.Aliases) > 0 {
			n += " (" + strings.Join(c.Aliases, ", ") + ")"
		}
		names = append(names, n)
	}
	return "only this client: " + andList(names, "or")
}()

// clientProducts lists the products of the registry's clients (pkg/client), each once.
func clientProducts() string {
	var out []string
	for _, c := range client.All() {
		if !slices.Contains(out, c.Product) {
			out = append(out, c.Product)
		}
	}
	return andList(out, "and")
}

// clientLocations says where each client's records are read, from the registry (pkg/client):
// clients read from the same place share a sentence. It is wrapped at 100 columns.
func clientLocations() string {
	var sentences []string
	cs := client.All()
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Where == cs[i].Where {
			j++
		}
		var titles []string
		for _, c := range cs[i:j] {
			titles = append(titles, c.Title)
		}
		sentences = append(sentences, andList(titles, "and")+": "+cs[i].Where+".")
		i = j
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(strings.Join(sentences, " ")) {
		if line != "" && len(line)+1+len(w) > 100 {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}

// andList joins items as a sentence does: "a, b and c".
func andList(items []string, and string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " " + and + " " + items[len(items)-1]
}
