package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/clientconfig"
	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/internal/readers"
	"github.com/observerhq/observer/pkg/store"
)

func blocksCommand() *cli.Command {
	return &cli.Command{
		Name:  "blocks",
		Usage: "5-hour billing blocks per client: what each cost, the active one's burn rate and projection",
		Description: `A block is the 5-hour window a subscription counts usage in (Claude's, and a ChatGPT plan's
Codex), by ccusage's rule: it starts at its first model turn's time floored to the (UTC) hour and
lasts 5 hours; the first turn at or after its end starts the next one. Time between blocks is
shown as idle. Each client has its own limit, so each has its own blocks, drawn from its own
turns: a Codex turn never starts, extends or splits a Claude Code block. Every turn counts once
(from the proxy when it saw it, else from the client's transcript). The claude-code blocks are
the ones ` + "`ccusage blocks`" + ` shows (it reads Claude Code only).

The table has one row per block or idle gap, client by client (CLIENT column), each client's
oldest first: start and end (local time), its last turn, turns, tokens (input, output, cache
read, cache write), cost, models, and the burn rate over its first to last turn (dollars per
hour). Each client's active block (the one now is in) also gets a line with the minutes left and
the tokens and dollars it will reach at its end at that burn rate.

--client NAME shows one client's blocks (claude-code, codex, ...; also claude, gemini, qwen, roo):
a client with no turns in the store gives no blocks (exit 0), a name no reader knows and the
store has no turn of is a usage error. --since and --until (a duration ago such as 24h or 7d, a
local date such as 2026-11-01, or "all") select the blocks that overlap the range, each shown
whole; the default is all time. --active shows each client's active block only (and
ignores the range); with --client, that client's.

The JSON has "client" (when --client was given) and "blocks", client by client, each with client,
start, end, first_turn, last_turn, idle, active, turns, unpriced_turns, models, cost_usd, tokens
{input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, total_tokens}, burn_rate
{tokens_per_minute, cost_per_hour_usd}, remaining_minutes and projection {total_tokens, cost_usd}.

Exit codes: 0 done (also when there is no active block); 64 a bad flag or an unknown client; 69
no store yet.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Value: "all", Usage: "blocks overlapping the time since a duration ago (24h, 7d), a date (2026-11-01) or all"},
			&cli.StringFlag{Name: "until", Usage: "blocks starting before a duration ago or a date"},
			&cli.StringFlag{Name: "client", Usage: "only this client's blocks (claude-code, codex, ...)"},
			&cli.BoolFlag{Name: "active", Usage: "only each client's active block"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			now := time.Now()
			q := query.BlocksQuery{Now: now}
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
			if q.Client, err = blocksClient(c.Context, st, c.String("client")); err != nil {
				return err
			}
			var rep *query.BlocksReport
			if c.Bool("active") {
				// The blocks now is in, each client's.
				all, err := query.Blocks(c.Context, st.DB, query.BlocksQuery{Since: now, Now: now, Client: q.Client})
				if err != nil {
					return err
				}
				rep = &query.BlocksReport{Since: all.Since, Client: q.Client, Blocks: []query.Block{}}
				for _, b := range all.Blocks {
					if b.Active {
						rep.Blocks = append(rep.Blocks, b)
					}
				}
			} else if rep, err = query.Blocks(c.Context, st.DB, q); err != nil {
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

// blocksClient returns the client --client names (an alias such as claude resolved), "" for
// every client. A name is an error (exit 64) unless the store has turns of it or a reader or
// `init` knows it.
func blocksClient(ctx context.Context, st *store.Store, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if ads, err := readers.Select(name); err == nil && len(ads) == 1 {
		return ads[0].Client(), nil
	}
	if slices.Contains(clientconfig.Clients, name) {
		return name, nil
	}
	have, err := query.BlockClients(ctx, st.DB)
	if err != nil {
		return "", err
	}
	if slices.Contains(have, name) {
		return name, nil
	}
	known := slices.Clone(clientconfig.Clients)
	for _, a := range readers.All() {
		known = append(known, a.Client())
	}
	slices.Sort(known)
	inStore := "no turns yet"
	if len(have) > 0 {
		inStore = "turns of " + strings.Join(have, ", ")
	}
	return "", usageErr("--client: no client %q: the store has %s (known clients: %s)", name, inStore, strings.Join(slices.Compact(known), ", "))
}

func printBlocks(e *env, rep *query.BlocksReport, activeOnly bool) {
	if len(rep.Blocks) == 0 {
		of := ""
		if rep.Client != "" {
			of = " of " + rep.Client
		}
		if activeOnly {
			fmt.Fprintf(e.stdout, "no active block%s: no model turn in the last 5 hours' block\n", of)
		} else {
			fmt.Fprintf(e.stdout, "no model turns%s in this range\n", of)
		}
		return
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tSTART\tEND\tSTATUS\tLAST TURN\tTURNS\tTOKENS\tCOST $\tBURN $/H\tMODELS")
	for _, b := range rep.Blocks {
		start, end := b.Start.Local().Format("2006-01-02 15:04"), b.End.Local().Format("15:04")
		if b.End.Local().YearDay() != b.Start.Local().YearDay() {
			end = b.End.Local().Format("01-02 15:04")
		}
		if b.Idle {
			fmt.Fprintf(tw, "%s\t%s\t%s\tidle %s\t\t\t\t\t\t\n", b.Client, start, end, span(b.End.Sub(b.Start)))
			continue
		}
		status, burn := "finished", "-"
		if b.Active {
			status = "ACTIVE"
		}
		if b.Burn != nil {
			burn = fmt.Sprintf("%.2f", b.Burn.CostPerHourUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t%s\n", b.Client, start, end, status, b.LastTurn.Local().Format("15:04"),
			n(b.Turns), n(b.Tokens.Total), b.CostUSD, burn, strings.Join(b.Models, ", "))
	}
	tw.Flush()
	for _, b := range rep.Blocks {
		if !b.Active {
			continue
		}
		line := fmt.Sprintf("active block of %s: %s left (ends %s)", b.Client, span(time.Duration(b.Remaining)*time.Minute), b.End.Local().Format("15:04"))
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

func sumUnpriced(bs []query.Block) (t int64) {
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
