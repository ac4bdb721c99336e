package writer_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/internal/writer"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

var (
	haikuOverride = pricing.Price{Input: 2, Output: 10, CacheRead: 0.2, CacheWrite5m: 2.5, CacheWrite1h: 4}
	localOverride = pricing.Price{Input: 1, Output: 2}
)

func setConfig(tb testing.TB, home string, models map[string]pricing.Price) {
	tb.Helper()
	var b strings.Builder
	for m, p := range models {
		fmt.Fprintf(&b, "[pricing.models.%q]\ninput = %v\noutput = %v\ncache_read = %v\ncache_write_5m = %v\ncache_write_1h = %v\n",
			m, p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h)
	}
	path := config.Path(home)
	next := time.Now()
	if fi, err := os.Stat(path); err == nil {
		next = fi.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	os.Chtimes(path, next, next)
}

func usageEvent(id, client, model string, at time.Time, tok event.Tokens, table *pricing.Table) event.Event {
	e := event.New(event.KindTokenUsage, "test")
	e.ID, e.Client, e.SessionID, e.Project, e.Time = id, client, "s-"+client, "/work/p", at
	u := &event.TokenUsage{Tokens: tok, Model: model, MessageID: id, Origin: "transcript",
		Reliability: store.PricedReliability("token_usage", client)}
	if usd, ok := table.CostAt(model, tok, at); ok {
		u.CostUSD = usd
	} else {
		u.Reliability = event.ReliabilityUnknown
	}
	e.TokenUsage = u
	return e
}

// modelCost is the stored cost of a model's rows, and what their tokens give at price p.
func modelCost(tb testing.TB, st *store.Store, table, model string, p pricing.Price) (stored, want float64) {
	tb.Helper()
	err := st.DB.QueryRow(fmt.Sprintf(`SELECT coalesce(sum(cost_usd), 0), coalesce(sum(input_tokens * %g + output_tokens * %g
		+ cache_read_tokens * %g + (cache_creation_tokens - cache_creation_1h_tokens) * %g + cache_creation_1h_tokens * %g) / 1e6, 0)
		FROM %s WHERE model = ?`, p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h, table), model).Scan(&stored, &want)
	if err != nil {
		tb.Fatal(err)
	}
	return stored, want
}

func waitState(tb testing.TB, st *store.Store, key string) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got, ok, _ := st.PricingState(context.Background()); ok && got == key {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	got, _, _ := st.PricingState(context.Background())
	tb.Fatalf("the writer did not record the overrides %s (store has %q)", key, got)
}

func usageRollup(tb testing.TB, st *store.Store) []string {
	tb.Helper()
	rows, err := st.DB.Query("SELECT hour, client, session_id, model, turns, unpriced_turns, printf('%.9f', cost_usd) FROM usage_hourly ORDER BY 1, 2, 3, 4")
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h, turns, unpriced int64
		var c, s, m, usd string
		rows.Scan(&h, &c, &s, &m, &turns, &unpriced, &usd)
		out = append(out, fmt.Sprint(h, c, s, m, turns, unpriced, usd))
	}
	return out
}

// TestWriter_PriceOverrides follows config.toml's overrides through a writer's life: the rows
// stored before it started are repriced at start (and the overrides recorded); an event a lagging
// producer priced with the old table is stored at the new price; a change while it runs reprices
// the changed models only (a model without a price gains one); a bad file changes nothing; a
// restart with the same overrides reprices nothing; a change made while it was down is applied at
// the next start. The rollups equal a rebuild at the end.
func TestWriter_PriceOverrides(t *testing.T) {
	ctx := context.Background()
	srv := startBus(t)
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	def := pricing.Default()
	base := time.Date(2026, 6, 3, 10, 0, 0, 0, time.UTC)
	var evs []event.Event
	for i := range 40 {
		tok := event.Tokens{Input: int64(100 + i), Output: int64(40 + i), CacheRead: 5000, CacheCreation: 600, CacheCreation1h: 200}
		evs = append(evs, usageEvent(fmt.Sprintf("msg_h%d", i), "claude-code", "claude-haiku-4-5-20251001",
			base.Add(time.Duration(i)*5*time.Minute), tok, def))
	}
	for i := range 5 {
		evs = append(evs, usageEvent(fmt.Sprintf("x%d", i), "codex", "my-local-model", base.Add(time.Duration(i)*time.Hour),
			event.Tokens{Input: 3000, Output: 500}, def))
		evs = append(evs, usageEvent(fmt.Sprintf("g%d", i), "codex", "gpt-5", base.Add(time.Duration(i)*time.Hour),
			event.Tokens{Input: 3000, Output: 500}, def))
	}
	if _, err := st.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	gptBefore, _ := modelCost(t, st, "token_usage", "gpt-5", pricing.Price{})

	home := t.TempDir()
	setConfig(t, home, map[string]pricing.Price{"claude-haiku-4-5": haikuOverride})
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	start := func() (*prices.Follower, *bus.Client, func()) {
		t.Helper()
		f, err := prices.Follow(home, logger)
		if err != nil {
			t.Fatal(err)
		}
		f.Interval = 20 * time.Millisecond
		wctx, cancel := context.WithCancel(ctx)
		go f.Run(wctx)
		c, err := bus.Connect(wctx, bus.Options{Server: srv, Token: srv.Token(), Wait: true})
		if err != nil {
			t.Fatal(err)
		}
		w := &writer.Writer{Store: st, Bus: c, Logger: logger, Prices: f,
			Options: bus.ConsumeOptions{BatchSize: 100, FlushInterval: 10 * time.Millisecond}}
		done := make(chan error, 1)
		go func() { done <- w.Run(wctx) }()
		return f, c, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("writer: %v", err)
			}
			c.Close()
		}
	}
	checkModel := func(when, table, model string, p pricing.Price) {
		t.Helper()
		got, want := modelCost(t, st, table, model, p)
		if math.Abs(got-want) > 1e-9 || want == 0 {
			t.Errorf("%s: %s %s cost $%.9f, its tokens at the expected price $%.9f", when, table, model, got, want)
		}
	}

	f, c, stop := start()
	waitState(t, st, f.Current().Key())
	checkModel("repriced at start", "token_usage", "claude-haiku-4-5-20251001", haikuOverride)

	// A producer still on the built-in table publishes a Haiku row: it is stored at the override.
	late := usageEvent("msg_late", "claude-code", "claude-haiku-4-5-20251001", base.Add(3*time.Hour),
		event.Tokens{Input: 7, Output: 900}, def)
	if _, err := c.PublishBatch(ctx, []event.Event{late}); err != nil {
		t.Fatal(err)
	}
	waitCount(t, st, "token_usage", 51)
	checkModel("a late row", "token_usage", "claude-haiku-4-5-20251001", haikuOverride)

	// A change while running: Haiku again, and a price for the local model.
	haiku2 := pricing.Price{Input: 0.5, Output: 3}
	setConfig(t, home, map[string]pricing.Price{"claude-haiku-4-5": haiku2, "my-local-model": localOverride})
	waitState(t, st, mustKey(t, map[string]pricing.Price{"claude-haiku-4-5": haiku2, "my-local-model": localOverride}))
	checkModel("after a change", "token_usage", "claude-haiku-4-5-20251001", haiku2)
	checkModel("after a change", "token_usage", "my-local-model", localOverride)
	var unknown int
	st.DB.QueryRow("SELECT count(*) FROM token_usage WHERE reliability = 'unknown'").Scan(&unknown)
	if unknown != 0 {
		t.Errorf("%d rows still unpriced", unknown)
	}
	if got, _ := modelCost(t, st, "token_usage", "gpt-5", pricing.Price{}); got != gptBefore {
		t.Errorf("gpt-5 rows changed: $%v -> $%v", gptBefore, got)
	}

	// A broken file: the follower keeps the last table and the store its prices.
	keyBefore := f.Current().Key()
	setConfig(t, home, map[string]pricing.Price{"claude-haiku-4-5": {Input: -1}})
	time.Sleep(300 * time.Millisecond)
	if f.Current().Key() != keyBefore {
		t.Fatal("a bad override replaced the table")
	}
	checkModel("after a bad file", "token_usage", "claude-haiku-4-5-20251001", haiku2)
	stop()

	// Restart with the same overrides: nothing to reprice.
	setConfig(t, home, map[string]pricing.Price{"claude-haiku-4-5": haiku2, "my-local-model": localOverride})
	repriced := strings.Count(logs.String(), "stored costs repriced")
	_, _, stop = start()
	time.Sleep(300 * time.Millisecond)
	stop()
	if n := strings.Count(logs.String(), "stored costs repriced"); n != repriced {
		t.Errorf("a restart with the same overrides repriced again:\n%s", logs.String())
	}

	// Changed while the writer was down: the Haiku override goes, the local model stays.
	setConfig(t, home, map[string]pricing.Price{"my-local-model": localOverride})
	f, _, stop = start()
	waitState(t, st, f.Current().Key())
	stop()
	var stored, want float64
	rows, err := st.DB.Query("SELECT ts, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens, cost_usd FROM token_usage WHERE model = 'claude-haiku-4-5-20251001'")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var ts int64
		var tok event.Tokens
		var usd float64
		rows.Scan(&ts, &tok.Input, &tok.Output, &tok.CacheRead, &tok.CacheCreation, &tok.CacheCreation1h, &usd)
		w, _ := def.CostAt("claude-haiku-4-5-20251001", tok, time.UnixMilli(ts))
		stored, want = stored+usd, want+w
	}
	rows.Close()
	if math.Abs(stored-want) > 1e-9 {
		t.Errorf("after the override was removed while down: Haiku rows $%.9f, built-in price $%.9f", stored, want)
	}

	kept := usageRollup(t, st)
	if err := st.RebuildRollups(ctx); err != nil {
		t.Fatal(err)
	}
	if rebuilt := usageRollup(t, st); !reflect.DeepEqual(kept, rebuilt) {
		t.Errorf("usage_hourly differs from a rebuild:\nkept    %v\nrebuilt %v", kept, rebuilt)
	}
}

func mustKey(tb testing.TB, m map[string]pricing.Price) string {
	tb.Helper()
	s, err := prices.Build(m)
	if err != nil {
		tb.Fatal(err)
	}
	return s.Key()
}
