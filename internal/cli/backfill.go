package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/ingest"
)

func backfillCommand() *cli.Command {
	return &cli.Command{
		Name:  "backfill",
		Usage: "ingest the AI clients' existing history: every transcript not read yet, with progress",
		Description: `The first thing to run after installing observer: reads every Claude Code and Codex transcript
on this machine that observer has not read yet (or the rest of one it read in part) and stores its
events, so that cost, the dashboard and observer-mcp cover the past too. It is ` + "`observerctl scan`" + `
over everything: the same cursors, so a file is never read twice, a stopped backfill resumes where
it stopped, and a second one finds nothing new. When observer runs, the events go through its bus;
otherwise backfill hosts a writer itself for the run and hands it the events directly. On a terminal, a progress line
(files, MB, rate, time left) is kept on stderr.

Claude Code: ~/.claude/projects (and ~/.config/claude/projects), or every directory in
CLAUDE_CONFIG_DIR. Codex: $CODEX_HOME (default ~/.codex) sessions and archived_sessions. Gemini
CLI, Qwen Code and Pi: as for ` + "`observerctl scan`" + `. While observer-watch runs it owns the cursors and ingests the history itself: backfill then says so.

Exit codes: 0 done (or nothing new); 1 some files could not be read (listed), or observer-watch
holds the cursors; 64 bad flags; 69 the store is held by a writer whose bus cannot be reached.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "client", Usage: clientFlagUsage},
			&cli.StringFlag{Name: "since", Usage: "only files modified since a duration ago (24h, 7d) or a date"},
			&cli.BoolFlag{Name: "dry-run", Usage: "read and count, publish nothing, remember nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the summary as JSON"},
		},
		Action: runBackfill,
	}
}

// backfillReport is backfill's JSON: scan's summary, and whether it was a dry run.
type backfillReport struct {
	DryRun bool `json:"dry_run"`
	ingest.Summary
}

func runBackfill(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("backfill takes no arguments, got %q", c.Args().First())
	}
	h, err := ingestFromFlags(c, progressLine)
	if err != nil {
		return err
	}
	sum, e, ads, dryRun := h.sum, h.e, h.ads, h.dryRun
	if c.Bool("json") {
		writeJSON(e.stdout, backfillReport{DryRun: dryRun, Summary: sum})
	} else if h.scanErr == nil {
		mb := float64(sum.Bytes) / (1 << 20)
		switch {
		case sum.Files == 0:
			var roots []string
			for _, a := range ads {
				roots = append(roots, a.Client())
			}
			fmt.Fprintf(e.stdout, "no transcript files found for %s (see `observerctl backfill --help` for where they are looked for)\n", strings.Join(roots, ", "))
		case sum.Read == 0 && len(sum.Errors) == 0:
			fmt.Fprintf(e.stdout, "nothing to backfill: all %d transcript file(s) were read already\n", sum.Files)
		default:
			verb := "backfilled"
			if dryRun {
				verb = "would backfill (dry run)"
			}
			fmt.Fprintf(e.stdout, "%s %d of %d files: %s events from %s lines (%d malformed), %.1f MB in %.2fs\n",
				verb, sum.Read, sum.Files, n(sum.Events), n(sum.Lines), sum.Malformed, mb, sum.Seconds)
			if sum.TotalSeconds > 0 {
				fmt.Fprintf(e.stdout, "stored, indexed and analysed in %.2fs\n", sum.TotalSeconds)
			}
			for t, k := range sum.Unknown {
				fmt.Fprintf(e.stdout, "  unknown record type %q: %d line(s)\n", t, k)
			}
		}
	}
	return h.result()
}

// progressLine shows how far a backfill is: files, bytes, rate and the time left at that rate.
func progressLine(p ingest.Progress, took time.Duration) string {
	pct := 100.0
	if p.Bytes > 0 {
		pct = 100 * float64(p.BytesDone) / float64(p.Bytes)
	}
	rate := float64(p.BytesDone) / max(took.Seconds(), 0.001)
	left := "-"
	if rate > 0 && p.BytesDone > 0 {
		left = time.Duration(float64(p.Bytes-p.BytesDone) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("backfill: %3.0f%%  %d/%d files  %.1f/%.1f MB  %.1f MB/s  %s left", pct, p.FilesDone, p.Files,
		float64(p.BytesDone)/(1<<20), float64(p.Bytes)/(1<<20), rate/(1<<20), left)
}
