package query

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// limitStore writes the limit snapshots evs describe (time, figures) to a fresh store.
func limitStore(t *testing.T, evs ...event.Event) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return st
}

func limitEvent(id string, at time.Time, l event.Limit) event.Event {
	ev := event.New(event.KindLimit, "observer-proxy")
	ev.ID, ev.Time, ev.Client, ev.Limit = id, at, "claude-code", &l
	return ev
}

// The forecast on a constructed history: a 5-hour window used at a known rate (a quarter of it an
// hour) reaches its limit an hour before its reset, to the minute; at a fifth an hour, not before
// the reset; a window already used up, or rejected, has reached it; a window whose reset has
// passed has no forecast and says so.
func TestLimits_Forecast(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	reset := now.Add(3 * time.Hour) // the window began at 10:00
	start := reset.Add(-5 * time.Hour)
	five := func(used float64, status string) event.Limit {
		return event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: used, Status: status, ResetsAt: reset}
	}
	// A quarter of the window an hour: 25% at 11:00, 50% at 12:00.
	var evs []event.Event
	for i, used := range []float64{25, 50} {
		at := start.Add(time.Duration(i+1) * time.Hour)
		evs = append(evs, limitEvent("a"+string(rune('0'+i)), at, five(used, "allowed")))
	}
	// Seen again (every response repeats it): one snapshot, seen later.
	evs = append(evs, limitEvent("again", now, five(50, "allowed")))
	weekReset := now.Add(4 * 24 * time.Hour) // began 3 days ago
	evs = append(evs, limitEvent("w", now, event.Limit{Provider: "anthropic", Window: "7d", WindowMinutes: 10080, UsedPercent: 30,
		Status: "allowed", ResetsAt: weekReset}))
	evs = append(evs, limitEvent("o", now.Add(-time.Hour), event.Limit{Provider: "openai", Window: "5h", WindowMinutes: 300, UsedPercent: 100,
		Status: "rejected", ResetsAt: now.Add(time.Hour)}))
	evs = append(evs, limitEvent("old", now.Add(-6*time.Hour), event.Limit{Provider: "openai", Window: "7d", WindowMinutes: 10080, UsedPercent: 12,
		ResetsAt: now.Add(-time.Hour)}))
	st := limitStore(t, evs...)

	got, err := Limits(context.Background(), st.DB, now)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Limit{}
	for _, l := range got {
		byKey[l.Provider+" "+l.Window] = l
	}
	if len(got) != 4 {
		t.Fatalf("%d windows, want 4: %+v", len(got), got)
	}
	f := byKey["anthropic 5h"]
	if f.UsedPercent != 50 || f.BurnPerHour != 25 || !f.SeenAt.Equal(now) || !f.FirstSeen.Equal(start.Add(2*time.Hour)) {
		t.Errorf("5h: used %v burn %v seen %v first %v; want 50, 25/h, seen %v first %v", f.UsedPercent, f.BurnPerHour, f.SeenAt,
			f.FirstSeen, now, start.Add(2*time.Hour))
	}
	want := reset.Add(-time.Hour)
	if f.Forecast == nil || !f.Forecast.BeforeReset || f.Forecast.ReachedAt.Sub(want).Abs() > time.Minute {
		t.Errorf("5h forecast %+v, want the limit reached at %v (within a minute)", f.Forecast, want)
	}
	if f.ResetsIn != "3 h" {
		t.Errorf("5h resets in %q, want 3 h", f.ResetsIn)
	}
	if w := byKey["anthropic 7d"]; w.Forecast == nil || w.Forecast.BeforeReset || w.Forecast.Text != "not before the reset" || w.BurnPerHour != 0.42 {
		t.Errorf("7d: burn %v forecast %+v, want 0.42/h, not before the reset", w.BurnPerHour, w.Forecast)
	}
	if o := byKey["openai 5h"]; o.Forecast == nil || !o.Forecast.BeforeReset || o.Forecast.Text != "limit reached" {
		t.Errorf("rejected window: forecast %+v, want the limit reached", o.Forecast)
	}
	if old := byKey["openai 7d"]; !old.Reset || old.Forecast != nil || old.ResetsIn != "" {
		t.Errorf("a window reset since: reset %v forecast %+v resets in %q; want reset, nothing else", old.Reset, old.Forecast, old.ResetsIn)
	}

	// The history: the snapshots of the 5h window, oldest first, the repeat folded into the 50%.
	hist, err := LimitHistory(context.Background(), st.DB, start)
	if err != nil {
		t.Fatal(err)
	}
	var used []float64
	for _, p := range hist {
		if p.Provider == "anthropic" && p.Window == "5h" {
			used = append(used, p.UsedPercent)
		}
	}
	if len(used) != 2 || used[0] != 25 || used[1] != 50 {
		t.Errorf("5h history %v, want [25 50]", used)
	}
}

func TestUntil(t *testing.T) {
	for d, want := range map[time.Duration]string{
		30 * time.Second: "<1 min", 45 * time.Minute: "45 min", 2*time.Hour + 13*time.Minute: "2 h 13 min",
		5 * time.Hour: "5 h", 50 * time.Hour: "2 d 2 h", 72 * time.Hour: "3 d",
	} {
		if got := Until(d); got != want {
			t.Errorf("Until(%v) = %q, want %q", d, got, want)
		}
	}
}
