package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// budgetReport is the JSON of `observerctl budget --json`.
type budgetReport struct {
	Budgets []budget.Status `json:"budgets"`
	Alerts  []event.Alert   `json:"alerts"` // of the last 7 days, newest first
}

func budgetCommand() *cli.Command {
	return &cli.Command{
		Name:  "budget",
		Usage: "spending against the [budget] limits of config.toml, and the alerts raised",
		Description: `Shows each limit set under [budget] in config.toml: daily (USD per local day) and monthly (USD
per local calendar month) across every client and project, and projects (USD per local month for
one project path; a proxy turn counts under its session's project). Spending counts every model
turn once, at its recorded dollars, as ` + "`observerctl cost`" + ` does.

While observer runs, the writer checks the budgets every 30 seconds and raises an alert when a
budget's spending reaches 80% and again 100% of its limit, once per period: it is stored, shown on
the dashboard's Overview and published on the bus. The alerts of the last 7 days are listed here,
the plan limit alerts ([limits] warn_at, kind "limit") among them, also when no budget is set.

The JSON has "budgets" (scope day|month|project, project, period (its first local day),
period_start, period_end, spent_usd, limit_usd, percent, crossed (the thresholds reached)) and
"alerts" (time, kind (budget or limit), scope, project, period, threshold, spent_usd, limit_usd,
message).

Exit codes: 0 done (also when no budget is set); 64 a bad flag or config.toml; 69 no store yet.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print JSON"},
		},
		Action: func(c *cli.Context) error {
			e, err := load(c)
			if err != nil {
				return err
			}
			rep := budgetReport{Budgets: []budget.Status{}, Alerts: []event.Alert{}}
			if !budget.Enabled(e.cfg.Budget) {
				// The plan limit alerts ([limits]) are listed all the same, when there is a store.
				if st, err := openReadStore(c.Context, e); err == nil {
					rep.Alerts, err = store.RecentAlerts(c.Context, st.DB, time.Now().AddDate(0, 0, -7), 100)
					st.Close()
					if err != nil {
						return err
					}
				}
				if c.Bool("json") {
					writeJSON(e.stdout, rep)
					return nil
				}
				fmt.Fprintf(e.stdout, "no budget is set: add daily, monthly or projects under [budget] in %s\n", filepath.Join(e.cfg.Home, "config.toml"))
				printAlerts(e.stdout, rep.Alerts)
				return nil
			}
			st, err := openReadStore(c.Context, e)
			if err != nil {
				return err
			}
			defer st.Close()
			now := time.Now()
			if rep.Budgets, err = budget.Check(c.Context, st.DB, e.cfg.Budget, now, time.Local); err != nil {
				return err
			}
			if rep.Alerts, err = store.RecentAlerts(c.Context, st.DB, now.AddDate(0, 0, -7), 100); err != nil {
				return err
			}
			if c.Bool("json") {
				writeJSON(e.stdout, rep)
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "SCOPE\tPROJECT\tPERIOD\tSPENT $\tLIMIT $\tUSED\tSTATE")
			for _, s := range rep.Budgets {
				period := s.Period
				if s.Scope != budget.ScopeDay {
					period = s.PeriodStart.Format("2006-01")
				}
				state := "ok"
				if len(s.Crossed) > 0 {
					state = fmt.Sprintf("reached %d%%", s.Crossed[len(s.Crossed)-1])
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%.2f\t%.0f%%\t%s\n", s.Scope, firstNonEmptyStr(s.Project, "-"), period,
					s.SpentUSD, s.LimitUSD, s.Percent, state)
			}
			tw.Flush()
			printAlerts(e.stdout, rep.Alerts)
			return nil
		},
	}
}

// printAlerts lists alerts under a heading; nothing when there are none.
func printAlerts(w io.Writer, alerts []event.Alert) {
	if len(alerts) == 0 {
		return
	}
	fmt.Fprintln(w, "\nalerts of the last 7 days:")
	for _, a := range alerts {
		fmt.Fprintf(w, "  %s  %s\n", a.Time.Local().Format("2006-01-02 15:04"), strings.TrimSpace(a.Message))
	}
}

func firstNonEmptyStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
