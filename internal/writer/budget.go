package writer

import (
	"context"
	"errors"
	"time"

	"github.com/observerhq/observer/internal/budget"
	"github.com/observerhq/observer/pkg/config"
)

// budgetEvery is how often the writer checks the budgets when BudgetEvery is zero.
const budgetEvery = 30 * time.Second

// budgetLoop checks the budgets at once and then every BudgetEvery until ctx ends, storing each
// newly crossed threshold as an alert and publishing it on the bus (see package budget). With a
// ConfigSource, config.toml is read once at each check: the budgets, the plan limits' settings and
// the [alerts] webhook follow it. The plan limits are checked with the budgets, and also whenever a
// stored batch held a limit figure (limitKick), with the settings of the last check.
func (w *Writer) budgetLoop(ctx context.Context) {
	every := w.BudgetEvery
	if every <= 0 {
		every = budgetEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	cur, lim := w.Budget, w.Limits
	for {
		if w.ConfigSource != nil {
			if c, err := w.ConfigSource(); err != nil {
				w.Logger.Warn("config.toml not applied; the budgets and alerts in force stay", "err", err)
			} else {
				cur, lim = c.Budget, &c.Limits
				if w.Webhook != nil {
					w.Webhook.Configure(c.Alerts)
				}
			}
		}
		w.limitCheck(ctx, lim)
		if budget.Enabled(cur) {
			raised, err := budget.Raise(ctx, w.Store, cur, time.Now(), time.Local, w.publishAlert)
			for _, a := range raised {
				w.Logger.Warn("budget alert", "scope", a.Scope, "project", a.Project, "period", a.Period,
					"threshold", a.Threshold, "spent_usd", a.SpentUSD, "limit_usd", a.LimitUSD)
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				w.Logger.Warn("budget check failed; will retry", "err", err)
			}
		}
		if !w.waitTick(ctx, t.C, lim) {
			return
		}
	}
}

// waitTick waits for the next budget check, checking the plan limits (with lim) meanwhile each
// time a batch stored a limit figure; false when ctx ended.
func (w *Writer) waitTick(ctx context.Context, tick <-chan time.Time, lim *config.Limits) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-w.limitKick:
			w.limitCheck(ctx, lim)
		}
	}
}

// limitCheck raises the alerts the latest plan limit figures call for (budget.RaiseLimits) under
// the [limits] settings l; none without settings.
func (w *Writer) limitCheck(ctx context.Context, l *config.Limits) {
	if l == nil {
		return
	}
	raised, err := budget.RaiseLimits(ctx, w.Store, *l, time.Now(), w.publishAlert)
	for _, a := range raised {
		w.Logger.Warn("limit alert", "scope", a.Scope, "member", a.Project, "resets", a.Period, "threshold", a.Threshold,
			"message", a.Message)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		w.Logger.Warn("limit check failed; will retry", "err", err)
	}
}
