package store_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

// repriceFixture stores, over five hours: 2,500 Claude Code transcript rows of Haiku 4.5 (more
// than two chunks), 12 Codex rows of a model without a price, 6 proxy turns of Haiku (one the
// same message as a transcript row), and 3 GPT-5 rows no price change touches. Each figure comes
// from the built-in table, as the readers would have priced it.
func repriceFixture(t *testing.T) *store.Store {
	t.Helper()
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	def := pricing.Default()
	base := time.Date(2026, 6, 2, 8, 30, 0, 0, time.UTC)
	usage := func(id, client, session, model string, at time.Time, tok event.Tokens) event.Event {
		e := event.New(event.KindTokenUsage, "test")
		e.ID, e.Client, e.SessionID, e.Project, e.Time = id, client, session, "/work/p", at
		u := &event.TokenUsage{Tokens: tok, Model: model, MessageID: id, Origin: "transcript",
			Reliability: store.PricedReliability("token_usage", client)}
		if usd, ok := def.CostAt(model, tok, at); ok {
			u.CostUSD = usd
		} else {
			u.Reliability = event.ReliabilityUnknown
		}
		e.TokenUsage = u
		return e
	}
	var evs []event.Event
	for i := range 2500 {
		tok := event.Tokens{Input: int64(10 + i%7), Output: int64(100 + i%13), CacheRead: int64(1000 * (i % 5)),
			CacheCreation: int64(300 * (i % 3)), CacheCreation1h: int64(100 * (i % 2) * (i % 3 / 2))}
		evs = append(evs, usage(fmt.Sprintf("msg_h%d", i), "claude-code", "c1", "claude-haiku-4-5-20251001",
			base.Add(time.Duration(i)*7*time.Second), tok))
	}
	for i := range 12 {
		evs = append(evs, usage(fmt.Sprintf("x%d", i), "codex", "x1", "my-local-model",
			base.Add(time.Duration(i)*17*time.Minute), event.Tokens{Input: int64(5000 + i), Output: 700}))
	}
	for i := range 3 {
		evs = append(evs, usage(fmt.Sprintf("g%d", i), "codex", "x1", "gpt-5", base.Add(time.Duration(i)*time.Hour),
			event.Tokens{Input: 4000, Output: 300}))
	}
	for i := range 6 {
		e := event.New(event.KindAPITurn, "test")
		id := fmt.Sprintf("msg_p%d", i)
		if i == 0 {
			id = "msg_h42" // the proxy saw this transcript message: it counts once, from the proxy
		}
		tok := event.Tokens{Input: int64(200 + i), Output: 50, CacheRead: 9000}
		usd, _ := def.Cost("claude-haiku-4-5", tok)
		e.ID, e.Client, e.SessionID, e.Time = "p"+id, "claude-code", "c1", base.Add(time.Duration(i)*41*time.Minute)
		e.APITurn = &event.APITurn{Tokens: tok, Provider: "anthropic", Model: "claude-haiku-4-5", MessageID: id,
			Status: 200, CostUSD: usd, Reliability: event.ReliabilityAccurate}
		evs = append(evs, e)
	}
	if _, err := s.WriteBatch(ctx, evs, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

func sumFloat(t *testing.T, s *store.Store, q string, args ...any) float64 {
	t.Helper()
	var v float64
	if err := s.DB.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// listPrice is the SQL of a row's cost at a price, computed from its token columns by the test.
func listPrice(p pricing.Price) string {
	return fmt.Sprintf(`coalesce(sum(input_tokens * %g + output_tokens * %g + cache_read_tokens * %g
       + (cache_creation_tokens - cache_creation_1h_tokens) * %g + cache_creation_1h_tokens * %g) / 1e6, 0)`,
		p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestStore_Reprice: the rows of the given models, and only those, get the cost their tokens give
// at the new prices; rows without a price gain one with their capture path's reliability (and
// lose it again); the rollups equal a rebuild after each run; a second run changes nothing.
func TestStore_Reprice(t *testing.T) {
	ctx := context.Background()
	s := repriceFixture(t)
	haiku := pricing.Price{Input: 2, Output: 10, CacheRead: 0.2, CacheWrite5m: 2.5, CacheWrite1h: 4}
	local := pricing.Price{Input: 1, Output: 2}
	table := pricing.Default().WithOverrides(map[string]pricing.Price{"claude-haiku-4-5": haiku, "my-local-model": local})
	price := func(model string, ts time.Time, tok event.Tokens) (float64, bool) {
		return table.CostAt(model, tok, ts)
	}
	gptBefore := sumFloat(t, s, "SELECT sum(cost_usd) FROM token_usage WHERE model = 'gpt-5'")

	models := []string{"claude-haiku-4-5", "claude-haiku-4-5-20251001", "my-local-model"}
	n, err := s.Reprice(ctx, price, models)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2500+12+6 {
		t.Errorf("Reprice changed %d rows, want %d", n, 2500+12+6)
	}
	for _, c := range []struct {
		table, model string
		p            pricing.Price
	}{
		{"token_usage", "claude-haiku-4-5-20251001", haiku},
		{"api_turns", "claude-haiku-4-5", haiku},
		{"token_usage", "my-local-model", local},
	} {
		got := sumFloat(t, s, "SELECT sum(cost_usd) FROM "+c.table+" WHERE model = ?", c.model)
		want := sumFloat(t, s, "SELECT "+listPrice(c.p)+" FROM "+c.table+" WHERE model = ?", c.model)
		if !near(got, want) || want == 0 {
			t.Errorf("%s %s: $%.9f stored, $%.9f from the tokens at the new price", c.table, c.model, got, want)
		}
	}
	if got := sumFloat(t, s, "SELECT sum(cost_usd) FROM token_usage WHERE model = 'gpt-5'"); got != gptBefore {
		t.Errorf("gpt-5 was not to be repriced: $%v -> $%v", gptBefore, got)
	}
	rels := func() map[string]int64 {
		out := map[string]int64{}
		rows, err := s.DB.Query(`SELECT 't:' || model || ':' || reliability, count(*) FROM token_usage GROUP BY 1
			UNION ALL SELECT 'a:' || model || ':' || reliability, count(*) FROM api_turns GROUP BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int64
			rows.Scan(&k, &n)
			out[k] = n
		}
		return out
	}
	want := map[string]int64{"t:claude-haiku-4-5-20251001:unreliable": 2500, "t:my-local-model:approximate": 12,
		"t:gpt-5:approximate": 3, "a:claude-haiku-4-5:accurate": 6}
	if got := rels(); !reflect.DeepEqual(got, want) {
		t.Errorf("reliability after repricing: %v, want %v", got, want)
	}
	checkRollups := func(when string) {
		t.Helper()
		kept := dumpRollups(t, s)
		if err := s.RebuildRollups(ctx); err != nil {
			t.Fatal(err)
		}
		if rebuilt := dumpRollups(t, s); !reflect.DeepEqual(kept, rebuilt) {
			t.Fatalf("%s: the rollups differ from a rebuild (%d rows kept, %d rebuilt)", when, len(kept), len(rebuilt))
		}
	}
	checkRollups("after repricing")
	if u := count(t, s.DB, "SELECT sum(unpriced_turns) FROM usage_hourly"); u != 0 {
		t.Errorf("%d unpriced turns left in usage_hourly", u)
	}
	turnsCost := sumFloat(t, s, "SELECT sum(cost_usd) FROM ("+fmt.Sprintf(store.TurnsSQL, "1", "1")+")", sqlNamed("window", store.JoinWindowMs))
	if rolled := sumFloat(t, s, "SELECT sum(cost_usd) FROM usage_hourly"); !near(rolled, turnsCost) {
		t.Errorf("usage_hourly sums $%.9f, the raw turns $%.9f", rolled, turnsCost)
	}

	if n, err := s.Reprice(ctx, price, models); err != nil || n != 0 {
		t.Errorf("second run: %d rows changed, %v; want 0", n, err)
	}

	// The override of the local model goes: its rows are unpriced again.
	table = pricing.Default().WithOverrides(map[string]pricing.Price{"claude-haiku-4-5": haiku})
	if n, err := s.Reprice(ctx, price, []string{"my-local-model"}); err != nil || n != 12 {
		t.Fatalf("removing a price: %d rows changed, %v; want 12", n, err)
	}
	if got := rels()["t:my-local-model:unknown"]; got != 12 {
		t.Errorf("%d rows of my-local-model unknown, want 12 (%v)", got, rels())
	}
	if got := sumFloat(t, s, "SELECT sum(cost_usd) FROM token_usage WHERE model = 'my-local-model'"); got != 0 {
		t.Errorf("unpriced rows cost $%v", got)
	}
	checkRollups("after removing a price")
	if u := count(t, s.DB, "SELECT sum(unpriced_turns) FROM usage_hourly"); u != 12 {
		t.Errorf("%d unpriced turns in usage_hourly, want 12", u)
	}
}

func TestStore_StoredModelsAndPricingState(t *testing.T) {
	ctx := context.Background()
	s := repriceFixture(t)
	models, err := s.StoredModels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"claude-haiku-4-5", "claude-haiku-4-5-20251001", "gpt-5", "my-local-model"}; !reflect.DeepEqual(models, want) {
		t.Errorf("StoredModels = %v, want %v", models, want)
	}
	if _, ok, err := s.PricingState(ctx); ok || err != nil {
		t.Fatalf("a new store has a pricing state (%v, %v)", ok, err)
	}
	for _, v := range []string{`{"a":{"input":1}}`, "{}"} {
		if err := s.SetPricingState(ctx, v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.PricingState(ctx); !ok || err != nil || got != v {
			t.Errorf("PricingState = %q %v %v, want %q", got, ok, err, v)
		}
	}
}
