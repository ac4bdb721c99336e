package prices_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/bus"
	"github.com/observerhq/observer/pkg/config"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/proxy"
)

// writeConfig replaces home's config.toml and moves its modification time forward, so a change
// is seen even within the file system's time resolution.
func writeConfig(tb testing.TB, home, content string) {
	tb.Helper()
	path := config.Path(home)
	var next time.Time
	if fi, err := os.Stat(path); err == nil {
		next = fi.ModTime().Add(time.Second)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		tb.Fatal(err)
	}
	if !next.IsZero() {
		os.Chtimes(path, next, next)
	}
}

func override(model string, in, out float64) string {
	return fmt.Sprintf("[pricing.models.%q]\ninput = %v\noutput = %v\n", model, in, out)
}

// logBuffer is a logger whose output a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
func (l *logBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

func TestBuild_BadOverrideNamesTheModel(t *testing.T) {
	for _, c := range []struct {
		name string
		p    pricing.Price
	}{
		{"neg-model", pricing.Price{Input: -1, Output: 2}},
		{"nan-model", pricing.Price{Input: math.NaN()}},
		{"long-model", pricing.Price{Input: 1, LongContextThreshold: 1000}},
	} {
		_, err := prices.Build(map[string]pricing.Price{"good-model": {Input: 1}, c.name: c.p})
		if err == nil || !strings.Contains(err.Error(), c.name) || strings.Contains(err.Error(), "good-model") {
			t.Errorf("%s: error %v, want one naming %s only", c.name, err, c.name)
		}
	}
	if _, err := prices.Build(map[string]pricing.Price{" ": {Input: 1}}); err == nil {
		t.Error("an override without a model name was accepted")
	}
}

func TestSet_KeyAndChanged(t *testing.T) {
	a, _ := prices.Build(map[string]pricing.Price{"M-One": {Input: 1}, "two": {Input: 2}})
	b, _ := prices.Build(map[string]pricing.Price{"m-one": {Input: 1}, "two": {Input: 3}, "three": {Output: 1}})
	if got := prices.Changed(a, b); strings.Join(got, ",") != "three,two" {
		t.Errorf("Changed = %v, want [three two]", got)
	}
	back, _, err := prices.ParseKey(b.Key())
	if err != nil || back.Key() != b.Key() || len(prices.Changed(back, b)) != 0 {
		t.Errorf("ParseKey(Key()) = %v, %v", back, err)
	}
	if usd, ok := a.Table.Cost("M-ONE", event.Tokens{Input: 1_000_000}); !ok || usd != 1 {
		t.Errorf("an override is matched case-insensitively: $%v %v", usd, ok)
	}
}

// TestFollower: a change of config.toml is applied by Check; a file that does not load, or a bad
// price, leaves the last good table and logs a warning naming the problem.
func TestFollower(t *testing.T) {
	home := t.TempDir()
	writeConfig(t, home, override("my-model", 1, 2))
	var logs logBuffer
	f, err := prices.Follow(home, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	mtok := event.Tokens{Input: 1_000_000, Output: 1_000_000}
	cost := func() float64 {
		usd, ok := f.Cost("my-model", mtok)
		if !ok {
			t.Fatal("my-model has no price")
		}
		return usd
	}
	if got := cost(); got != 3 {
		t.Fatalf("cost at start $%v, want $3", got)
	}
	if f.Check() {
		t.Error("Check reported a change of an untouched file")
	}
	writeConfig(t, home, override("my-model", 4, 6))
	if !f.Check() || cost() != 10 {
		t.Fatalf("after a change: $%v, want $10", cost())
	}
	writeConfig(t, home, "[pricing.models.\"my-model\"]\ninput = \n")
	if f.Check() || cost() != 10 {
		t.Errorf("a file that does not parse changed the prices: $%v", cost())
	}
	writeConfig(t, home, override("my-model", -4, 6))
	if f.Check() || cost() != 10 {
		t.Errorf("a bad price changed the prices: $%v", cost())
	}
	if l := logs.String(); !strings.Contains(l, "config.toml not applied") || !strings.Contains(l, "my-model") {
		t.Errorf("no warning naming the model:\n%s", l)
	}
	// A file caught while it is written in place (truncated, then filled) is not read empty.
	path := config.Path(home)
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() { done <- f.Check() }()
	time.Sleep(50 * time.Millisecond)
	if err := os.WriteFile(path, []byte(override("my-model", 5, 5)), 0o600); err != nil {
		t.Fatal(err)
	}
	if <-done || cost() != 10 {
		t.Fatalf("a file truncated for rewriting was applied: $%v", cost())
	}
	if !f.Check() || cost() != 10 {
		t.Fatalf("the rewritten file: $%v, want $10", cost())
	}
	// A file moved aside for a moment keeps the prices in force.
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if f.Check() || cost() != 10 {
		t.Errorf("a missing config.toml changed the prices: $%v", cost())
	}
	if err := os.Rename(path+".old", path); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, home, "")
	if !f.Check() {
		t.Fatal("removing the overrides was not applied")
	}
	if _, ok := f.Cost("my-model", mtok); ok {
		t.Error("my-model still priced after its override was removed")
	}
	if _, err := prices.Follow(func() string { h := t.TempDir(); writeConfig(t, h, override("bad", -1, 0)); return h }(), nil); err == nil ||
		!strings.Contains(err.Error(), "bad") {
		t.Errorf("Follow on a bad override: %v, want an error naming the model", err)
	}
}

type capture struct{ ch chan event.Event }

func (c *capture) Publish(_ context.Context, ev *event.Event) (bus.Result, error) {
	c.ch <- *ev
	return bus.Published, nil
}

// TestFollower_ProxyNextTurn runs the proxy with a Follower as its Coster: after config.toml
// changes (and the follower's own polling sees it), the next turn carries the new price.
func TestFollower_ProxyNextTurn(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"msg_1","type":"message","model":"claude-haiku-4-5","stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":200}}`)
	}))
	defer up.Close()
	home := t.TempDir()
	writeConfig(t, home, "")
	f, err := prices.Follow(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.Interval = 20 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.Run(ctx)
	cp := &capture{ch: make(chan event.Event, 10)}
	p, err := proxy.New(proxy.Config{AnthropicUpstream: up.URL, OpenAIUpstream: up.URL, Publisher: cp, Coster: f})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p)
	defer srv.Close()
	turn := func() *event.APITurn {
		t.Helper()
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"claude-haiku-4-5","messages":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		select {
		case ev := <-cp.ch:
			return ev.APITurn
		case <-time.After(10 * time.Second):
			t.Fatal("no turn published")
			return nil
		}
	}
	// Built-in Haiku 4.5: $1 in, $5 out per million.
	if a := turn(); math.Abs(a.CostUSD-(1000*1+200*5)/1e6) > 1e-12 {
		t.Fatalf("built-in price: $%v", a.CostUSD)
	}
	writeConfig(t, home, override("claude-haiku-4-5", 3, 15))
	deadline := time.Now().Add(10 * time.Second)
	for f.Table() == pricing.Default() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a := turn(); math.Abs(a.CostUSD-(1000*3+200*15)/1e6) > 1e-12 || a.Reliability != event.ReliabilityAccurate {
		t.Fatalf("after the override: $%v (%s), want $%v", a.CostUSD, a.Reliability, (1000*3+200*15)/1e6)
	}
}

// One bad price in a recorded key leaves that model out; the rest is read. A Set never holds a
// price that is not finite, so its key always encodes.
func TestParseKey_BadPrice(t *testing.T) {
	set, skipped, err := prices.ParseKey(`{"bad": {"input": -1}, "weird": "x", "good": {"input": 2, "output": 3}}`)
	if err != nil || len(skipped) != 2 || set.Overrides["good"].Input != 2 {
		t.Fatalf("%v %v %v", set, skipped, err)
	}
	set, skipped, err = prices.ParseKey(`litellm:{"overrides": {}, "database": {"date": "d", "models": {"a": {"input": 1e300}, "b": {"input": 1, "output": 1}}}}`)
	if err != nil || len(skipped) != 1 || !strings.Contains(skipped[0], `"a"`) || len(set.Database.Prices) != 1 {
		t.Fatalf("%v %v %v", set, skipped, err)
	}
	withInf, err := prices.BuildWith(nil, &prices.Database{Date: "d", Prices: map[string]pricing.Price{
		"inf": {Input: math.Inf(1), Output: 1}, "ok": {Input: 1, Output: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := withInf.Table.Exact("inf"); ok {
		t.Errorf("a price that is not finite is in the table")
	}
	back, skipped, err := prices.ParseKey(withInf.Key())
	if err != nil || len(skipped) != 0 || back.Key() != withInf.Key() {
		t.Errorf("key of a set built with an Inf price: %.60q %v %v", withInf.Key(), skipped, err)
	}
}
