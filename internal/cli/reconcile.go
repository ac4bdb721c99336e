package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
	"github.com/observerhq/observer/pkg/transcript"
)

func reconcileCommand() *cli.Command {
	return &cli.Command{
		Name:  "reconcile",
		Usage: "re-read recent transcripts from their start and publish the events the store lacks",
		Description: `For when the store may have missed events (a lost spool, a restored backup, a crash): reads
every transcript file modified since --since again from its first line, ignoring how far observer
had read it, computes its events, looks each event id up in the store (read-only) and publishes
the events whose id the store lacks. The writer stores each id once, so a reconcile run twice, or
beside observer-watch, stores nothing twice. It moves no cursor and needs no lock: it can run
while observer runs. When observer is not running it hosts a writer for the run and hands it the events directly.

Per file it reports the events read, the distinct ids among them that are stored and missing, and
the events sent for the missing ids (a tool call and its result, or a message's growing usage,
share one id: all of them are sent). --dry-run reports the same and sends nothing; its JSON lists
each file's missing ids (the first 1,000). Session state events that observer derives from a
session's timeline (idle, finalized) are not in the files and not compared.

Exit codes: 0 done; 1 some files could not be read (listed); 64 bad flags (--since is required);
69 no store yet, or the store is held by a writer whose bus cannot be reached.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "files modified since a duration ago (24h, 7d) or a date (required)"},
			&cli.StringFlag{Name: "client", Usage: clientFlagUsage},
			&cli.BoolFlag{Name: "dry-run", Usage: "report what is missing; send nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: runReconcile,
	}
}

// maxMissingIDs bounds the ids a file's report lists.
const maxMissingIDs = 1000

// reconcileFile is one file's line of the report.
type reconcileFile struct {
	Path       string   `json:"path"`
	Client     string   `json:"client"`
	Events     int64    `json:"events"`  // events read
	IDs        int64    `json:"ids"`     // distinct ids among them
	Stored     int64    `json:"stored"`  // ids the store has
	Missing    int64    `json:"missing"` // ids it lacks
	Sent       int64    `json:"sent"`    // events published for the missing ids (would be, in a dry run)
	Malformed  int64    `json:"malformed_lines,omitempty"`
	MissingIDs []string `json:"missing_ids,omitempty"`
	Error      string   `json:"error,omitempty"`
}

// reconcileReport is reconcile's JSON.
type reconcileReport struct {
	DryRun  bool            `json:"dry_run"`
	Since   time.Time       `json:"since"`
	Files   []reconcileFile `json:"files"`
	Events  int64           `json:"events"`
	Stored  int64           `json:"stored"`
	Missing int64           `json:"missing"`
	Sent    int64           `json:"sent"`
	Seconds float64         `json:"seconds"`
}

func runReconcile(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("reconcile takes no arguments, got %q", c.Args().First())
	}
	e, err := load(c)
	if err != nil {
		return err
	}
	if c.String("since") == "" {
		return usageErr("--since is required: reconcile re-reads the files modified since then (24h, 7d, 2026-11-01)")
	}
	since, err := parseSince(c.String("since"), time.Now())
	if err != nil {
		return usageErr("--since: %v", err)
	}
	ads, err := readers.Select(c.String("client"))
	if err != nil {
		return withCode(ExitUsage, err)
	}
	if _, err := os.Stat(e.cfg.StorePath()); err != nil {
		return withCode(ExitUnavailable, fmt.Errorf("no store at %s yet: nothing to reconcile with; ingest the history with `observerctl backfill`", e.cfg.StorePath()))
	}
	st, err := store.OpenReader(c.Context, e.cfg.StorePath())
	if err != nil {
		return withCode(ExitUnavailable, err)
	}
	defer st.Close()

	r := &reconciler{ctx: c.Context, e: e, have: query.NewEventChecker(st.DB), dryRun: c.Bool("dry-run")}
	defer r.closeStmts()
	start := time.Now()
	rep := reconcileReport{DryRun: r.dryRun, Since: since.UTC().Truncate(time.Second), Files: []reconcileFile{}}
	var errs []string
	for _, ad := range ads {
		srcs, err := ad.Discover()
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", ad.Client(), err))
			continue
		}
		sort.Slice(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
		for _, src := range srcs {
			fi, err := os.Stat(src.Path)
			if err != nil || fi.ModTime().Before(since) {
				continue
			}
			f, err := r.file(ad, src)
			if err != nil {
				if errors.Is(err, errPublish) {
					r.finish()
					return err
				}
				f.Error = err.Error()
				errs = append(errs, fmt.Sprintf("%s: %v", src.Path, err))
			}
			rep.Files = append(rep.Files, f)
			rep.Events += f.Events
			rep.Stored += f.Stored
			rep.Missing += f.Missing
			rep.Sent += f.Sent
		}
	}
	if err := r.finish(); err != nil {
		return err
	}
	rep.Seconds = time.Since(start).Seconds()
	if c.Bool("json") {
		writeJSON(e.stdout, rep)
	} else {
		printReconcile(e.stdout, rep)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d file(s) could not be read:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

// errPublish marks a failure to publish, which stops the run.
var errPublish = errors.New("publish")

// reconciler reads files, compares their event ids with the store and publishes what it lacks.
type reconciler struct {
	ctx    context.Context
	e      *env
	have   *query.EventChecker
	dryRun bool
	pub    ingest.Publisher
	done   func() error
}

func (r *reconciler) closeStmts() { r.have.Close() }

// stored reports whether the store holds an event with ev's id.
func (r *reconciler) stored(ev *event.Event) (bool, error) { return r.have.Stored(r.ctx, ev) }

// file reads one transcript from its start and handles its events.
func (r *reconciler) file(ad transcript.Adapter, src transcript.Source) (reconcileFile, error) {
	rf := reconcileFile{Path: src.Path, Client: ad.Client()}
	parser, err := ad.NewParser(src, nil)
	if err != nil {
		return rf, err
	}
	fh, err := os.Open(src.Path)
	if err != nil {
		return rf, err
	}
	defer fh.Close()
	status := map[string]bool{} // id: stored
	var batch []event.Event
	flush := func() error {
		if len(batch) == 0 || r.dryRun {
			batch = batch[:0]
			return nil
		}
		if r.pub == nil {
			pub, done, err := scanPublisher(r.ctx, r.e)
			if err != nil {
				return fmt.Errorf("%w: %w", errPublish, err)
			}
			r.pub, r.done = pub, done
		}
		if _, err := r.pub.PublishBatch(r.ctx, batch); err != nil {
			return fmt.Errorf("%w: %w", errPublish, err)
		}
		batch = nil
		return nil
	}
	var rd io.Reader = fh
	if src.Document {
		rd = transcript.DocumentLine(fh) // a document rewritten in place is one record
	}
	br := bufio.NewReaderSize(rd, 1<<20)
	var off int64
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			break // a last line without its newline is still being written
		}
		if err != nil {
			return rf, err
		}
		at := off
		off += int64(len(line))
		if int64(len(line)) > ingest.MaxLine {
			rf.Malformed++
			continue
		}
		body := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		if body == "" {
			continue
		}
		evs, perr := parser.Record(at, []byte(body))
		if perr != nil {
			rf.Malformed++
		}
		for i := range evs {
			ev := &evs[i]
			rf.Events++
			have, seen := status[ev.ID]
			if !seen {
				if have, err = r.stored(ev); err != nil {
					return rf, fmt.Errorf("look up %s %s: %w", ev.Kind, ev.ID, err)
				}
				status[ev.ID] = have
				rf.IDs++
				if have {
					rf.Stored++
				} else {
					rf.Missing++
					if len(rf.MissingIDs) < maxMissingIDs {
						rf.MissingIDs = append(rf.MissingIDs, ev.ID)
					}
				}
			}
			if have {
				continue
			}
			rf.Sent++
			batch = append(batch, *ev)
			if len(batch) >= 1000 {
				if err := flush(); err != nil {
					return rf, err
				}
			}
		}
	}
	return rf, flush()
}

// finish waits until a writer this run hosted has stored what was sent, and stops it.
func (r *reconciler) finish() error {
	if r.done == nil {
		return nil
	}
	done := r.done
	r.done = nil
	return done()
}

func printReconcile(w io.Writer, rep reconcileReport) {
	verb := "SENT"
	if rep.DryRun {
		verb = "WOULD SEND"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FILE\tCLIENT\tEVENTS\tSTORED\tMISSING\t%s\n", verb)
	for _, f := range rep.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\n", f.Path, f.Client, f.Events, f.Stored, f.Missing, f.Sent)
	}
	tw.Flush()
	switch {
	case len(rep.Files) == 0:
		fmt.Fprintf(w, "no transcript file modified since %s\n", rep.Since.Local().Format("2006-01-02 15:04"))
	case rep.DryRun:
		fmt.Fprintf(w, "%d file(s): %s events, %s ids stored, %s missing; would send %s events (dry run: nothing sent)\n",
			len(rep.Files), n(rep.Events), n(rep.Stored), n(rep.Missing), n(rep.Sent))
	default:
		fmt.Fprintf(w, "%d file(s): %s events, %s ids stored, %s missing; sent %s events\n",
			len(rep.Files), n(rep.Events), n(rep.Stored), n(rep.Missing), n(rep.Sent))
	}
}
