package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/pkg/store"
)

func pruneCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "delete stored events older than a cutoff, and the oldest actions beyond a cap",
		Description: `Deletes, in chunks of 5,000 rows per transaction, every event older than --older-than:
actions (with their tool outputs and the outputs' full-text index entries), token usage, API
turns, compressions, hook events, MCP calls, session events, quarantined messages (by the time
they were received), then the sessions and projects last seen before the cutoff. With
--max-actions it then deletes the oldest actions beyond that many. The hourly and daily rollups
of the hours it deleted from are recomputed in the same transactions, so costs and charts stay
exact. The store file keeps its size: SQLite reuses the freed pages.

The defaults are [retention] max_age and max_actions of config.toml (0 keeps everything);
--older-than 0 or --max-actions 0 turns one off for this run. --older-than takes a duration (90d,
36h) or a date (2026-01-31, local midnight).

Only one process writes the store. When observer runs, its writer holds the store: prune then
stops (exit 69) and says so; stop observer (` + "`observerctl down`" + `) and prune, or set [retention] in
config.toml, which the writer applies at each start. --dry-run only counts, read-only, and works
while observer runs.

Exit codes: 0 done; 1 failure; 64 a bad flag, or nothing to prune by (no flag and no [retention]);
69 no store yet, or observer's writer holds the store (without --dry-run).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "delete events older than this duration ago (90d, 36h) or date; 0: no age limit", DefaultText: "[retention] max_age"},
			&cli.Int64Flag{Name: "max-actions", Usage: "keep at most this many actions, the newest; 0: no cap", DefaultText: "[retention] max_actions"},
			&cli.BoolFlag{Name: "dry-run", Usage: "count what would be deleted; delete nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		},
		Action: runPrune,
	}
}

// pruneReport is prune's JSON.
type pruneReport struct {
	DryRun     bool             `json:"dry_run"`
	Before     time.Time        `json:"before,omitzero"` // cutoff; zero when only --max-actions applies
	MaxActions int64            `json:"max_actions,omitempty"`
	Deleted    map[string]int64 `json:"deleted"`
	Total      int64            `json:"total"`
	Rollup     int              `json:"rollup_hours_recomputed"`
	Seconds    float64          `json:"seconds"`
}

func runPrune(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("prune takes no arguments, got %q", c.Args().First())
	}
	e, err := load(c)
	if err != nil {
		return err
	}
	now := time.Now()
	opts := retentionOptions(e, now)
	if c.IsSet("older-than") {
		opts.Before, err = parseAge(c.String("older-than"), now)
		if err != nil {
			return usageErr("--older-than: %v", err)
		}
	}
	if c.IsSet("max-actions") {
		if opts.MaxActions = c.Int64("max-actions"); opts.MaxActions < 0 {
			return usageErr("--max-actions must be 0 (no cap) or more, got %d", opts.MaxActions)
		}
	}
	if opts.Before.IsZero() && opts.MaxActions == 0 {
		return usageErr("nothing to prune by: pass --older-than or --max-actions, or set [retention] max_age or max_actions in %s", e.cfg.Home+"/config.toml")
	}
	opts.DryRun = c.Bool("dry-run")
	if _, err := os.Stat(e.cfg.StorePath()); err != nil {
		return withCode(ExitUnavailable, fmt.Errorf("no store at %s yet: nothing to prune", e.cfg.StorePath()))
	}
	var st *store.Store
	if opts.DryRun {
		st, err = store.OpenReader(c.Context, e.cfg.StorePath())
	} else {
		st, err = store.OpenWriter(c.Context, e.cfg.StorePath())
		if errors.Is(err, store.ErrLocked) {
			return withCode(ExitUnavailable, fmt.Errorf("%w: observer's writer owns the store while observer runs. Stop it (`observerctl down`) and prune, or set [retention] in config.toml, which the writer applies at each start; --dry-run works meanwhile", err))
		}
	}
	if err != nil {
		return withCode(ExitUnavailable, err)
	}
	defer st.Close()
	start := time.Now()
	res, err := st.Prune(c.Context, opts)
	rep := pruneReport{DryRun: opts.DryRun, Before: opts.Before, MaxActions: opts.MaxActions, Deleted: res.Deleted,
		Total: res.Total, Rollup: res.RollupHours, Seconds: time.Since(start).Seconds()}
	if !rep.Before.IsZero() {
		rep.Before = rep.Before.UTC().Truncate(time.Millisecond)
	}
	if c.Bool("json") {
		writeJSON(e.stdout, rep)
	} else {
		printPrune(e.stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("prune stopped after %d rows: %w", res.Total, err)
	}
	return nil
}

func printPrune(w io.Writer, r pruneReport) {
	var what []string
	if !r.Before.IsZero() {
		what = append(what, "older than "+r.Before.Local().Format("2006-01-02 15:04:05"))
	}
	if r.MaxActions > 0 {
		what = append(what, fmt.Sprintf("actions beyond the newest %s", n(r.MaxActions)))
	}
	verb := "deleted"
	if r.DryRun {
		verb = "would delete (dry run)"
	}
	fmt.Fprintf(w, "%s %s rows: %s\n", verb, n(r.Total), strings.Join(what, "; "))
	for _, t := range store.PruneTables {
		if r.Deleted[t] > 0 {
			fmt.Fprintf(w, "  %-20s %12s\n", t, n(r.Deleted[t]))
		}
	}
	if !r.DryRun && r.Total > 0 {
		fmt.Fprintf(w, "rollups recomputed for %d hour(s) in %.2fs\n", r.Rollup, r.Seconds)
	}
}

// retentionOptions are [retention]'s limits as prune options at now.
func retentionOptions(e *env, now time.Time) store.PruneOptions {
	var o store.PruneOptions
	if d := e.cfg.Retention.MaxAge.D(); d > 0 {
		o.Before = now.Add(-d)
	}
	if e.cfg.Retention.MaxActions > 0 {
		o.MaxActions = e.cfg.Retention.MaxActions
	}
	return o
}

// parseAge reads a cutoff: "0" (none), a duration ago ("90d", "36h") or a local date.
func parseAge(s string, now time.Time) (time.Time, error) {
	if s == "0" || s == "" {
		return time.Time{}, nil
	}
	t, err := parseSince(s, now)
	if err == nil && !t.Before(now) {
		return time.Time{}, fmt.Errorf("%q would delete everything up to now; give an age greater than 0", s)
	}
	return t, err
}

// retainOnStart applies [retention] once in the background when the writer starts, logging what
// it deleted; the writer's batches interleave with its chunks. The returned function waits for
// it to finish (it stops early when ctx ends) and must run before the store closes.
func retainOnStart(ctx context.Context, e *env, st *store.Store) (wait func()) {
	opts := retentionOptions(e, time.Now())
	if opts.Before.IsZero() && opts.MaxActions == 0 {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		start := time.Now()
		res, err := st.Prune(ctx, opts)
		switch {
		case err != nil && ctx.Err() != nil:
			e.logger.Info("retention stopped with the writer", "deleted", res.Total)
		case err != nil:
			e.logger.Warn("retention failed", "err", err, "deleted", res.Total)
		case res.Total > 0:
			attrs := []any{"deleted", res.Total, "max_age", e.cfg.Retention.MaxAge.D().String(),
				"max_actions", opts.MaxActions, "rollup_hours", res.RollupHours, "seconds", time.Since(start).Seconds()}
			for _, t := range store.PruneTables {
				if res.Deleted[t] > 0 {
					attrs = append(attrs, t, res.Deleted[t])
				}
			}
			e.logger.Info("retention applied", attrs...)
		default:
			e.logger.Debug("retention: nothing to delete")
		}
	})
	return wg.Wait
}
