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
// BudgetSource the budgets are read again at each check, and with AlertsSource the [alerts]
// webhook. The plan limits are checked with the budgets, and also whenever a stored batch held a
// limit figure (limitKick).
func (w *Writer) budgetLoop(ctx context.Context) {
	every := w.BudgetEvery
	if every <= 0 {
		every = budgetEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	cur := w.Budget
	for {
		if w.BudgetSource != nil {
			if b, err := w.BudgetSource(); err != nil {
				w.Logger.Warn("config.toml not applied; the budgets in force stay", "err", err)
			} else {
				cur = b
			}
		}
		if w.AlertsSource != nil && w.Webhook != nil {
			if a, err := w.AlertsSource(); err == nil {
				w.Webhook.Configure(a)
			}
		}
		w.limitCheck(ctx)
		if !budget.Enabled(cur) {
			if !w.waitTick(ctx, t.C) {
				return
			}
			continue
		}
		raised, err := budget.Raise(ctx, w.Store, cur, time.Now(), time.Local, w.publishAlert)
		for _, a := range raised {
			w.Logger.Warn("budget alert", "scope", a.Scope, "project", a.Project, "period", a.Period,
				"threshold", a.Threshold, "spent_usd", a.SpentUSD, "limit_usd", a.LimitUSD)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			w.Logger.Warn("budget check failed; will retry", "err", err)
		}
		if !w.waitTick(ctx, t.C) {
			return
		}
	}
}

// waitTick waits for the next budget check, checking the plan limits meanwhile each time a batch
// stored a limit figure; false when ctx ended.
func (w *Writer) waitTick(ctx context.Context, tick <-chan time.Time) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-w.limitKick:
			w.limitCheck(ctx)
		}
	}
}

// limitCheck raises the alerts the latest plan limit figures call for (budget.RaiseLimits), with
// the [limits] settings of Limits or LimitsSource; with neither, none.
func (w *Writer) limitCheck(ctx context.Context) {
	var l config.Limits
	switch {
	case w.LimitsSource != nil:
		cur, err := w.LimitsSource()
		if err != nil {
			if w.Limits == nil {
				return
			}
			cur = *w.Limits
		}
		l = cur
	case w.Limits != nil:
		l = *w.Limits
	default:
		return
	}
	raised, err := budget.RaiseLimits(ctx, w.Store, l, time.Now(), w.publishAlert)
	for _, a := range raised {
		w.Logger.Warn("limit alert", "scope", a.Scope, "member", a.Project, "resets", a.Period, "threshold", a.Threshold,
			"message", a.Message)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		w.Logger.Warn("limit check failed; will retry", "err", err)
	}
}
