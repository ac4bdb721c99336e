package codex

import (
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// rateLimits is a token_count's rate_limits: what the provider's response said of the ChatGPT
// plan's usage limits (codex-rs protocol RateLimitSnapshot). primary is the five-hour window,
// secondary the weekly one; limit_id names a limit family other than the main one ("codex");
// plan_type is often null, and so is the whole object on API-key use.
type rateLimits struct {
	LimitID   string       `json:"limit_id"`
	Primary   *limitWindow `json:"primary"`
	Secondary *limitWindow `json:"secondary"`
	PlanType  *string      `json:"plan_type"`
}

// limitWindow is one window: used_percent 0..100, window_minutes, and resets_at (Unix seconds);
// earlier Codex versions wrote resets_in_seconds, counted from the record's time.
type limitWindow struct {
	UsedPercent     *float64 `json:"used_percent"`
	WindowMinutes   int      `json:"window_minutes"`
	ResetsAt        int64    `json:"resets_at"`
	ResetsInSeconds *float64 `json:"resets_in_seconds"`
}

// limits are a token_count's limit snapshots, one event per window (none for null rate_limits).
// They belong to the account, not to the session: no session or project is set, so a session's
// figures do not count them.
func (p *Parser) limits(rl *rateLimits, t time.Time) []event.Event {
	if rl == nil {
		return nil
	}
	family := ""
	if id := strings.ToLower(rl.LimitID); id != "" && id != "codex" {
		family = strings.TrimPrefix(id, "codex_")
	}
	plan := ""
	if rl.PlanType != nil {
		plan = strings.ToLower(*rl.PlanType)
	}
	var out []event.Event
	for _, w := range []struct {
		slot string
		w    *limitWindow
	}{{"primary", rl.Primary}, {"secondary", rl.Secondary}} {
		if w.w == nil || w.w.UsedPercent == nil || *w.w.UsedPercent < 0 || *w.w.UsedPercent > 1000 {
			continue
		}
		l := &event.Limit{Provider: "openai", WindowMinutes: max(w.w.WindowMinutes, 0), UsedPercent: *w.w.UsedPercent,
			Status: event.LimitAllowed, Plan: plan}
		l.Window = event.LimitWindow(l.WindowMinutes, family, w.slot)
		switch {
		case w.w.ResetsAt > 0 && w.w.ResetsAt < 1e11:
			l.ResetsAt = time.Unix(w.w.ResetsAt, 0).UTC()
		case w.w.ResetsInSeconds != nil && *w.w.ResetsInSeconds >= 0:
			l.ResetsAt = t.Add(time.Duration(*w.w.ResetsInSeconds * float64(time.Second))).Round(time.Minute).UTC()
		}
		if l.UsedPercent >= 100 {
			l.Status = event.LimitRejected
		}
		ev := p.newEvent(event.KindLimit, event.ID(Client, "limit", p.rootID(), t.UTC().Format(time.RFC3339Nano), l.Window), t)
		ev.SessionID, ev.Project = "", ""
		ev.Limit = l
		out = append(out, ev)
	}
	return out
}
