package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/query"
)

// limitsReport is what `observerctl limits --json` prints.
type limitsReport struct {
	// Limits are the providers' own figures, the latest of each window ([] when none was seen).
	Limits []query.Limit `json:"limits"`
	// Estimated is set only when no provider figure was ever seen: the token-based 5-hour blocks
	// of the clients that have one active, which are observer's estimate, not the provider's.
	Estimated *estimatedLimits `json:"estimated,omitempty"`
}

type estimatedLimits struct {
	Note   string        `json:"note"`
	Blocks []query.Block `json:"blocks"`
}

const noLimitSeen = `no provider limit figure seen yet. observer reads them from the answers to plan (subscription)
traffic through observer-proxy (Claude Code on a Pro or Max plan, Codex on a ChatGPT plan) and from
Codex's own records; API-key traffic carries none.`

func limitsCommand() *cli.Command {
	return &cli.Command{
		Name:  "limits",
		Usage: "how close each plan usage limit is (5-hour and weekly windows), when it resets, and a forecast",
		Description: `Shows, per provider and window, the provider's own latest figures of a subscription's usage
limits: the share used, its status (allowed, allowed_warning, rejected), when the window resets (local
time, and in how long), the burn rate over the window so far (share per hour from the window's start)
and a forecast: at that rate the limit is reached at HH:MM, or not before the reset.

Where the figures come from: Anthropic answers every Messages call of a Claude Pro/Max (OAuth)
session with anthropic-ratelimit-unified-* headers (5h, 7d and per-model weekly windows);
OpenAI answers Codex on a ChatGPT plan with x-codex-primary-* (5 hours) and x-codex-secondary-*
(weekly) headers, and Codex writes the same figures into its rollouts (rate_limits). observer-proxy
and the Codex reader keep them; nothing of the account is stored.

When no provider figure was ever seen, it says so and shows the token-based 5-hour blocks of the
clients active now, marked estimated: observer's guess from token counts, never the provider's.

The JSON has "limits" (provider, window, window_minutes, used_percent, status, resets_at,
resets_in, plan, client, source, member, first_seen, seen_at, reset (the window reset since),
burn_percent_per_hour, forecast {reached_at, before_reset, text}) and, only without any figure,
"estimated" {note, blocks}.

Exit codes: 0 done; 64 bad flags; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			now := time.Now()
			rep := limitsReport{Limits: []query.Limit{}}
			ls, err := query.Limits(c.Context, st.DB, now)
			if err != nil {
				return err
			}
			rep.Limits = append(rep.Limits, ls...)
			if len(rep.Limits) == 0 {
				blocks, err := query.ActiveBlocks(c.Context, st.DB, now)
				if err != nil {
					return err
				}
				rep.Estimated = &estimatedLimits{Note: query.EstimatedBlocksNote, Blocks: blocks}
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			printLimits(e.stdout, rep, now)
			return nil
		},
	}
}

func printLimits(w interface{ Write([]byte) (int, error) }, rep limitsReport, now time.Time) {
	if rep.Estimated != nil {
		fmt.Fprintln(w, noLimitSeen)
		if len(rep.Estimated.Blocks) == 0 {
			fmt.Fprintln(w, "\nNo client has an active 5-hour block either.")
			return
		}
		fmt.Fprintln(w, "\nESTIMATED from token counts (observer's 5-hour blocks, not the provider's figures):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT\tBLOCK\tTOKENS\tCOST $\tENDS")
		for _, b := range rep.Estimated.Blocks {
			fmt.Fprintf(tw, "%s\t%s–%s\t%d\t%.2f\tin %s\n", b.Client, b.Start.Local().Format("15:04"), b.End.Local().Format("15:04"),
				b.Tokens.Total, b.CostUSD, query.Until(b.End.Sub(now)))
		}
		tw.Flush()
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tWINDOW\tUSED\tSTATUS\tRESETS\tBURN\tFORECAST\tSEEN")
	for _, l := range rep.Limits {
		prov := l.Provider
		if l.Member != "" {
			prov += " (" + l.Member + ")"
		}
		resets, burn, fc := "-", "-", "-"
		switch {
		case l.Reset:
			resets = "reset at " + localTime(l.ResetsAt, now) + "; no figure since"
		case !l.ResetsAt.IsZero():
			resets = localTime(l.ResetsAt, now) + " (in " + l.ResetsIn + ")"
		}
		if l.BurnPerHour > 0 {
			burn = fmt.Sprintf("%.1f%%/h", l.BurnPerHour)
		}
		if l.Forecast != nil {
			fc = l.Forecast.Text
		}
		status := l.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%%\t%s\t%s\t%s\t%s\t%s ago\n", prov, l.Window, trimPct(l.UsedPercent), status, resets, burn, fc,
			query.Until(now.Sub(l.SeenAt)))
	}
	tw.Flush()
}

// localTime is t in local time: its time of day within a day of now, else with its date.
func localTime(t, now time.Time) string {
	lt := t.Local()
	if d := t.Sub(now); d < 20*time.Hour && d > -20*time.Hour {
		return lt.Format("15:04")
	}
	return lt.Format("Mon 2 Jan 15:04")
}

// trimPct prints a percentage without trailing zeros: 42, 7.5, 33.33.
func trimPct(p float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", p), "0"), ".")
}
