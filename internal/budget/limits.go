package budget

import (
	"context"
	"fmt"
	"time"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// LimitAlerts are the alerts the latest plan limit figures call for at now: a window whose used
// share reached l.WarnAt (when set), and a window the provider rejects requests in (threshold
// 100). A window that has reset since its figure was seen calls for none.
func LimitAlerts(ls []query.Limit, l config.Limits, now time.Time) []event.Alert {
	var out []event.Alert
	for _, w := range ls {
		if w.Reset {
			continue
		}
		period := w.FirstSeen.Format("2006-01-02") // no reset given: one alert a day at most
		resets := ""
		if !w.ResetsAt.IsZero() {
			period = w.ResetsAt.UTC().Format(time.RFC3339)
			resets = fmt.Sprintf("; resets %s (in %s)", w.ResetsAt.Local().Format("Mon 15:04"), w.ResetsIn)
		}
		scope := w.Provider + " " + w.Window
		add := func(th int, msg string) {
			out = append(out, event.Alert{Time: now.UTC(), Kind: event.AlertLimit, Scope: scope, Project: w.Member,
				Period: period, Threshold: th, Message: msg + resets})
		}
		rejected := w.Status == event.LimitRejected || w.UsedPercent >= 100
		if l.WarnAt > 0 && w.UsedPercent >= l.WarnAt && (!rejected || int(l.WarnAt) < 100) {
			add(int(l.WarnAt), fmt.Sprintf("%s %s limit at %s%% (warning at %g%%)", w.Provider, w.Window, pct(w.UsedPercent), l.WarnAt))
		}
		if rejected {
			add(100, fmt.Sprintf("%s %s limit reached: the provider rejects requests", w.Provider, w.Window))
		}
	}
	return out
}

func pct(p float64) string { return fmt.Sprintf("%.4g", p) }

// RaiseLimits stores each alert LimitAlerts calls for that has none yet for its window and
// threshold, and passes each new one to publish (when not nil). It returns the new alerts.
func RaiseLimits(ctx context.Context, st *store.Store, l config.Limits, now time.Time, publish func(event.Alert) error) ([]event.Alert, error) {
	ls, err := query.Limits(ctx, st.DB, now)
	if err != nil {
		return nil, err
	}
	return raise(ctx, st, LimitAlerts(ls, l, now), publish)
}
