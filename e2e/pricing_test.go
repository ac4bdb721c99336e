package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/internal/prices"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/store"
)

// modelTotals is one row of `observerctl cost --json --group-by model`.
type modelTotals struct {
	Model      string  `json:"model"`
	Input      int64   `json:"input_tokens"`
	Output     int64   `json:"output_tokens"`
	CacheRead  int64   `json:"cache_read_tokens"`
	CacheWrite int64   `json:"cache_creation_tokens"`
	Cache1h    int64   `json:"cache_creation_1h_tokens"`
	CostUSD    float64 `json:"cost_usd"`
	Turns      int64   `json:"turns"`
	Unpriced   int64   `json:"unpriced_turns"`
}

// at prices the token sums: cost is linear in tokens below a long-context threshold.
func (m modelTotals) at(p pricing.Price) float64 {
	return (float64(m.Input)*p.Input + float64(m.Output)*p.Output + float64(m.CacheRead)*p.CacheRead +
		float64(m.CacheWrite-m.Cache1h)*p.CacheWrite5m + float64(m.Cache1h)*p.CacheWrite1h) / 1e6
}

func (s *suite) costByModel() (map[string]modelTotals, modelTotals) {
	s.tb.Helper()
	out, errOut, code := s.ctl(nil, "cost", "--json", "--group-by", "model")
	if code != 0 {
		s.tb.Fatalf("cost: exit %d %s", code, errOut)
	}
	var rep struct {
		Rows  []modelTotals `json:"rows"`
		Total modelTotals   `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		s.tb.Fatalf("cost: %v\n%s", err, out)
	}
	rows := map[string]modelTotals{}
	for _, r := range rep.Rows {
		rows[r.Model] = r
	}
	return rows, rep.Total
}

func (s *suite) setPricing(tb testing.TB, models map[string]pricing.Price) {
	tb.Helper()
	var b strings.Builder
	for m, p := range models {
		fmt.Fprintf(&b, "\n[pricing.models.%q]\ninput = %v\noutput = %v\ncache_read = %v\ncache_write_5m = %v\ncache_write_1h = %v\n",
			m, p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h)
	}
	path := filepath.Join(s.home, "config.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	next := time.Now().Add(time.Second) // a change within the file system's time resolution still shows
	os.Chtimes(path, next, next)
}

// waitLog waits until the component's log holds n lines containing text.
func (s *suite) waitLog(component, text string, n int) {
	s.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Count(s.readFile(filepath.Join("logs", component+".log")), text) >= n {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.tb.Fatalf("%s.log never said %q %d time(s):\n%s", component, text, n, s.readFile(filepath.Join("logs", component+".log")))
}

func (s *suite) pricingState() string {
	s.tb.Helper()
	var v string
	s.db().QueryRow("SELECT value FROM rollup_state WHERE key = 'pricing_overrides'").Scan(&v)
	return v
}

// TestPricing_OverridesWithoutRestart runs the suite with a fake Anthropic API and a Claude Code
// transcript, then gives Haiku 4.5 and an unpriced local model prices in config.toml while
// everything runs: the proxy prices its next turn with the override, the writer reprices the
// stored turns of both models (transcript and proxy rows), `observerctl cost --json` changes by
// exactly what the token sums give at the new prices, and a bad override afterwards changes
// nothing. Stopped, the store's rollups equal a rebuild.
func TestPricing_OverridesWithoutRestart(t *testing.T) {
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		i := n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_price_%d","type":"message","model":%q,"stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100}}}`,
			i, req.Model, 1000*i, 37*i, 20000+i)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL)

	// Three Haiku messages in a Claude Code transcript the watcher reads.
	proj := filepath.Join(s.home, "clienthome", ".claude", "projects", "-work-p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	var lines strings.Builder
	for i := range 3 {
		fmt.Fprintf(&lines, `{"type":"assistant","sessionId":"sess-price","cwd":"/work/p","uuid":"u%d","timestamp":"%s","requestId":"req_t%d","message":{"id":"msg_t%d","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":500,"cache_creation":{"ephemeral_5m_input_tokens":500,"ephemeral_1h_input_tokens":0}}}}`+"\n",
			i, time.Now().Add(-time.Duration(3-i)*time.Hour).UTC().Format(time.RFC3339Nano), i, i, 50+i, 400+i, 30000*(i+1))
	}
	if err := os.WriteFile(filepath.Join(proj, "sess-price.jsonl"), []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	s.start()
	turn := func(model string) {
		t.Helper()
		resp, err := http.Post("http://"+proxyAddr+"/v1/messages", "application/json",
			strings.NewReader(fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":"hi"}]}`, model)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("proxy answered %d", resp.StatusCode)
		}
	}
	for _, m := range []string{"claude-haiku-4-5", "claude-haiku-4-5", "my-local-model", "claude-haiku-4-5", "my-local-model"} {
		turn(m)
	}
	s.waitCount(30*time.Second, 5, "SELECT count(*) FROM api_turns")
	s.waitCount(30*time.Second, 3, "SELECT count(*) FROM token_usage")
	s.waitCount(30*time.Second, 1, "SELECT count(*) FROM rollup_state WHERE key = 'pricing_overrides' AND value = '{}'")

	def := pricing.Default()
	defHaiku, _, _ := def.Lookup("claude-haiku-4-5")
	before, totalBefore := s.costByModel()
	for _, m := range []string{"claude-haiku-4-5", "claude-haiku-4-5-20251001"} {
		if r := before[m]; r.Turns == 0 || math.Abs(r.CostUSD-r.at(defHaiku)) > 1e-9 {
			t.Fatalf("%s before the override: %+v, want $%.9f", m, r, r.at(defHaiku))
		}
	}
	if r := before["my-local-model"]; r.Turns != 2 || r.Unpriced != 2 || r.CostUSD != 0 {
		t.Fatalf("my-local-model before its price: %+v", r)
	}

	haiku := pricing.Price{Input: 2, Output: 10, CacheRead: 0.2, CacheWrite5m: 2.5, CacheWrite1h: 4}
	local := pricing.Price{Input: 1, Output: 2}
	overrides := map[string]pricing.Price{"claude-haiku-4-5": haiku, "my-local-model": local}
	set, err := prices.Build(overrides)
	if err != nil {
		t.Fatal(err)
	}
	s.setPricing(t, overrides)
	s.waitLog("proxy", "price overrides changed", 1)
	s.waitCount(30*time.Second, 1, "SELECT count(*) FROM rollup_state WHERE key = 'pricing_overrides' AND value = ?", set.Key())

	after, totalAfter := s.costByModel()
	want := totalBefore.CostUSD
	for m, p := range map[string]pricing.Price{"claude-haiku-4-5": haiku, "claude-haiku-4-5-20251001": haiku, "my-local-model": local} {
		b, a := before[m], after[m]
		if a.Input != b.Input || a.Output != b.Output || a.CacheRead != b.CacheRead || a.CacheWrite != b.CacheWrite {
			t.Fatalf("%s: tokens changed with the price: %+v -> %+v", m, b, a)
		}
		if math.Abs(a.CostUSD-a.at(p)) > 1e-9 || a.Unpriced != 0 {
			t.Errorf("%s after the override: %+v, want $%.9f from its tokens", m, a, a.at(p))
		}
		want += a.at(p) - b.CostUSD
	}
	if math.Abs(totalAfter.CostUSD-want) > 1e-9 || totalAfter.Unpriced != 0 {
		t.Errorf("total after the override $%.9f (%d unpriced), want $%.9f", totalAfter.CostUSD, totalAfter.Unpriced, want)
	}
	t.Logf("cost total $%.6f -> $%.6f (delta $%.6f, from the token sums $%.6f)", totalBefore.CostUSD, totalAfter.CostUSD,
		totalAfter.CostUSD-totalBefore.CostUSD, want-totalBefore.CostUSD)

	// The proxy's next turn carries the override.
	turn("claude-haiku-4-5")
	s.waitCount(30*time.Second, 6, "SELECT count(*) FROM api_turns")
	lastCost := func() (usd, want float64) {
		t.Helper()
		err := s.db().QueryRow(fmt.Sprintf(`SELECT cost_usd, (input_tokens * %[1]g + output_tokens * %[2]g + cache_read_tokens * %[3]g
			+ (cache_creation_tokens - cache_creation_1h_tokens) * %[4]g + cache_creation_1h_tokens * %[5]g) / 1e6
			FROM api_turns ORDER BY id DESC LIMIT 1`, haiku.Input, haiku.Output, haiku.CacheRead, haiku.CacheWrite5m, haiku.CacheWrite1h)).Scan(&usd, &want)
		if err != nil {
			t.Fatal(err)
		}
		return usd, want
	}
	if usd, want := lastCost(); math.Abs(usd-want) > 1e-12 {
		t.Errorf("the proxy's next turn cost $%.9f, want $%.9f", usd, want)
	}

	// A bad override: every component keeps the last good table.
	s.setPricing(t, map[string]pricing.Price{"claude-haiku-4-5": {Input: -1}})
	for _, c := range []string{"proxy", "writer"} {
		s.waitLog(c, "config.toml not applied", 1)
	}
	turn("claude-haiku-4-5")
	s.waitCount(30*time.Second, 7, "SELECT count(*) FROM api_turns")
	if usd, want := lastCost(); math.Abs(usd-want) > 1e-12 {
		t.Errorf("after a bad override the next turn cost $%.9f, want $%.9f (the last good price)", usd, want)
	}
	if got := s.pricingState(); got != set.Key() {
		t.Errorf("the store's overrides changed to %s after a bad file", got)
	}

	s.stop()
	kept, rebuilt := rollupsAndRebuild(t, filepath.Join(s.home, "observer.db"))
	if !reflect.DeepEqual(kept, rebuilt) {
		t.Errorf("usage_hourly differs from a rebuild:\nkept    %v\nrebuilt %v", kept, rebuilt)
	}
}

// rollupsAndRebuild copies a stopped suite's store, and returns its usage_hourly rows as kept and
// as a rebuild from the raw rows gives them.
func rollupsAndRebuild(tb testing.TB, db string) (kept, rebuilt []string) {
	tb.Helper()
	dir := tb.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(db + suffix)
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "copy.db"+suffix), data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(dir, "copy.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	dump := func() []string {
		rows, err := st.DB.Query(`SELECT hour, client, session_id, project, model, turns, proxy_turns, unreliable_turns, unpriced_turns,
			input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, printf('%.9f', cost_usd) FROM usage_hourly ORDER BY 1, 2, 3, 4, 5`)
		if err != nil {
			tb.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			out = append(out, fmt.Sprint(vals...))
		}
		return out
	}
	kept = dump()
	if err := st.RebuildRollups(ctx); err != nil {
		tb.Fatal(err)
	}
	return kept, dump()
}
