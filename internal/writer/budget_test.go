package writer_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

func spendEvent(id string, usd float64) event.Event {
	ev := event.New(event.KindTokenUsage, "test")
	ev.ID, ev.Client, ev.SessionID, ev.Project = id, "claude-code", "s1", "/work/p"
	ev.TokenUsage = &event.TokenUsage{Tokens: event.Tokens{Input: 10, Output: 1}, Model: "claude-sonnet-4-5", MessageID: "m-" + id, CostUSD: usd}
	return ev
}

// TestWriter_RaisesBudgetAlertsOnce: a writer with a daily budget alerts at 80% as soon as it
// starts, at 100% once an event it stores crosses it, and never again for the same day, not even
// after a restart; each alert is stored and reaches a live subscriber on the bus.
func TestWriter_RaisesBudgetAlertsOnce(t *testing.T) {
	ctx := context.Background()
	srv := startBus(t)
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.WriteBatch(ctx, []event.Event{spendEvent("first", 9)}, nil); err != nil {
		t.Fatal(err)
	}
	listener, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	var mu sync.Mutex
	var heard []event.Alert
	sub, err := listener.SubscribeAlerts(func(a event.Alert) { mu.Lock(); heard = append(heard, a); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	waitHeard := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := len(heard)
			mu.Unlock()
			if got == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("heard %d alerts, want %d", got, n)
			}
		}
	}
	start := func() (stop func()) {
		c, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
		if err != nil {
			t.Fatal(err)
		}
		w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 10, FlushInterval: 10 * time.Millisecond},
			Budget: config.Budget{Daily: 10}, BudgetEvery: 50 * time.Millisecond}
		stopWriter := startWriter(t, ctx, w)
		return func() {
			stopWriter()
			c.Close()
		}
	}
	stop := start()
	waitHeard(1)
	second := spendEvent("second", 2)
	if _, err := listener.Publish(ctx, &second); err != nil {
		t.Fatal(err)
	}
	waitHeard(2)
	time.Sleep(200 * time.Millisecond) // a few more checks
	stop()
	stop = start()
	time.Sleep(300 * time.Millisecond)
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 2 || heard[0].Threshold != 80 || heard[1].Threshold != 100 || heard[1].Scope != "day" || heard[1].SpentUSD != 11 {
		t.Fatalf("heard %+v", heard)
	}
	stored, err := store.RecentAlerts(ctx, st.DB, time.Now().Add(-time.Hour), 10)
	if err != nil || len(stored) != 2 || stored[0].ID != heard[1].ID || stored[1].ID != heard[0].ID {
		t.Fatalf("stored %+v (%v), heard %+v", stored, err, heard)
	}
}

// TestWriter_BudgetFollowsConfig: a budget set while the writer runs (ConfigSource reads
// config.toml at each check) raises its alert without a restart; a source that fails keeps the
// budgets in force.
func TestWriter_BudgetFollowsConfig(t *testing.T) {
	ctx := context.Background()
	srv := startBus(t)
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.WriteBatch(ctx, []event.Event{spendEvent("first", 9)}, nil); err != nil {
		t.Fatal(err)
	}
	c, err := bus.Connect(ctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	cur, fail := config.Budget{}, false
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 10, FlushInterval: 10 * time.Millisecond},
		BudgetEvery: 30 * time.Millisecond, ConfigSource: func() (config.Config, error) {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return config.Config{}, errors.New("config.toml: bad")
			}
			return config.Config{Budget: cur}, nil
		}}
	defer startWriter(t, ctx, w)()
	alerts := func() int {
		a, err := store.RecentAlerts(ctx, st.DB, time.Now().Add(-time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(a)
	}
	time.Sleep(150 * time.Millisecond)
	if n := alerts(); n != 0 {
		t.Fatalf("%d alerts with no budget", n)
	}
	mu.Lock()
	cur, fail = config.Budget{Daily: 10}, false
	mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); alerts() != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no alert after the daily budget was set ($9 of $10)")
		}
	}
	// A broken config keeps the $10 budget: spending past it raises the 100% alert.
	mu.Lock()
	fail = true
	mu.Unlock()
	if _, err := st.WriteBatch(ctx, []event.Event{spendEvent("second", 2)}, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); alerts() != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no 100%% alert while the config was broken")
		}
	}
}

func limitEvent(id string, used float64, reset time.Time) event.Event {
	ev := event.New(event.KindLimit, "observer-proxy")
	ev.ID, ev.Client = id, "claude-code"
	ev.Limit = &event.Limit{Provider: "anthropic", Window: "5h", WindowMinutes: 300, UsedPercent: used, Status: event.LimitAllowed,
		ResetsAt: reset}
	return ev
}

// TestWriter_LimitAlertWithItsFigure: a limit figure at [limits] warn_at raises its alert as soon
// as the batch holding it is stored, not at the next budget check (an hour away here), and only
// once for its window however often the figure comes again.
func TestWriter_LimitAlertWithItsFigure(t *testing.T) {
	ctx, cancel, _, st, c := rig(t)
	w := &writer.Writer{Store: st, Bus: c, Options: bus.ConsumeOptions{BatchSize: 10, FlushInterval: 10 * time.Millisecond},
		BudgetEvery: time.Hour, Limits: &config.Limits{WarnAt: 80}}
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	alerts := func() []event.Alert {
		a, err := store.RecentAlerts(ctx, st.DB, time.Now().Add(-time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	waitStored := func(id string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			var n int
			st.DB.QueryRow("SELECT count(*) FROM limit_snapshots WHERE event_id = ?", id).Scan(&n)
			if n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("limit %s not stored", id)
			}
		}
	}
	reset := time.Now().Add(2 * time.Hour).Truncate(time.Second)
	for i, used := range []float64{42, 85, 85, 90} {
		ev := limitEvent(fmt.Sprintf("l%d", i), used, reset)
		if _, err := c.Publish(ctx, &ev); err != nil {
			t.Fatal(err)
		}
		if used < 80 {
			waitStored(ev.ID)
			continue
		}
		for deadline := time.Now().Add(10 * time.Second); len(alerts()) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no alert for a figure of %v%% within 10 s (the budget check is an hour away)", used)
			}
		}
	}
	waitStored("l3")
	time.Sleep(100 * time.Millisecond) // the check the last figure called for
	if a := alerts(); len(a) != 1 || a[0].Kind != event.AlertLimit || a[0].Scope != "anthropic 5h" || a[0].Threshold != 80 {
		t.Fatalf("alerts %+v, want one warning for anthropic 5h", a)
	}
}
