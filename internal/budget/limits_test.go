package budget

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// A window at 42% raises nothing; at 85% the warning, once, however often the writer checks; a
// rejection raises its own alert; the next window (a new reset) warns again; warn_at 0 warns never.
func TestRaiseLimits_OncePerWindowAndThreshold(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().Truncate(time.Second)
	reset := now.Add(2 * time.Hour)
	seen := func(id string, used float64, status string, resets time.Time) {
		t.Helper()
		ev := event.New(event.KindLimit, "observer-proxy")
		ev.ID, ev.Time, ev.Client = id, now, "claude-code"
		ev.Limit = &event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: used, Status: status, ResetsAt: resets}
		if _, err := st.WriteBatch(ctx, []event.Event{ev}, nil); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	raise := func(warnAt float64) []event.Alert {
		t.Helper()
		var published []event.Alert
		raised, err := RaiseLimits(ctx, st, config.Limits{WarnAt: warnAt}, now, func(a event.Alert) error {
			published = append(published, a)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(published) != len(raised) {
			t.Errorf("published %d of %d alerts", len(published), len(raised))
		}
		return raised
	}
	seen("a", 42, "allowed", reset)
	if got := raise(80); len(got) != 0 {
		t.Fatalf("42%% raised %+v", got)
	}
	seen("b", 85, "allowed_warning", reset)
	got := raise(80)
	if len(got) != 1 || got[0].Kind != event.AlertLimit || got[0].Threshold != 80 || got[0].Scope != "anthropic 5h" ||
		got[0].Period != reset.UTC().Format(time.RFC3339) || !strings.Contains(got[0].Message, "85%") {
		t.Fatalf("85%% raised %+v, want one warning at 80 for anthropic 5h", got)
	}
	if again := raise(80); len(again) != 0 {
		t.Fatalf("a second check raised %+v", again)
	}
	seen("c", 100, "rejected", reset)
	if got := raise(80); len(got) != 1 || got[0].Threshold != 100 || !strings.Contains(got[0].Message, "rejects") {
		t.Fatalf("rejection raised %+v, want one alert at 100", got)
	}
	next := reset.Add(5 * time.Hour)
	seen("d", 90, "allowed", next)
	if got := raise(0); len(got) != 0 {
		t.Fatalf("warn_at 0 raised %+v", got)
	}
	if got := raise(80); len(got) != 1 || got[0].Period != next.UTC().Format(time.RFC3339) {
		t.Fatalf("the next window raised %+v, want its own warning", got)
	}
}
