package budget

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func spend(id, project string, at time.Time, usd float64) event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project, ev.Time = id, "claude-code", "s-"+id, project, at
	ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 100, Output: 10}, Model: "claude-sonnet-4-5", MessageID: "m-" + id, CostUSD: usd}
	return ev
}

// zone is two hours east of UTC, so a local day is not a UTC day: a turn at 00:30 local is the
// previous day in UTC.
var zone = time.FixedZone("UTC+2", 2*3600)

func local(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, zone) }

func budgetStore(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	evs := []event.Event{
		spend("today", "/a", local(12, 15, 10, 0), 3),
		spend("after-midnight", "/b", local(12, 15, 0, 30), 1),
		spend("yesterday", "/a", local(12, 14, 23, 30), 2),
		spend("first-of-month", "/a", local(12, 1, 0, 10), 4),
		spend("last-month", "/a", local(11, 30, 23, 50), 8),
		spend("tomorrow", "/a", local(12, 16, 0, 0), 16), // beyond now: another day
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return st
}

var limits = config.Budget{Daily: 5, Monthly: 10, Projects: map[string]float64{"/a": 20, "/b/": 0.5, "/c": 0}}

func TestCheck_LocalPeriodsAndThresholds(t *testing.T) {
	st := budgetStore(t)
	now := local(12, 15, 12, 0)
	got, err := Check(context.Background(), st.DB, limits, now, zone)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		scope, project, period string
		spent, limit           float64
		crossed                []int
	}
	wants := []want{
		{ScopeDay, "", "2026-12-15", 4, 5, []int{80}},
		{ScopeMonth, "", "2026-12-01", 10 + 16, 10, []int{80, 100}}, // the month ends after tomorrow
		{ScopeProject, "/a", "2026-12-01", 3 + 2 + 4 + 16, 20, []int{80, 100}},
		{ScopeProject, "/b", "2026-12-01", 1, 0.5, []int{80, 100}},
	}
	if len(got) != len(wants) {
		t.Fatalf("%d statuses, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.Scope != w.scope || g.Project != w.project || g.Period != w.period || math.Abs(g.SpentUSD-w.spent) > 1e-9 ||
			g.LimitUSD != w.limit || math.Abs(g.Percent-100*w.spent/w.limit) > 1e-9 || !reflect.DeepEqual(g.Crossed, w.crossed) {
			t.Errorf("status %d: %+v\nwant %+v", i, g, w)
		}
	}
	if !got[0].PeriodStart.Equal(local(12, 15, 0, 0)) || !got[0].PeriodEnd.Equal(local(12, 16, 0, 0)) {
		t.Errorf("day period %v..%v", got[0].PeriodStart, got[0].PeriodEnd)
	}
	none, err := Check(context.Background(), st.DB, config.Budget{Projects: map[string]float64{"/c": 0}}, now, zone)
	if err != nil || len(none) != 0 || Enabled(config.Budget{Projects: map[string]float64{"/c": 0}}) {
		t.Errorf("zero limits: %+v, %v", none, err)
	}
}

// TestRaise_OncePerPeriodAndThreshold: the first check alerts for every threshold crossed, a
// second one for none, a new crossing alerts alone, and the stored rows are what was published.
func TestRaise_OncePerPeriodAndThreshold(t *testing.T) {
	st := budgetStore(t)
	ctx := context.Background()
	b := config.Budget{Daily: 5, Monthly: 40, Projects: map[string]float64{"/b": 0.5}}
	now := local(12, 15, 12, 0)
	var published []event.Alert
	pub := func(a event.Alert) error { published = append(published, a); return nil }
	raised, err := Raise(ctx, st, b, now, zone, pub)
	if err != nil {
		t.Fatal(err)
	}
	key := func(as []event.Alert) []string {
		var out []string
		for _, a := range as {
			out = append(out, fmt.Sprintf("%s%s/%s/%d", a.Scope, a.Project, a.Period, a.Threshold))
		}
		return out
	}
	// Day: $4 of $5; month: $26 of $40 (65%); /b: $1 of $0.50.
	if want := []string{"day/2026-12-15/80", "project/b/2026-12-01/80", "project/b/2026-12-01/100"}; !reflect.DeepEqual(key(raised), want) {
		t.Fatalf("first check raised %v, want %v", key(raised), want)
	}
	if !reflect.DeepEqual(published, raised) || raised[0].ID == 0 || raised[0].Message == "" {
		t.Errorf("published %+v, raised %+v", published, raised)
	}
	again, err := Raise(ctx, st, b, now.Add(30*time.Second), zone, pub)
	if err != nil || len(again) != 0 || len(published) != 3 {
		t.Fatalf("second check raised %v (%v), published %d", key(again), err, len(published))
	}
	// Another dollar today: the daily budget reaches 100%.
	if _, err := st.WriteBatch(ctx, []event.Event{spend("more", "/a", local(12, 15, 12, 1), 1)}, nil); err != nil {
		t.Fatal(err)
	}
	more, err := Raise(ctx, st, b, local(12, 15, 12, 2), zone, pub)
	if err != nil || !reflect.DeepEqual(key(more), []string{"day/2026-12-15/100"}) {
		t.Fatalf("after the crossing: %v, %v", key(more), err)
	}
	stored, err := store.RecentAlerts(ctx, st.DB, now.Add(-time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 4 || stored[0].ID != more[0].ID || stored[0].Threshold != 100 || stored[0].SpentUSD != 5 {
		t.Errorf("stored alerts: %+v", stored)
	}
	if want := "daily budget reached 100%: $5.00 of $5.00 spent (100%) in 2026-12-15"; stored[0].Message != want {
		t.Errorf("message %q, want %q", stored[0].Message, want)
	}
	// The next day is a new period: its midnight turn of $16 is 80% of a $20 limit.
	next, err := Raise(ctx, st, config.Budget{Daily: 20}, local(12, 16, 12, 0), zone, pub)
	if err != nil || !reflect.DeepEqual(key(next), []string{"day/2026-12-16/80"}) {
		t.Fatalf("next day: %v, %v", key(next), err)
	}
}
