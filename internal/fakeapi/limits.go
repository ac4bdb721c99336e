package fakeapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// PlanLimits are the plan usage figures the fake answers with, as the providers answer a
// subscription's requests: how much of the five-hour and of the weekly window is used, and when
// each resets. A window whose reset is zero is not reported.
//
// Anthropic Messages responses carry, for W in 5h and 7d, anthropic-ratelimit-unified-W-utilization
// (the share as a fraction, "0.42"), -W-reset (Unix seconds), -W-status (allowed; allowed_warning
// from WarnAt percent; rejected at 100), and anthropic-ratelimit-unified-status, the worst of them.
// OpenAI Responses and Chat Completions responses carry Codex's x-codex-primary-used-percent
// (0..100, the five-hour window), -window-minutes (300), -reset-at (Unix seconds), and the same as
// x-codex-secondary-* for the weekly window (10080 minutes). When a window is at 100% or more the
// request is refused with a 429, headers included: Anthropic's rate_limit_error, OpenAI's
// usage_limit_reached.
type PlanLimits struct {
	FiveHour      float64 // percent of the five-hour window used
	FiveHourReset time.Time
	Weekly        float64 // percent of the weekly window used
	WeeklyReset   time.Time
}

// WarnAt is the used percent from which the fake says allowed_warning.
const WarnAt = 80

// SetLimits makes every later model response carry l (nil: no limit headers), while the server
// runs.
func (s *Server) SetLimits(l *PlanLimits) {
	if l != nil {
		c := *l
		l = &c
	}
	s.limits.Store(l)
}

// Limits returns the figures the server answers with now; nil when it sends none.
func (s *Server) Limits() *PlanLimits {
	if l := s.limits.Load(); l != nil {
		c := *l
		return &c
	}
	return nil
}

// windows lists the windows of l that have a reset, five-hour first.
func (l *PlanLimits) windows() []limitWindow {
	var out []limitWindow
	if !l.FiveHourReset.IsZero() {
		out = append(out, limitWindow{"5h", "primary", 300, l.FiveHour, l.FiveHourReset})
	}
	if !l.WeeklyReset.IsZero() {
		out = append(out, limitWindow{"7d", "secondary", 7 * 24 * 60, l.Weekly, l.WeeklyReset})
	}
	return out
}

type limitWindow struct {
	anthropic, codex string // the window's names in each provider's headers
	minutes          int
	used             float64
	reset            time.Time
}

func (w limitWindow) status() string {
	switch {
	case w.used >= 100:
		return "rejected"
	case w.used >= WarnAt:
		return "allowed_warning"
	}
	return "allowed"
}

// writeLimitHeaders sets the plan limit headers of provider on w and reports the window that is
// used up, if any (the request must then be refused with a 429).
func (s *Server) writeLimitHeaders(w http.ResponseWriter, provider string) (full *limitWindow) {
	l := s.limits.Load()
	if l == nil {
		return nil
	}
	h := w.Header()
	overall := "allowed"
	for _, win := range l.windows() {
		if win.used >= 100 && full == nil {
			full = &win
		}
		switch provider {
		case ProviderAnthropic:
			p := "Anthropic-Ratelimit-Unified-" + win.anthropic
			h.Set(p+"-Utilization", strconv.FormatFloat(win.used/100, 'f', -1, 64))
			h.Set(p+"-Reset", strconv.FormatInt(win.reset.Unix(), 10))
			h.Set(p+"-Status", win.status())
			if st := win.status(); st == "rejected" || st == "allowed_warning" && overall == "allowed" {
				overall = st
			}
		case ProviderOpenAI:
			p := "X-Codex-" + win.codex
			h.Set(p+"-Used-Percent", strconv.FormatFloat(win.used, 'f', -1, 64))
			h.Set(p+"-Window-Minutes", strconv.Itoa(win.minutes))
			h.Set(p+"-Reset-At", strconv.FormatInt(win.reset.Unix(), 10))
		}
	}
	if provider == ProviderAnthropic {
		h.Set("Anthropic-Ratelimit-Unified-Status", overall)
	}
	return full
}

// refuseFull answers a request whose window is used up with a 429 in provider's error shape.
func refuseFull(w http.ResponseWriter, provider string, win *limitWindow) {
	msg := fmt.Sprintf("the %s usage limit is reached (observer fake API); it resets at %s", win.anthropic,
		win.reset.UTC().Format(time.RFC3339))
	if provider == ProviderAnthropic {
		anthropicError(w, http.StatusTooManyRequests, "rate_limit_error", msg)
		return
	}
	writeJSON(w, http.StatusTooManyRequests, obj{"error": obj{"type": "usage_limit_reached", "message": msg,
		"resets_at": win.reset.Unix()}})
}
