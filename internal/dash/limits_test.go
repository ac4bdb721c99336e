package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func limitEv(id, member string, at time.Time, l event.Limit) event.Event {
	ev := event.New(event.KindLimit, "observer-proxy")
	ev.ID, ev.Time, ev.Client, ev.Member, ev.Limit = id, at, "claude-code", member, &l
	return ev
}

// limitsStore writes, through store.WriteBatch, the limit snapshots of a plan at now (reset is
// about two hours after now):
//   - anthropic 5h: an older window at 90% (reset 5 hours ago), then this window at 25% and 75%
//     (allowed_warning), seen again at now; the window began 3 hours ago and resets in 2 hours:
//     25% an hour, the limit is reached in an hour;
//   - anthropic 7d: 7%, resets in 4 days (began 3 days ago): not before the reset;
//   - openai 5h: 100%, rejected, resets in an hour;
//   - openai 7d: 12%, reset an hour ago, no figure since;
//   - alice's anthropic 5h (a team member): 33%.
//
// and a limit alert, as the writer raises it.
func limitsStore(tb testing.TB, now, reset time.Time) string {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	five := func(used float64, status string, resets time.Time) event.Limit {
		return event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: used, Status: status, ResetsAt: resets}
	}
	evs := []event.Event{
		limitEv("old", "", now.Add(-8*time.Hour), five(90, event.LimitWarning, now.Add(-5*time.Hour))),
		limitEv("a25", "", now.Add(-2*time.Hour), five(25, event.LimitAllowed, reset)),
		limitEv("a75", "", now.Add(-30*time.Minute), five(75, event.LimitWarning, reset)),
		limitEv("a75again", "", now, five(75, event.LimitWarning, reset)),
		limitEv("w", "", now, event.Limit{Provider: "anthropic", Window: "7d", WindowMinutes: 10080, UsedPercent: 7,
			Status: event.LimitAllowed, ResetsAt: now.Add(4 * 24 * time.Hour)}),
		limitEv("o5", "", now.Add(-10*time.Minute), event.Limit{Provider: "openai", Window: "5h", WindowMinutes: 300, UsedPercent: 100,
			Status: event.LimitRejected, ResetsAt: now.Add(time.Hour)}),
		limitEv("o7", "", now.Add(-6*time.Hour), event.Limit{Provider: "openai", Window: "7d", WindowMinutes: 10080, UsedPercent: 12,
			ResetsAt: now.Add(-time.Hour)}),
		limitEv("alice", "alice", now.Add(-time.Hour), five(33, event.LimitAllowed, reset)),
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		tb.Fatal(err)
	}
	a := event.Alert{Time: now.Add(-time.Minute), Kind: event.AlertLimit, Scope: "anthropic 5h", Period: reset.UTC().Format(time.RFC3339),
		Threshold: 70, Message: "anthropic 5h limit at 75% (warning at 70%); resets soon"}
	if _, err := st.InsertAlert(ctx, &a); err != nil {
		tb.Fatal(err)
	}
	return path
}

// estimateStore holds one Claude Code turn half an hour before now and no limit figure.
func estimateStore(tb testing.TB, now time.Time) string {
	tb.Helper()
	ctx := context.Background()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = "u1", "claude-code", "s1", "/p", now.Add(-30*time.Minute)
	ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1000, Output: 500}, Model: "claude-sonnet-4-5", MessageID: "m1", CostUSD: 0.5}
	if _, err := st.WriteBatch(ctx, []event.Event{ev}, nil); err != nil {
		tb.Fatal(err)
	}
	return path
}

type limitsAnswer struct {
	Store     bool               `json:"store"`
	Since     time.Time          `json:"since"`
	Seen      bool               `json:"seen"`
	Limits    []query.Limit      `json:"limits"`
	History   []query.LimitPoint `json:"history"`
	Estimated *struct {
		Estimated bool          `json:"estimated"`
		Note      string        `json:"note"`
		Blocks    []query.Block `json:"blocks"`
	} `json:"estimated"`
}

func rawGet(tb testing.TB, u string) (int, string) {
	tb.Helper()
	resp, err := http.Get(u)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestLimits_API: /api/limits answers the providers' latest figure of every window with its reset,
// burn rate and forecast (query.Limits at the server's clock), and the snapshots since the window
// it is given, on a real store; member keeps one member's; without any figure it says so and
// gives the active token-based blocks, marked estimated; bad parameters are 400s.
func TestLimits_API(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	srv := startServer(t, Options{StorePath: limitsStore(t, now, now.Add(2*time.Hour)), Now: func() time.Time { return now }})
	var d limitsAnswer
	mustGet(t, srv.URL, "/api/limits?since=24h", &d)
	if !d.Store || !d.Seen || d.Estimated != nil || !d.Since.Equal(now.Add(-24*time.Hour)) {
		t.Fatalf("store %v seen %v estimated %+v since %v", d.Store, d.Seen, d.Estimated, d.Since)
	}
	var got []string
	for _, l := range d.Limits {
		fc := ""
		if l.Forecast != nil {
			fc = l.Forecast.Text
			if !l.Forecast.ReachedAt.IsZero() {
				fc = l.Forecast.ReachedAt.Format("15:04")
			}
		}
		got = append(got, fmt.Sprintf("%s %s %s %v %s in=%q reset=%v burn=%v fc=%q", l.Provider, l.Member, l.Window, l.UsedPercent, l.Status,
			l.ResetsIn, l.Reset, l.BurnPerHour, fc))
	}
	want := []string{
		`anthropic  5h 75 allowed_warning in="2 h" reset=false burn=25 fc="13:00"`,
		`anthropic  7d 7 allowed in="4 d" reset=false burn=0.1 fc="not before the reset"`,
		`anthropic alice 5h 33 allowed in="2 h" reset=false burn=16.5 fc="not before the reset"`,
		`openai  5h 100 rejected in="1 h" reset=false burn=26.09 fc="limit reached"`,
		`openai  7d 12  in="" reset=true burn=0 fc=""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("limits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The history of the last 24 hours: the old 5h window, then this one's two figures (the repeat
	// is the 75%'s seen_at); since 1h only what was still seen in the last hour.
	var hist []string
	for _, p := range d.History {
		if p.Provider == "anthropic" && p.Window == "5h" && p.Member == "" {
			hist = append(hist, fmt.Sprintf("%v %s-%s", p.UsedPercent, p.FirstSeen.Format("15:04"), p.SeenAt.Format("15:04")))
		}
	}
	if strings.Join(hist, ", ") != "90 04:00-04:00, 25 10:00-10:00, 75 11:30-12:00" {
		t.Errorf("5h history %q", hist)
	}
	if len(d.History) != 8-1 {
		t.Errorf("%d snapshots in 24 h, want 7", len(d.History))
	}
	mustGet(t, srv.URL, "/api/limits?since=1h", &d)
	if len(d.History) != 4 {
		t.Errorf("since 1h: %d snapshots, want 4 (75%%, 7d, openai 5h, alice's): %+v", len(d.History), d.History)
	}
	d = limitsAnswer{}
	mustGet(t, srv.URL, "/api/limits?since=all&member=alice", &d)
	if len(d.Limits) != 1 || d.Limits[0].Member != "alice" || len(d.History) != 1 || !d.Since.IsZero() {
		t.Errorf("alice's: %+v %+v", d.Limits, d.History)
	}
	// The JSON's names, as the page and the README name them.
	_, body := rawGet(t, srv.URL+"/api/limits")
	for _, key := range []string{`"store":true`, `"seen":true`, `"limits":[`, `"history":[`, `"used_percent":75`, `"resets_at":"2026-12-06T14:00:00Z"`,
		`"resets_in":"2 h"`, `"burn_percent_per_hour":25`, `"forecast":{"reached_at":"2026-12-06T13:00:00Z","before_reset":true,`, `"reset":true`,
		`"first_seen":`, `"seen_at":`, `"window_minutes":300`} {
		if !strings.Contains(body, key) {
			t.Errorf("the answer lacks %s:\n%s", key, body)
		}
	}
	if strings.Contains(body, `"estimated"`) {
		t.Errorf("an estimate beside measured figures:\n%s", body)
	}
	for _, bad := range []string{"?since=fortnight", "?member=Not%20A%20Name", "?window=7d", "?since=7d&since=1d"} {
		if code, _ := rawGet(t, srv.URL+"/api/limits"+bad); code != http.StatusBadRequest {
			t.Errorf("/api/limits%s: %d, want 400", bad, code)
		}
	}

	// No figure ever: said so, with the active block, marked estimated.
	est := startServer(t, Options{StorePath: estimateStore(t, now), Now: func() time.Time { return now }})
	d = limitsAnswer{}
	mustGet(t, est.URL, "/api/limits", &d)
	if !d.Store || d.Seen || len(d.Limits) != 0 || d.Limits == nil || d.History == nil || d.Estimated == nil || !d.Estimated.Estimated ||
		!strings.HasPrefix(d.Estimated.Note, "estimated") || len(d.Estimated.Blocks) != 1 || d.Estimated.Blocks[0].Client != "claude-code" ||
		d.Estimated.Blocks[0].Tokens.Total != 1500 {
		t.Errorf("without figures: %+v %+v", d, d.Estimated)
	}
	// No store yet.
	none := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	_, body = rawGet(t, none.URL+"/api/limits")
	if !strings.HasPrefix(body, `{"store":false,`) || !strings.Contains(body, `"seen":false,"limits":[],"history":[]}`) {
		t.Errorf("without a store: %s", body)
	}
}

// TestBrowser_Limits: the Overview shows one gauge per window with the provider's figures, its
// status colour, its reset and forecast, a reset window as such, the limit alert in the banner, and
// the history chart; on a phone the page does not scroll sideways. Without any figure it shows
// only a note with the estimated block.
func TestBrowser_Limits(t *testing.T) {
	b := newBrowser(t)
	now := time.Now()
	srv := startServer(t, Options{StorePath: limitsStore(t, now, now.Add(2*time.Hour+30*time.Second)), Version: "test"})
	dir := artifactDir(t)
	b.open(t, srv.URL+"/?window=all", "overview")
	run(t, b, "gauges", chromedp.Poll[bool](`document.querySelectorAll(".gauge[data-limit]").length === 5`, chromedp.WithPollingTimeout(5*time.Second)))
	type gauge struct{ Key, Status, Label, Value, Raw, Resets, Forecast, Fill string }
	var gs []gauge
	js := `JSON.stringify([...document.querySelectorAll(".gauge[data-limit]")].map((g) => ({Key: g.dataset.limit, Status: g.dataset.status,
	  Label: g.querySelector(".label").textContent, Value: g.querySelector(".value").textContent, Raw: g.querySelector(".value").dataset.value || "",
	  Resets: g.querySelector("[data-resets]").textContent, Forecast: g.querySelector("[data-forecast]").textContent,
	  Fill: getComputedStyle(g.querySelector(".meter .fill")).backgroundColor + "|" + g.querySelector(".meter .fill").style.width})))`
	if err := json.Unmarshal([]byte(run(t, b, "gauges", chromedp.Evaluate[string](js))), &gs); err != nil {
		t.Fatal(err)
	}
	hm := `\d\d:\d\d`
	// A reset on another day than today shows its date too: one 2 hours away does after 22:00.
	day := `(?:[A-Z][a-z]{2} \d+ )?`
	want := []struct{ key, status, label, value, raw, resets, forecast string }{
		{"anthropic/5h/", "warning", "Anthropic · 5-hour", "75% warning", "75", "^resets " + day + hm + " · in (2 h|1 h 59 min)$", "^at this rate the limit is reached at " + day + hm + "$"},
		{"anthropic/7d/", "allowed", "Anthropic · weekly", "7% allowed", "7", "^resets [A-Z][a-z]{2} \\d+ " + hm + " · in (4 d|3 d 23 h)$", "^at this rate: not before the reset$"},
		{"anthropic/5h/alice", "allowed", "Anthropic · 5-hour · alice", "33% allowed", "33", "^resets ", "^at this rate: not before the reset$"},
		{"openai/5h/", "rejected", "OpenAI · 5-hour", "100% rejected", "100", "^resets " + day + hm + " · in (1 h|59 min)$", "^limit reached$"},
		{"openai/7d/", "reset", "OpenAI · weekly", "—", "", "^reset since; no figure yet$", "^$"},
	}
	if len(gs) != len(want) {
		t.Fatalf("gauges %+v", gs)
	}
	colours := map[string]string{}
	for i, w := range want {
		g := gs[i]
		if g.Key != w.key || g.Status != w.status || g.Label != w.label || g.Value != w.value || g.Raw != w.raw ||
			!regexp.MustCompile(w.resets).MatchString(g.Resets) || !regexp.MustCompile(w.forecast).MatchString(g.Forecast) {
			t.Errorf("gauge %d: %+v\nwant %+v", i, g, w)
		}
		colour, width, _ := strings.Cut(g.Fill, "|")
		colours[g.Status] = colour
		if w.raw != "" && width != w.raw+"%" {
			t.Errorf("gauge %s: the meter is %q wide, want %s%%", w.key, width, w.raw)
		}
	}
	if colours["allowed"] == colours["warning"] || colours["warning"] == colours["rejected"] || colours["allowed"] == colours["rejected"] {
		t.Errorf("the statuses share a colour: %v", colours)
	}
	// The limit alert in the banner, with its message.
	if text := run(t, b, "banner", chromedp.Text(`.banner[data-alerts]`)); !strings.Contains(text, "anthropic 5h limit at 75% (warning at 70%)") {
		t.Errorf("banner %q", text)
	}
	// The history chart: a series per window seen over all time, in the gauges' order, y from 0 to 100%.
	var chart struct {
		Canvas bool
		Series []string
		YMax   float64
	}
	cjs := `(() => { const el = document.querySelector('.chart[data-chart="limits"]'); return JSON.stringify({Canvas: !!el.querySelector("canvas"),
	  Series: el.uplot.series.slice(1).map((s) => s.label), YMax: el.uplot.scales.y.max}) })()`
	if err := json.Unmarshal([]byte(run(t, b, "chart", chromedp.Evaluate[string](cjs))), &chart); err != nil {
		t.Fatal(err)
	}
	if !chart.Canvas || strings.Join(chart.Series, ", ") != "Anthropic · 5-hour, Anthropic · weekly, Anthropic · 5-hour · alice, OpenAI · 5-hour, OpenAI · weekly" || chart.YMax != 100 {
		t.Errorf("chart %+v", chart)
	}
	b.screenshot(t, dir, "overview-limits")

	run(t, b, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	b.open(t, srv.URL+"/?window=all", "overview")
	run(t, b, "gauges", chromedp.Poll[bool](`document.querySelectorAll(".gauge[data-limit]").length === 5 && !!document.querySelector('.chart[data-chart="limits"] canvas')`, chromedp.WithPollingTimeout(5*time.Second)))
	if w := run(t, b, "width", chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); w > 0 {
		t.Errorf("the Overview with limits at phone width: the page is %d px wider than the screen", w)
	}
	b.screenshot(t, dir, "phone-overview-limits")
	run(t, b, "desktop", chromedp.EmulateViewport(1280, 900))

	// No figure: a note with the estimated block, no gauge, no chart.
	est := startServer(t, Options{StorePath: estimateStore(t, now), Version: "test"})
	b.open(t, est.URL+"/?window=all", "overview")
	run(t, b, "note", chromedp.Poll[bool](`!!document.querySelector('[data-limits="none"]')`, chromedp.WithPollingTimeout(5*time.Second)))
	note := run(t, b, "note", chromedp.Text(`[data-limits="none"]`))
	if !strings.HasPrefix(note, "No plan limit figures yet (estimated blocks: claude-code 1,500 tokens, $0.5000, ends ") {
		t.Errorf("note %q", note)
	}
	if n := run(t, b, "gauges", chromedp.Evaluate[int](`document.querySelectorAll('.gauge, .chart[data-chart="limits"]').length`)); n != 0 {
		t.Errorf("%d gauges or limit charts without figures", n)
	}
	b.screenshot(t, dir, "overview-limits-estimated")
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestBrowser_LimitsLive: a limit figure published on the bus, stored by the writer, shows on an
// open Overview filtered by a client it is not of (a plan limit is the account's), without a
// reload; a newer figure of the same window moves its gauge.
func TestBrowser_LimitsLive(t *testing.T) {
	pub, srv, _ := liveSuite(t)
	b := newBrowser(t)
	publish(t, pub, usageEvent("live-l1", time.Now(), 0.01))
	b.open(t, srv.URL+"/?window=24h&client=codex", "overview")
	run(t, b, "note", chromedp.Poll[bool](`!!document.querySelector('[data-limits="none"]')`, chromedp.WithPollingTimeout(10*time.Second)))
	run(t, b, "mark", chromedp.Evaluate[bool](`window.__noReload = true`))
	reset := time.Now().Add(3 * time.Hour)
	ev := limitEv(event.RandomID(), "", time.Now(), event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: 42,
		Status: event.LimitAllowed, ResetsAt: reset})
	start := time.Now()
	publish(t, pub, &ev)
	took := waitFor(t, b, "the gauge", `document.querySelector('.gauge[data-limit="anthropic/5h/"] .value')?.dataset.value === "42"`, start, 30*time.Second)
	t.Logf("bus to gauge: %v", took)
	ev2 := limitEv(event.RandomID(), "", time.Now(), event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: 85,
		Status: event.LimitWarning, ResetsAt: reset})
	publish(t, pub, &ev2)
	waitFor(t, b, "the moved gauge", `document.querySelector('.gauge[data-limit="anthropic/5h/"]')?.dataset.status === "warning" && window.__noReload === true`, time.Now(), 30*time.Second)
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}

// TestAlerts_LimitAlertLive: a limit alert reaches the live tail with its message, as failed when
// the provider rejects requests, and names no project (its Project is the team member).
func TestAlerts_LimitAlertLive(t *testing.T) {
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	pub := liveBus(t, srv.Server)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.FollowAlerts(ctx, pub, srv.logger); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	all := openSSE(t, srv.URL+"/api/live")
	all.next(t, 2*time.Second)
	a := event.Alert{ID: 9, Time: time.Now().UTC(), Kind: event.AlertLimit, Scope: "anthropic 5h", Project: "alice", Period: "2026-03-04T10:00:00Z",
		Threshold: 100, Message: "anthropic 5h limit reached: the provider rejects requests"}
	stop := make(chan struct{})
	go func() {
		for {
			pub.PublishAlert(a)
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	e := all.next(t, 5*time.Second)
	close(stop)
	var le LiveEvent
	if err := json.Unmarshal([]byte(e.data), &le); err != nil {
		t.Fatal(err)
	}
	if le.Kind != "alert" || le.ID != "alert-9" || le.Summary != a.Message || !le.Failed || le.Project != "" {
		t.Errorf("live limit alert %+v", le)
	}
}
