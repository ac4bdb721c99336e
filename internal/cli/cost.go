package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

func costCommand() *cli.Command {
	return &cli.Command{
		Name:  "cost",
		Usage: "tokens and dollars, grouped by session, day, hour, model, project, client or member",
		Description: `Every model turn is counted once: from the proxy when it saw the turn (exact), else from the
client's transcript. Days are in local time. The JSON has a "rows" array whose objects carry the
group keys (session_id, client, day, hour, model, project, member) and input_tokens (net of cache),
output_tokens, cache_read_tokens, cache_creation_tokens (5m and 1h writes), cache_creation_1h_tokens,
reasoning_tokens, cost_usd, turns, proxy_turns, unreliable_turns, unpriced_turns and reliability
(the least trustworthy turn's: accurate = all measured by the proxy, approximate = some from
transcripts, unreliable = some from transcripts known to log placeholders, unknown price = some
turns of a model without a price, whose dollars are 0); and a "total" object.

--since and --until take a duration ago (24h, 7d), a local date (2026-11-01) or all (the default:
every command reports all time unless narrowed); --until is exclusive. A window without turns says
where the stored turns are. --project, --client and --session keep one of each (a proxy turn counts under its
session's project). On a team hub's store, --member keeps one member's turns and --group-by member
splits them by member (the hub's own turns under "-"); a single user's store has no members.

--plans sets each local calendar month's API-equivalent dollars, by provider (the company that
sells the turn's model; github for the Copilot clients; unknown when the model names none), beside
the monthly plan config.toml's [plans] gives the provider (anthropic = { name = "max-20x",
usd_month = 200 }) and their ratio: 12.4x is a month whose turns would have cost 12.4 times the
plan at API rates. The providers add up to the plain report's total. Its JSON has "rows" (month,
provider, api_usd, turns, unpriced_turns, reliability, and plan, plan_usd and ratio where the
provider has a plan), "plans", "total_api_usd" and "turns".

Exit codes: 0 done; 64 a bad flag (an unknown group key, a bad time); 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "group-by", Aliases: []string{"g"}, Usage: "one or more of " + strings.Join(query.CostKeys, ", ")},
			&cli.StringFlag{Name: "since", Value: "all", Usage: "only turns since a duration ago (24h, 7d), a date (2026-11-01) or all"},
			&cli.StringFlag{Name: "until", Usage: "only turns before a duration ago or a date"},
			&cli.StringFlag{Name: "project", Usage: "only this project (its path)"},
			&cli.StringFlag{Name: "client", Usage: "only this client (claude-code, codex, ...)"},
			&cli.StringFlag{Name: "session", Usage: "only this session (its id, or a unique prefix of it)"},
			&cli.StringFlag{Name: "member", Usage: "only this team member's turns (a hub's store)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			&cli.BoolFlag{Name: "plans", Usage: "API-equivalent dollars per month and provider beside the [plans] of config.toml"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			var groups []string
			for _, g := range c.StringSlice("group-by") {
				for _, part := range strings.Split(g, ",") {
					if part = strings.TrimSpace(part); part != "" {
						groups = append(groups, part)
					}
				}
			}
			now := time.Now()
			since, err := parseSince(c.String("since"), now)
			if err != nil {
				return usageErr("--since: %v", err)
			}
			until, err := parseSince(c.String("until"), now)
			if err != nil {
				return usageErr("--until: %v", err)
			}
			if !since.IsZero() && !until.IsZero() && !until.After(since) {
				return usageErr("--until (%s) must be after --since (%s)", until.Format(time.RFC3339), since.Format(time.RFC3339))
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			session := c.String("session")
			if session != "" {
				ref, err := store.ResolveSession(c.Context, st.DB, session)
				if err != nil {
					return withCode(ExitFailure, err)
				}
				session = ref.ID
			}
			filter := query.Filter{Since: since, Until: until, Project: c.String("project"), Client: c.String("client"), SessionID: session, Member: c.String("member")}
			if c.Bool("plans") {
				if len(groups) > 0 {
					return usageErr("--plans groups by month and provider: drop --group-by")
				}
				return costPlans(c.Context, e, st, query.CostQuery{Filter: filter}, c.Bool("json"))
			}
			rep, err := query.Cost(c.Context, st.DB, query.CostQuery{GroupBy: groups, Filter: filter})
			if err != nil {
				if strings.Contains(err.Error(), "cannot group by") {
					return withCode(ExitUsage, err)
				}
				return err
			}
			if c.String("member") == "" { // request compression is the local proxy's, not a member's
				if rep.Compression, err = query.Compression(c.Context, st.DB, query.CostQuery{Filter: query.Filter{Since: since, Until: until, Client: c.String("client"), SessionID: session}}); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			if rep.Total.Turns == 0 {
				if hint := windowHint(c.Context, st, since, until); hint != "" {
					fmt.Fprintln(e.stdout, hint)
					return nil
				}
			}
			printCost(e, rep)
			return nil
		},
	}
}

// openReadStore opens the store read-only, or says there is none yet (exit 69).
func openReadStore(ctx context.Context, e *env) (*store.Store, error) {
	if _, err := os.Stat(e.cfg.StorePath()); err != nil {
		return nil, withCode(ExitUnavailable, fmt.Errorf("no store at %s yet: start observer (`observerctl up`) or ingest history (`observerctl scan`)", e.cfg.StorePath()))
	}
	st, err := store.OpenReader(ctx, e.cfg.StorePath())
	if err != nil {
		return nil, withCode(ExitUnavailable, err)
	}
	return st, nil
}

// parseSince reads "24h", "7d", "30m" or a date "2006-01-02" (local midnight).
// "all" (or nothing) is no bound: every command's window is all time unless narrowed.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" || s == "all" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		if _, err := fmt.Sscanf(days, "%d", &n); err == nil && n >= 0 && fmt.Sprint(n) == days {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, errors.New("a duration ago must be positive")
		}
		return now.Add(-d), nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (24h, 7d), a date (2026-11-01) nor all", s)
}

// windowHint says where the turns are when a window holds none: "" when the window is all time.
func windowHint(ctx context.Context, st *store.Store, since, until time.Time) string {
	if since.IsZero() && until.IsZero() {
		return ""
	}
	if in, err := query.Cost(ctx, st.DB, query.CostQuery{Filter: query.Filter{Since: since, Until: until}}); err != nil || in.Total.Turns > 0 {
		return "" // the window has turns: not the reason the answer is empty
	}
	rep, err := query.Cost(ctx, st.DB, query.CostQuery{GroupBy: []string{"day"}})
	if err != nil || rep.Total.Turns == 0 {
		return "no model turns stored yet"
	}
	window := "in this window"
	switch {
	case !since.IsZero() && until.IsZero():
		window = "since " + since.Local().Format("2006-01-02 15:04")
	case since.IsZero():
		window = "before " + until.Local().Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("no model turns %s; the store has %s from %s to %s: --since all", window,
		plural(rep.Total.Turns, "turn"), rep.Rows[0].Day, rep.Rows[len(rep.Rows)-1].Day)
}

func plural(count int64, what string) string {
	if count == 1 {
		return "1 " + what
	}
	return n(count) + " " + what + "s"
}

func printCost(e *env, rep *query.CostReport) {
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	bySession := slices.Contains(rep.GroupBy, "session")
	var head []string
	for _, g := range rep.GroupBy {
		head = append(head, strings.ToUpper(g))
		if g == "session" {
			head = append(head, "TITLE")
		}
	}
	head = append(head, "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "REASONING", "TURNS", "COST $", "RELIABILITY")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	unpriced := false
	line := func(keys []string, r query.CostRow) {
		usd := fmt.Sprintf("%.4f", r.CostUSD)
		if r.UnpricedTurns > 0 {
			usd += " *"
			unpriced = true
		}
		cells := append(keys, n(r.InputTokens), n(r.OutputTokens), n(r.CacheReadTokens), n(r.CacheCreationTokens),
			n(r.ReasoningTokens), n(r.Turns), usd, r.Reliability)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	for _, r := range rep.Rows {
		var keys []string
		for _, g := range rep.GroupBy {
			v := map[string]string{"session": r.SessionID, "day": r.Day, "hour": r.Hour, "model": r.Model, "project": r.Project, "client": r.Client, "member": r.Member}[g]
			if v == "" {
				v = "-"
			}
			keys = append(keys, v)
			if g == "session" {
				keys = append(keys, cmp.Or(clip(r.Title, 40), "-"))
			}
		}
		line(keys, r)
	}
	if len(rep.GroupBy) > 0 {
		keys := make([]string, len(rep.GroupBy))
		if bySession {
			keys = append(keys, "")
		}
		keys[0] = "TOTAL"
		line(keys, rep.Total)
	} else if len(rep.Rows) == 0 {
		line(nil, rep.Total)
	}
	tw.Flush()
	if unpriced {
		fmt.Fprintf(e.stdout, "* %d turn(s) of models without a price are counted as $0: observerctl prices list --unpriced\n", rep.Total.UnpricedTurns)
	}
	if c := rep.Compression; c != nil {
		fmt.Fprintf(e.stdout, "\nRequest compression saved %s input tokens (estimated: bytes / 4), $%.4f at the models' input prices:\n",
			n(c.Total.TokensSaved), c.Total.SavedUSD)
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "MECHANISM\tDECISIONS\tBYTES BEFORE\tBYTES AFTER\tTOKENS SAVED\tSAVED $\t")
		for _, r := range append(c.Rows, c.Total) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\t\n", cmp.Or(r.Mechanism, "TOTAL"), n(r.Decisions), n(r.BytesBefore),
				n(r.BytesAfter), n(r.TokensSaved), r.SavedUSD)
		}
		tw.Flush()
	}
}

// clip cuts s to max characters, with "…" when it was longer.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// n formats a count with thousands separators.
func n(v int64) string {
	s := fmt.Sprint(v)
	if v < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
