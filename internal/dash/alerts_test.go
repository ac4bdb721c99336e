package dash

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// alertStore makes a store holding two budget alerts, raised 2 and 10 days ago.
func alertStore(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "observer.db")
	st, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	for _, a := range []event.Alert{
		{Time: time.Now().Add(-10 * 24 * time.Hour), Kind: event.AlertBudget, Scope: "month", Period: "2026-01-01", Threshold: 80,
			SpentUSD: 81, LimitUSD: 100, Message: "monthly budget reached 80%: old"},
		{Time: time.Now().Add(-48 * time.Hour), Kind: event.AlertBudget, Scope: "project", Project: "/work/app", Period: "2026-02-01",
			Threshold: 100, SpentUSD: 12, LimitUSD: 10, Message: "budget of /work/app reached 100%: $12.00 of $10.00 spent (120%)"},
	} {
		if isNew, err := st.InsertAlert(context.Background(), &a); err != nil || !isNew {
			tb.Fatalf("insert alert: %v, %v", isNew, err)
		}
	}
	return path
}

type alertsJSON struct {
	Store  bool          `json:"store"`
	Days   int           `json:"days"`
	Alerts []event.Alert `json:"alerts"`
}

func TestAlerts_API(t *testing.T) {
	srv := startServer(t, Options{StorePath: alertStore(t)})
	var d alertsJSON
	mustGet(t, srv.URL, "/api/alerts", &d)
	if !d.Store || d.Days != 7 || len(d.Alerts) != 1 || d.Alerts[0].Project != "/work/app" || d.Alerts[0].Threshold != 100 || d.Alerts[0].ID == 0 {
		t.Errorf("last 7 days: %+v", d)
	}
	mustGet(t, srv.URL, "/api/alerts?days=30", &d)
	if len(d.Alerts) != 2 || d.Alerts[0].Scope != "project" || d.Alerts[1].Scope != "month" {
		t.Errorf("last 30 days, newest first: %+v", d.Alerts)
	}
	mustGet(t, srv.URL, "/api/alerts?days=30&limit=1", &d)
	if len(d.Alerts) != 1 {
		t.Errorf("limit 1: %+v", d.Alerts)
	}
	for _, bad := range []string{"?days=0", "?days=366", "?limit=x", "?window=7d"} {
		if code := get(t, srv.URL, "/api/alerts"+bad, nil); code != 400 {
			t.Errorf("/api/alerts%s: %d, want 400", bad, code)
		}
	}
	none := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	mustGet(t, none.URL, "/api/alerts", &d)
	if d.Store || d.Alerts == nil || len(d.Alerts) != 0 {
		t.Errorf("without a store: %+v", d)
	}
}

// TestAlerts_LiveStream: an alert published on the bus reaches the browsers following every
// event on /api/live, and not those following one client.
func TestAlerts_LiveStream(t *testing.T) {
	srv := startServer(t, Options{StorePath: filepath.Join(t.TempDir(), "none.db")})
	pub := liveBus(t, srv.Server)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.FollowAlerts(ctx, pub, srv.logger); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	all, codex := openSSE(t, srv.URL+"/api/live"), openSSE(t, srv.URL+"/api/live?client=codex")
	all.next(t, 2*time.Second)
	codex.next(t, 2*time.Second)
	a := event.Alert{ID: 7, Time: time.Now().UTC(), Kind: event.AlertBudget, Scope: "day", Period: "2026-03-04", Threshold: 80,
		SpentUSD: 8, LimitUSD: 10, Message: "daily budget reached 80%: $8.00 of $10.00 spent (80%) in 2026-03-04"}
	// The subscription may not be in place yet: publish until the stream has it.
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
	if le.Kind != "alert" || le.ID != "alert-7" || le.Summary != a.Message || le.Failed {
		t.Errorf("live alert %+v", le)
	}
	// The codex-only stream gets the next codex event, not the alert.
	if _, err := pub.Publish(context.Background(), testAction("codex", "s-1", "ls", true)); err != nil {
		t.Fatal(err)
	}
	if e := codex.next(t, 2*time.Second); !strings.Contains(e.data, `"kind":"action"`) {
		t.Errorf("the codex stream got %q", e.data)
	}
}

// TestBrowser_AlertBanner: the Overview shows the last 7 days' alerts in a banner; Dismiss hides
// them, and they stay hidden after a reload.
func TestBrowser_AlertBanner(t *testing.T) {
	b := newBrowser(t)
	srv := startServer(t, Options{StorePath: alertStore(t)})
	b.open(t, srv.URL+"/?tab=overview", "overview")
	run(t, b, "banner", chromedp.WaitVisible(`.banner[data-alerts]`))
	text := run(t, b, "banner text", chromedp.Text(`.banner[data-alerts]`))
	if !strings.Contains(text, "budget of /work/app reached 100%") || strings.Contains(text, "old") {
		t.Errorf("banner %q", text)
	}
	run(t, b, "dismiss", chromedp.Click(`.banner[data-alerts] button[type=button]:not(.q)`))
	b.open(t, srv.URL+"/?tab=overview", "overview")
	time.Sleep(300 * time.Millisecond) // the banner's request is made after the view is ready
	if n := run(t, b, "banners", chromedp.Evaluate[int](`document.querySelectorAll(".banner[data-alerts]").length`)); n != 0 {
		t.Errorf("%d banners after dismissing", n)
	}
	if errs := b.errors(); len(errs) > 0 {
		t.Errorf("console errors: %v", errs)
	}
}
