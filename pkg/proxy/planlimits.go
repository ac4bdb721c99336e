package proxy

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// Plan usage limits, as the providers answer a subscription's requests. Nothing in these headers
// is secret, and none of them names the account; observer keeps the figures (event.Limit), never
// the headers.
//
// Anthropic, on OAuth (Claude Pro/Max) traffic, per window W (5h, 7d, and further ones such as
// 7d_opus, 7d_sonnet, overage): anthropic-ratelimit-unified-W-utilization (0..1),
// -W-reset (Unix seconds), -W-status (allowed, allowed_warning, rejected).
//
// OpenAI, for Codex on a ChatGPT plan, per slot S (primary: the 5-hour window, secondary: the
// weekly one), also under a limit family F as x-codex-F-S-*: x-codex-S-used-percent (0..100),
// -S-window-minutes, -S-reset-at (Unix seconds; RFC 3339 accepted) or -S-reset-after-seconds;
// x-codex-plan-type. A 429 answers a window used up.

const (
	anthropicUnified = "anthropic-ratelimit-unified-"
	codexPrefix      = "x-codex-"
	// maxLimitWindows bounds what one response can make the proxy record.
	maxLimitWindows = 16
)

// planLimits reads the limit windows a response of provider carries, seen at now; nil when it
// carries none (API-key traffic, other providers).
func planLimits(provider string, h http.Header, status int, now time.Time) []event.Limit {
	switch provider {
	case Anthropic:
		return anthropicLimits(h, status)
	case OpenAI:
		return codexLimits(h, status, now)
	}
	return nil
}

func anthropicLimits(h http.Header, status int) []event.Limit {
	var out []event.Limit
	for k, v := range h {
		if len(v) == 0 || !hasPrefixFold(k, anthropicUnified) || !hasSuffixFold(k, "-utilization") {
			continue
		}
		lk := strings.ToLower(k)
		w := strings.TrimSuffix(strings.TrimPrefix(lk, anthropicUnified), "-utilization")
		u, err := strconv.ParseFloat(strings.TrimSpace(v[0]), 64)
		if w == "" || err != nil || u < 0 || u > 10 || len(out) == maxLimitWindows {
			continue
		}
		l := event.Limit{Provider: Anthropic, Window: w, WindowMinutes: event.LimitMinutes(w),
			UsedPercent: roundPct(u * 100), Status: strings.ToLower(strings.TrimSpace(h.Get(anthropicUnified + w + "-status"))),
			ResetsAt: unixSeconds(h.Get(anthropicUnified + w + "-reset"))}
		if l.Status == "" && status == http.StatusTooManyRequests && u >= 1 {
			l.Status = event.LimitRejected
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b event.Limit) int { return strings.Compare(a.Window, b.Window) })
	return out
}

func codexLimits(h http.Header, status int, now time.Time) []event.Limit {
	var out []event.Limit
	plan := ""
	for k, v := range h {
		if len(v) == 0 || !hasPrefixFold(k, codexPrefix) || !hasSuffixFold(k, "-used-percent") {
			continue
		}
		lk := strings.ToLower(k)
		mid := strings.TrimSuffix(strings.TrimPrefix(lk, codexPrefix), "-used-percent") // [F-]primary
		family, slot := "", mid
		if i := strings.LastIndexByte(mid, '-'); i >= 0 {
			family, slot = mid[:i], mid[i+1:]
		}
		if slot != "primary" && slot != "secondary" || len(out) == maxLimitWindows {
			continue
		}
		used, err := strconv.ParseFloat(strings.TrimSpace(v[0]), 64)
		if err != nil || used < 0 || used > 1000 {
			continue
		}
		base := codexPrefix + mid
		minutes, _ := strconv.Atoi(strings.TrimSpace(h.Get(base + "-window-minutes")))
		if plan == "" {
			plan = strings.ToLower(strings.TrimSpace(h.Get("X-Codex-Plan-Type")))
		}
		l := event.Limit{Provider: OpenAI, WindowMinutes: max(minutes, 0), UsedPercent: roundPct(used), Plan: plan,
			Status: event.LimitAllowed}
		l.Window = event.LimitWindow(minutes, family, slot) // no length given: primary, secondary_<family>
		if at := h.Get(base + "-reset-at"); at != "" {
			l.ResetsAt = unixSeconds(at)
		}
		if l.ResetsAt.IsZero() {
			// A countdown, rounded to the minute: read a second later, it names the same reset.
			if secs, err := strconv.ParseFloat(strings.TrimSpace(h.Get(base+"-reset-after-seconds")), 64); err == nil && secs >= 0 {
				l.ResetsAt = now.Add(time.Duration(secs * float64(time.Second))).Round(time.Minute).UTC()
			}
		}
		if used >= 100 || status == http.StatusTooManyRequests && used >= 99.5 {
			l.Status = event.LimitRejected
		}
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b event.Limit) int {
		if a.WindowMinutes != b.WindowMinutes {
			return a.WindowMinutes - b.WindowMinutes
		}
		return strings.Compare(a.Window, b.Window)
	})
	return out
}

// unixSeconds reads a reset time given as Unix seconds (or RFC 3339); zero when it is neither.
func unixSeconds(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 && n < 1e11 {
		return time.Unix(int64(n), 0).UTC()
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

// roundPct keeps a percentage to a hundredth: 0.42 of a window is 42, not 42.000000000000004.
func roundPct(p float64) float64 {
	return float64(int64(p*100+0.5)) / 100
}

// limitEvents are the limit snapshots of a turn's response, one event per window, with ids
// derived from the turn's (journaled and published with it).
func limitEvents(tc *turnCtx, turn *event.Event) []event.Event {
	if len(tc.limits) == 0 {
		return nil
	}
	evs := make([]event.Event, 0, len(tc.limits))
	for i := range tc.limits {
		ev := event.New(event.KindLimit, "observer-proxy")
		ev.Time, ev.ID = tc.limitsAt.UTC(), event.ID(turn.ID, "limit", tc.limits[i].Window)
		ev.Client, ev.Host, ev.User = turn.Client, turn.Host, turn.User
		ev.Limit = &tc.limits[i]
		evs = append(evs, ev)
	}
	return evs
}

// hasPrefixFold and hasSuffixFold match a header name whatever its case, without allocating: every
// response's headers are looked through.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}
