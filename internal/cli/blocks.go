package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/blocks"
)

func blocksCommand() *cli.Command {
	return &cli.Command{
		Name:  "blocks",
		Usage: "5-hour billing blocks: what each cost, the active one's burn rate and projection",
		Description: `A block is the 5-hour window a Claude subscription counts usage in, by ccusage's rule: it
starts at its first model turn's time floored to the (UTC) hour and lasts 5 hours; the first turn
at or after its end starts the next one. Time between blocks is shown as idle. Every turn counts
once (from the proxy when it saw it, else from the client's transcript), of every client.

Per block: start and end (local time), its last turn, turns, tokens (input, output, cache read,
cache write), cost, models, and the burn rate over its first to last turn (tokens per minute,
dollars per hour). The active block (the one now is in) also shows the minutes left and the
tokens and dollars it will reach at its end at that burn rate.

--since and --until (a duration ago such as 24h or 7d, a local date such as 2026-11-01, or "all")
select the blocks that overlap the range, each shown whole; the default is the last 7 days.
--active shows the active block only (and ignores the range). The JSON has "blocks", each with start, end, first_turn,
last_turn, idle, active, turns, unpriced_turns, models, cost_usd, tokens {input_tokens,
output_tokens, cache_read_tokens, cache_creation_tokens, total_tokens}, burn_rate
{tokens_per_minute, cost_per_hour_usd}, remaining_minutes and projection {total_tokens, cost_usd}.

Exit codes: 0 done (also when there is no active block); 64 a bad flag; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Value: "7d", Usage: "blocks overlapping the time since a duration ago (24h, 7d), a date (2026-11-01) or all"},
			&cli.StringFlag{Name: "until", Usage: "blocks starting before a duration ago or a date"},
			&cli.BoolFlag{Name: "active", Usage: "only the active block"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			now := time.Now()
			q := blocks.Query{Now: now}
			if s := c.String("since"); s != "all" {
				if q.Since, err = parseSince(s, now); err != nil {
					return usageErr("--since: %v", err)
				}
			}
			if q.Until, err = parseSince(c.String("until"), now); err != nil {
				return usageErr("--until: %v", err)
			}
			if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
				return usageErr("--until (%s) must be after --since (%s)", q.Until.Format(time.RFC3339), q.Since.Format(time.RFC3339))
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			var rep *blocks.Report
			if c.Bool("active") {
				rep = &blocks.Report{Since: now.UTC().Format(time.RFC3339), Blocks: []blocks.Block{}}
				b, err := blocks.Active(c.Context, st.DB, now)
				if err != nil {
					return err
				}
				if b != nil {
					rep.Blocks = append(rep.Blocks, *b)
				}
			} else if rep, err = blocks.Run(c.Context, st.DB, q); err != nil {
				return err
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			printBlocks(e, rep, c.Bool("active"))
			return nil
		},
	}
}

func printBlocks(e *env, rep *blocks.Report, activeOnly bool) {
	if len(rep.Blocks) == 0 {
		if activeOnly {
			fmt.Fprintln(e.stdout, "no active block: no model turn in the last 5 hours' block")
		} else {
			fmt.Fprintln(e.stdout, "no model turns in this range")
		}
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "START\tEND\tSTATUS\tLAST TURN\tTURNS\tTOKENS\tCOST $\tBURN $/H\tMODELS")
	for _, b := range rep.Blocks {
		start, end := b.Start.Local().Format("2006-01-02 15:04"), b.End.Local().Format("15:04")
		if b.End.Local().YearDay() != b.Start.Local().YearDay() {
			end = b.End.Local().Format("01-02 15:04")
		}
		if b.Idle {
			fmt.Fprintf(tw, "%s\t%s\tidle %s\t\t\t\t\t\t\n", start, end, span(b.End.Sub(b.Start)))
			continue
		}
		status, burn := "finished", "-"
		if b.Active {
			status = "ACTIVE"
		}
		if b.Burn != nil {
			burn = fmt.Sprintf("%.2f", b.Burn.CostPerHourUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t%s\n", start, end, status, b.LastTurn.Local().Format("15:04"),
			n(b.Turns), n(b.Tokens.Total), b.CostUSD, burn, strings.Join(b.Models, ", "))
	}
	tw.Flush()
	for _, b := range rep.Blocks {
		if !b.Active {
			continue
		}
		line := fmt.Sprintf("active block: %s left (ends %s)", span(time.Duration(b.Remaining)*time.Minute), b.End.Local().Format("15:04"))
		if b.Burn != nil {
			line += fmt.Sprintf("; burn %s tokens/min, $%.2f/h", n(int64(b.Burn.TokensPerMinute)), b.Burn.CostPerHourUSD)
		}
		if b.Projected != nil {
			line += fmt.Sprintf("; projected at its end: $%.2f, %s tokens", b.Projected.CostUSD, n(b.Projected.TotalTokens))
		}
		fmt.Fprintln(e.stdout, line)
	}
	if unpriced := sumUnpriced(rep.Blocks); unpriced > 0 {
		fmt.Fprintf(e.stdout, "note: %d turn(s) of a model without a price count $0\n", unpriced)
	}
}

func sumUnpriced(bs []blocks.Block) (t int64) {
	for _, b := range bs {
		t += b.Unpriced
	}
	return t
}

// span formats a duration as 2h13m, 47m or 3d4h.
func span(d time.Duration) string {
	d = d.Round(time.Minute)
	h, m := int(d.Hours()), int(d.Minutes())%60
	switch {
	case h >= 48:
		return fmt.Sprintf("%dd%dh", h/24, h%24)
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	}
	return fmt.Sprintf("%dm", m)
}
