package dash

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/busserver"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// The views follow the store: an event published on the bus, stored by the real writer, shows on
// the Overview (and the other open views) within a second, without a reload, with one refresh
// for a burst of events, none while the page is hidden, and none that loses what the user was
// doing. These tests run the suite's own path, producer → bus → writer → store, with the
// dashboard following the bus, on a fresh store (no corpus needed).

// liveSuite runs what `observerctl up` runs around the dashboard: a bus, the writer storing its
// events into a new store with the default batching, and the dashboard following the bus. It
// returns the producer's bus client, the dashboard and the writer's store.
func liveSuite(tb testing.TB) (*bus.Client, *testServer, *store.Store) {
	tb.Helper()
	dir := tb.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	path := filepath.Join(dir, "observer.db")
	st, err := store.OpenWriter(ctx, path)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := busserver.Start(ctx, busserver.Config{Dir: filepath.Join(dir, "bus"), Port: -1, Token: busToken, AckWait: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	connect := func(name string) *bus.Client {
		cl, err := bus.Connect(ctx, bus.Options{URL: b.ClientURL(), Token: busToken, Name: name, Wait: true, Timeout: 2 * time.Second})
		if err != nil {
			tb.Fatal(err)
		}
		return cl
	}
	wcl, dcl, pub := connect("observer-writer"), connect("observer-dash"), connect("test-producer")
	w := &writer.Writer{Store: st, Bus: wcl, Options: bus.ConsumeOptions{BatchSize: 1000, FlushInterval: 50 * time.Millisecond}}
	wdone, fdone := make(chan error, 1), make(chan struct{})
	go func() { wdone <- w.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		<-wdone
		<-fdone
		pub.Close()
		dcl.Close()
		wcl.Close()
		b.Close()
		st.Close()
	})
	srv := startServer(tb, Options{StorePath: path, Version: "test"})
	go func() { srv.Live().Follow(ctx, dcl, srv.logger); close(fdone) }()
	for deadline := time.Now().Add(5 * time.Second); !srv.Live().Connected(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatal("the hub did not subscribe to the bus")
		}
	}
	return pub, srv, st
}

const liveProject = "/tmp/live-project"

// usageEvent is one model turn of session, at, costing cost.
func usageEvent(session string, at time.Time, cost float64) *event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID = event.RandomID()
	ev.Time = at.UTC()
	ev.Client, ev.SessionID, ev.Project = "claude-code", session, liveProject
	ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 1200, Output: 300, CacheRead: 5000}, MessageID: "msg-" + ev.ID,
		Model: "claude-sonnet-4-5-20250929", CostUSD: cost, Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	return &ev
}

// liveAction is one tool call of session at at.
func liveAction(session, target string, at time.Time) *event.Event {
	ev := testAction("claude-code", session, target, true)
	ev.Time = at.UTC()
	ev.Project = liveProject
	return ev
}

func publish(tb testing.TB, pub *bus.Client, evs ...*event.Event) {
	tb.Helper()
	for _, ev := range evs {
		if _, err := pub.Publish(context.Background(), ev); err != nil {
			tb.Fatal(err)
		}
	}
}

// waitRows waits until the writer has stored n rows in table.
func waitRows(tb testing.TB, st *store.Store, table string, n int64) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); count(tb, st, "SELECT count(*) FROM "+table) != n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%s never reached %d rows", table, n)
		}
	}
}

// waitFor polls js in the page until it is true and returns how long that took from start.
func waitFor(tb testing.TB, b *browser, what, js string, start time.Time, within time.Duration) time.Duration {
	tb.Helper()
	within = max(within, time.Minute) // a bound on a hang, not a latency: a loaded machine is slow
	ctx, cancel := context.WithTimeout(b.ctx, within)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(5*time.Millisecond))); err != nil {
		tb.Fatalf("%s: not within %v: %v (console: %v)", what, within, err, b.errors())
	}
	return time.Since(start)
}

// following waits until the page's /api/changes stream (and no other) is open.
func following(tb testing.TB, srv *testServer, n int) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); srv.Live().Clients() != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%d live streams open, want %d", srv.Live().Clients(), n)
		}
	}
}

func metric(name string) string {
	return fmt.Sprintf(`document.querySelector('[data-metric="%s"] .value').textContent`, name)
}

// axisReport describes every chart's axis labels as uPlot drew them (uPlot 1.6 keeps each axis'
// labels in _values, its tick values in _splits, its position in _pos) and the labels whose box
// leaves the chart's canvas: a y label is right-aligned at _pos - tick - gap, an x label centred
// on its tick.
const axisReport = `(() => [...document.querySelectorAll(".chart")].filter((el) => el.uplot).map((el) => {
  const u = el.uplot, ctx = document.createElement("canvas").getContext("2d"), px = uPlot.pxRatio;
  const r = { unit: el.dataset.unit, x: [], y: [], outside: [], width: u.width, box: el.clientWidth };
  u.axes.forEach((ax, i) => {
    ctx.font = ax.font[0];
    (ax._values || []).forEach((v, j) => {
      if (v == null || v === "") return;
      v = String(v);
      const w = Math.max(...v.split("\n").map((l) => ctx.measureText(l).width)) / px;
      let left, right;
      if (i === 0) {
        const x = u.valToPos(ax._splits[j], "x") + u.bbox.left / px;
        left = x - w / 2; right = x + w / 2;
        r.x.push(v);
      } else {
        right = ax._pos - (ax.ticks.show ? ax.ticks.size : 0) - ax.gap; left = right - w;
        r.y.push(v);
      }
      if (left < 0 || right > u.width) r.outside.push(v + " [" + left.toFixed(1) + ", " + right.toFixed(1) + "] of " + u.width);
    });
  });
  return r;
}))()`

type chartAxes struct {
	Unit       string
	X, Y       []string
	Outside    []string
	Width, Box float64
}

// checkAxes checks every chart on the page: dollars read "$…" at every magnitude, no label
// leaves its chart, no x label is a raw "2026-12-01T15", hours read "15:00"; it returns the charts.
func checkAxes(t *testing.T, b *browser, wantHours bool) []chartAxes {
	t.Helper()
	var charts []chartAxes
	if err := json.Unmarshal([]byte(run(t, b, "axes", chromedp.Evaluate[string](`JSON.stringify(`+axisReport+`)`))), &charts); err != nil {
		t.Fatal(err)
	}
	if len(charts) == 0 {
		t.Fatal("no chart on the page")
	}
	hour := regexp.MustCompile(`^\d\d:00(\n[A-Z][a-z]{2} \d{1,2})?$`)
	day := regexp.MustCompile(`^[A-Z][a-z]{2} \d{1,2}(\n\d{4})?$`)
	sawHour, usd := false, 0
	for i, c := range charts {
		if len(c.Y) == 0 || len(c.X) == 0 {
			t.Errorf("chart %d has no labels: %+v", i, c)
		}
		if c.Unit == "usd" {
			usd++
			for _, y := range c.Y {
				if !strings.HasPrefix(y, "$") {
					t.Errorf("chart %d: y label %q has no $ (all: %q)", i, y, c.Y)
				}
			}
		}
		for _, x := range c.X {
			switch {
			case strings.Contains(x, "T") || regexp.MustCompile(`\d{4}-\d\d-\d\d`).MatchString(x):
				t.Errorf("chart %d: raw bucket label %q", i, x)
			case hour.MatchString(x):
				sawHour = true
			case !day.MatchString(x):
				t.Errorf("chart %d: x label %q is neither an hour (15:00) nor a day (Dec 1)", i, x)
			}
		}
		if len(c.Outside) > 0 {
			t.Errorf("chart %d: labels cut at the edge: %q", i, c.Outside)
		}
		if c.Width > c.Box+1 {
			t.Errorf("chart %d is %v px wide in a %v px box", i, c.Width, c.Box)
		}
	}
	if usd == 0 {
		t.Error("no dollar chart on the page")
	}
	if wantHours && !sawHour {
		t.Errorf("no hour label (15:00) on the hourly charts: %+v", charts)
	}
	return charts
}

// TestBrowser_LiveDashboard: the Overview, a session's detail and Actions follow the bus.
func TestBrowser_LiveDashboard(t *testing.T) {
	pub, srv, st := liveSuite(t)
	now := time.Now()
	// Two turns and a tool call earlier today and yesterday: the 24 h window charts them by hour.
	publish(t, pub, usageEvent("live-s1", now.Add(-20*time.Hour), 0.021), usageEvent("live-s1", now.Add(-3*time.Hour), 0.034),
		liveAction("live-s1", "go build ./...", now.Add(-3*time.Hour)))
	waitRows(t, st, "token_usage", 2)
	waitRows(t, st, "actions", 1)
	b := newBrowser(t)
	dir := artifactDir(t)
	run(t, b, "viewport", chromedp.EmulateViewport(1280, 640))

	t.Run("OverviewWithinASecond", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=24h", "overview")
		if got := run(t, b, "turns", chromedp.Evaluate[string](metric("turns"))); got != "2" {
			t.Fatalf("the Overview shows %s turns, want 2", got)
		}
		following(t, srv, 1)
		run(t, b, "scroll and mark", chromedp.Evaluate[bool](`window.scrollTo(0, 150); window.notReloaded = true; true`))
		ev := usageEvent("live-s1", time.Now(), 0.045)
		start := time.Now()
		publish(t, pub, ev)
		took := waitFor(t, b, "the third turn on the Overview", metric("turns")+` === "3"`, start, 30*time.Second)
		t.Logf("bus → writer → store → Overview: %v", took)
		// The numbers and the charts are the store's now, and nothing else moved.
		if got := run(t, b, "cost", chromedp.Evaluate[string](metric("cost"))); got != usd(0.1) {
			t.Errorf("cost %s after the third turn, want %s", got, usd(0.1))
		}
		state := run(t, b, "page state", chromedp.Evaluate[string](`JSON.stringify({reloaded: !window.notReloaded, y: window.scrollY,
			ready: document.getElementById("view").dataset.ready, buckets: document.querySelector('.chart[data-unit="usd"]').uplot.data[0].length,
			footer: document.getElementById("updated").textContent})`))
		var st struct {
			Reloaded bool
			Y        float64
			Ready    string
			Buckets  int
			Footer   string
		}
		json.Unmarshal([]byte(state), &st)
		if st.Reloaded || st.Y != 150 || st.Ready != "overview" || st.Buckets != 3 || !strings.HasPrefix(st.Footer, " · updated ") {
			t.Errorf("after the live update: %+v; want no reload, the scroll kept at 150, the view ready, 3 hourly cost bars, the time of the update", st)
		}
		b.screenshot(t, dir, "live-overview")
	})

	t.Run("BurstIsOneRefresh", func(t *testing.T) {
		// Twenty events in a burst: the page re-reads a few times (one refresh per 500 ms at most), not
		// twenty, and ends on the store's figures.
		refreshes := func() int {
			return run(t, b, "refreshes", chromedp.Evaluate[int](`Number(document.getElementById("view").dataset.refreshes || 0)`))
		}
		before, reqs := refreshes(), srv.Requests()
		start := time.Now()
		for i := 0; i < 20; i++ {
			publish(t, pub, usageEvent("live-s2", time.Now(), 0.001))
		}
		took := waitFor(t, b, "the burst on the Overview", metric("turns")+` === "23"`, start, 30*time.Second)
		time.Sleep(700 * time.Millisecond) // a refresh still due would come now
		n, r := refreshes()-before, srv.Requests()-reqs
		t.Logf("20 events in %v: %d refreshes, %d requests", took, n, r)
		if n < 1 || n > 4 || r > 3*int64(n) {
			t.Errorf("20 events made %d refreshes and %d requests; want at most one refresh per 500 ms, three requests each (overview, alerts, limits)", n, r)
		}
	})

	t.Run("AxisLabels", func(t *testing.T) {
		// Dollars under $0.10 by the hour: the labels keep their $, fit the chart, read 15:00.
		b.open(t, srv.URL+"/?window=24h", "overview")
		charts := checkAxes(t, b, true)
		t.Logf("axes: %+v", charts)
		b.screenshot(t, dir, "axes-hourly")
	})

	t.Run("HiddenPageWaits", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=24h", "overview")
		following(t, srv, 1)
		turns := run(t, b, "turns", chromedp.Evaluate[string](metric("turns")))
		run(t, b, "hide", chromedp.Evaluate[bool](`Object.defineProperty(document, "hidden", { value: true, configurable: true }); document.dispatchEvent(new Event("visibilitychange")); true`))
		following(t, srv, 0) // the page closed its stream
		publish(t, pub, usageEvent("live-s1", time.Now(), 0.002))
		waitRows(t, st, "token_usage", 24)
		time.Sleep(800 * time.Millisecond)
		if got := run(t, b, "turns", chromedp.Evaluate[string](metric("turns"))); got != turns {
			t.Errorf("a hidden page refreshed: %s turns, was %s", got, turns)
		}
		start := time.Now()
		run(t, b, "show", chromedp.Evaluate[bool](`Object.defineProperty(document, "hidden", { value: false, configurable: true }); document.dispatchEvent(new Event("visibilitychange")); true`))
		took := waitFor(t, b, "the turn stored while hidden", metric("turns")+` === "24"`, start, 30*time.Second)
		t.Logf("shown again: up to date in %v", took)
	})

	t.Run("SessionDetailKeepsOpenSteps", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=24h&tab=sessions&session=live-s1&sclient=claude-code", "sessions")
		run(t, b, "open the tool call", chromedp.Evaluate[bool](`(() => { const d = document.querySelector("[data-timeline] li details"); d.open = true; d.marked = true; return d.open })()`))
		following(t, srv, 1)
		ev := liveAction("live-s1", "go vet ./...", time.Now())
		start := time.Now()
		publish(t, pub, ev)
		took := waitFor(t, b, "the new step", `[...document.querySelectorAll("[data-timeline] li")].some((li) => li.textContent.includes("go vet ./..."))`, start, 30*time.Second)
		t.Logf("bus → session timeline: %v", took)
		// The steps on screen stay as they are (the same elements, the open one open); the new one
		// is appended.
		if kept := run(t, b, "still open", chromedp.Evaluate[bool](`(() => { const d = document.querySelector("[data-timeline] li details"); return d.open && d.marked === true })()`)); !kept {
			t.Error("the live update rebuilt or closed the step the user had opened")
		}
		waitFor(t, b, "the actions card", metric("actions")+` === "2"`, start, 2*time.Second)
	})

	t.Run("TypingIsNotClobbered", func(t *testing.T) {
		b.open(t, srv.URL+"/?window=24h&tab=actions", "actions")
		following(t, srv, 1)
		// The user is typing a tool name: the refresh waits until the field loses the focus.
		run(t, b, "type", chromedp.Evaluate[bool](`(() => { const i = document.getElementById("a-tool"); i.focus(); i.value = "Bas"; return true })()`))
		rows := run(t, b, "rows", chromedp.Evaluate[int](`document.querySelectorAll('table[data-table="actions"] tbody tr').length`))
		publish(t, pub, liveAction("live-s3", "make lint", time.Now()))
		waitRows(t, st, "actions", 3)
		time.Sleep(800 * time.Millisecond)
		if v := run(t, b, "field", chromedp.Evaluate[string](`document.getElementById("a-tool").value`)); v != "Bas" {
			t.Fatalf("the live update clobbered the field the user types in: %q", v)
		}
		run(t, b, "blur", chromedp.Evaluate[bool](`document.getElementById("a-tool").blur(), true`))
		waitFor(t, b, "the action after the blur", fmt.Sprintf(`document.querySelectorAll('table[data-table="actions"] tbody tr').length === %d`, rows+1), time.Now(), 2*time.Second)
		// Settings never refreshes by itself: its editor is the user's.
		b.open(t, srv.URL+"/?tab=settings", "settings")
		run(t, b, "edit", chromedp.Evaluate[bool](`(() => { const x = document.getElementById("config-text"); x.focus(); x.value = "[dash]\n# being written"; return true })()`))
		publish(t, pub, usageEvent("live-s1", time.Now(), 0.002))
		waitRows(t, st, "token_usage", 25)
		time.Sleep(800 * time.Millisecond)
		if v := run(t, b, "editor", chromedp.Evaluate[string](`document.getElementById("config-text").value`)); v != "[dash]\n# being written" {
			t.Fatalf("the Settings editor changed under the user: %q", v)
		}
	})

	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
