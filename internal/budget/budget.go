// Package budget checks spending against the [budget] limits of config.toml and raises alerts.
//
// Limits: daily is USD per local day and monthly USD per local calendar month, across every
// client and project; projects maps a project's path to USD per local calendar month for that
// project (a proxy turn counts under its session's project, as in `observerctl cost`). Spending
// is query.Cost's total (query.Spent): every model turn once, at its recorded dollars; turns of a
// model without a price count $0.
//
// Alerts: a budget alerts when its spending reaches 80% and again at 100% of its limit, once per
// period and threshold. The writer (the store's one owner) calls Raise every 30 seconds; the
// store's alerts table has one row per kind, scope, project, period and threshold, so a restart or
// a repeated check never alerts twice, and a threshold crossed while the writer was down alerts
// at its next start. A budget set, or lowered, mid-period alerts at once for every threshold the
// period has already crossed. Periods are keyed by their first local day ("2026-12-01").
package budget

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Scopes of a budget.
const (
	ScopeDay     = "day"
	ScopeMonth   = "month"
	ScopeProject = "project"
)

// Thresholds are the percents of a limit that raise an alert.
var Thresholds = []int{80, 100}

// Status is one budget's state in its current period. The JSON is what `observerctl budget
// --json` prints.
type Status struct {
	Scope       string    `json:"scope"`
	Project     string    `json:"project,omitempty"`
	Period      string    `json:"period"` // the period's first local day
	PeriodStart time.Time `json:"period_start"`
	PeriodEnd   time.Time `json:"period_end"` // exclusive
	SpentUSD    float64   `json:"spent_usd"`
	LimitUSD    float64   `json:"limit_usd"`
	Percent     float64   `json:"percent"`
	Crossed     []int     `json:"crossed"` // the Thresholds reached, lowest first
}

// Enabled reports whether b sets any limit.
func Enabled(b config.Budget) bool {
	if b.Daily > 0 || b.Monthly > 0 {
		return true
	}
	for _, v := range b.Projects {
		if v > 0 {
			return true
		}
	}
	return false
}

// ProjectPath is how a [budget] projects key names a project: a leading ~/ is the home
// directory, and the path is cleaned (no trailing slash).
func ProjectPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, rest)
		}
	}
	return filepath.Clean(p)
}

// Check returns the status of each limit b sets, at now, with days and months in loc: daily,
// then monthly, then the projects by path. A limit of 0 or less is no limit.
func Check(ctx context.Context, db *sql.DB, b config.Budget, now time.Time, loc *time.Location) ([]Status, error) {
	if loc == nil {
		loc = time.Local
	}
	t := now.In(loc)
	y, m, d := t.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, loc)
	month := time.Date(y, m, 1, 0, 0, 0, 0, loc)
	var out []Status
	add := func(scope, project string, start, end time.Time, limit float64) error {
		spent, err := query.Spent(ctx, db, query.CostQuery{Filter: query.Filter{Since: start, Until: end, Project: project}})
		if err != nil {
			return fmt.Errorf("budget %s: %w", scope, err)
		}
		s := Status{Scope: scope, Project: project, Period: start.Format("2006-01-02"), PeriodStart: start,
			PeriodEnd: end, SpentUSD: spent, LimitUSD: limit, Percent: 100 * spent / limit, Crossed: []int{}}
		for _, th := range Thresholds {
			if s.SpentUSD*100 >= limit*float64(th) {
				s.Crossed = append(s.Crossed, th)
			}
		}
		out = append(out, s)
		return nil
	}
	if b.Daily > 0 {
		if err := add(ScopeDay, "", day, day.AddDate(0, 0, 1), b.Daily); err != nil {
			return nil, err
		}
	}
	if b.Monthly > 0 {
		if err := add(ScopeMonth, "", month, month.AddDate(0, 1, 0), b.Monthly); err != nil {
			return nil, err
		}
	}
	limits := map[string]float64{}
	for p, v := range b.Projects {
		if v > 0 {
			limits[ProjectPath(p)] = v
		}
	}
	for _, p := range slices.Sorted(maps.Keys(limits)) {
		if err := add(ScopeProject, p, month, month.AddDate(0, 1, 0), limits[p]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Alerts returns the alerts of each threshold s has crossed, stamped now.
func (s Status) Alerts(now time.Time) []event.Alert {
	var out []event.Alert
	for _, th := range s.Crossed {
		what := map[string]string{ScopeDay: "daily budget", ScopeMonth: "monthly budget", ScopeProject: "budget of " + s.Project}[s.Scope]
		when := s.Period
		if s.Scope != ScopeDay {
			when = s.PeriodStart.Format("January 2006")
		}
		out = append(out, event.Alert{Time: now.UTC(), Kind: event.AlertBudget, Scope: s.Scope, Project: s.Project,
			Period: s.Period, Threshold: th, SpentUSD: s.SpentUSD, LimitUSD: s.LimitUSD,
			Message: fmt.Sprintf("%s reached %d%%: $%.2f of $%.2f spent (%.0f%%) in %s", what, th, s.SpentUSD, s.LimitUSD, s.Percent, when)})
	}
	return out
}

// Raise checks b at now and stores an alert for each threshold crossed that has none yet in its
// period; each new alert is then passed to publish (when not nil). It returns the new alerts. A
// publish error does not stop the others: the alert is stored, and shown from the store.
func Raise(ctx context.Context, st *store.Store, b config.Budget, now time.Time, loc *time.Location, publish func(event.Alert) error) ([]event.Alert, error) {
	statuses, err := Check(ctx, st.DB, b, now, loc)
	if err != nil {
		return nil, err
	}
	var alerts []event.Alert
	for _, s := range statuses {
		alerts = append(alerts, s.Alerts(now)...)
	}
	return raise(ctx, st, alerts, publish)
}

// raise stores each of alerts that is not stored yet and passes each new one to publish (when not
// nil); it returns the new ones. A publish error does not stop the others.
func raise(ctx context.Context, st *store.Store, alerts []event.Alert, publish func(event.Alert) error) ([]event.Alert, error) {
	var raised []event.Alert
	var errs []error
	for _, a := range alerts {
		isNew, err := st.InsertAlert(ctx, &a)
		if err != nil {
			return raised, err
		}
		if !isNew {
			continue
		}
		raised = append(raised, a)
		if publish != nil {
			if err := publish(a); err != nil {
				errs = append(errs, fmt.Errorf("publish alert %d: %w", a.ID, err))
			}
		}
	}
	return raised, errors.Join(errs...)
}
