package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Alerts: the writer stores each budget and plan limit alert (internal/budget) and publishes it on the bus
// outside the events stream. GET /api/alerts lists the stored ones; FollowAlerts hands the live
// ones to the browsers on /api/live as events of kind "alert" (to those following every kind and
// client, and the alert's project or every project). Acknowledging is the browser's business: the
// Overview's banner remembers the alerts dismissed in it (localStorage); the dashboard never
// writes to the store.

// alertsAPI answers /api/alerts: the alerts of the last days (1 to 365, default 7), newest first,
// at most limit (default 50).
func (s *Server) alertsAPI(ctx context.Context, q *reqParams) (any, error) {
	days := q.intParam("days", 7, 1, 365)
	limit := q.intParam("limit", 50, 1, maxPageSize)
	if err := q.done(); err != nil {
		return nil, err
	}
	out := map[string]any{"store": false, "days": days, "alerts": []event.Alert{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	alerts, err := store.RecentAlerts(ctx, db, q.now.AddDate(0, 0, -days), limit)
	if err != nil {
		return nil, err
	}
	out["store"], out["alerts"] = true, alerts
	return out, nil
}

// FollowAlerts subscribes the live tail to the bus's alerts, retrying every second while the bus
// is unreachable, until ctx ends.
func (s *Server) FollowAlerts(ctx context.Context, cl *bus.Client, logger *slog.Logger) {
	holdSubscription(ctx, logger, "alerts", func() (*bus.Subscription, error) { return cl.SubscribeAlerts(s.live.publishAlert) })
}

// publishAlert hands an alert to the browsers that follow every kind and client (and the
// alert's project, or every project). A limit alert's Project is the team member, not a project:
// it goes to the browsers following every project, and its note names no project.
func (h *Hub) publishAlert(a event.Alert) {
	project := a.Project
	if a.Kind == event.AlertLimit {
		project = ""
	}
	data, err := json.Marshal(LiveEvent{ID: fmt.Sprintf("alert-%d", a.ID), Kind: "alert", Time: a.Time, Source: "writer",
		Project: project, Summary: a.Message, Failed: a.Threshold >= 100})
	if err != nil {
		return
	}
	// The writer stored the alert before publishing it: the Overview's banner can show it now.
	note := bus.StoredNote{Kinds: []string{"alert"}}
	if project != "" {
		note.Projects = []string{project}
	}
	defer h.Changed(note)
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if sub.changes || sub.client != "" || sub.kind != "" || (sub.project != "" && sub.project != project) {
			continue
		}
		select {
		case sub.ch <- data:
		default:
			sub.dropped.Add(1)
		}
	}
}
