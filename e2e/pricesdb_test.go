package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/pricing"
)

// TestPricing_DatabaseOnlyWhenAsked runs the suite with [pricing] url pointing at a local copy of
// "LiteLLM's" file that prices one model nothing else knows. With auto_update = false, running,
// serving turns and answering commands, the suite never fetches it; `observerctl prices update`
// fetches it once, and the writer reprices the stored turns of that model without a restart.
// Restarted with the default configuration (auto_update on) and the copy two days old, the writer
// says at start that it fetches the file, fetches the new prices by itself and reprices again.
func TestPricing_DatabaseOnlyWhenAsked(t *testing.T) {
	var dbHits atomic.Int64
	var dbBody atomic.Value
	litellm := func(in, out float64) string {
		return fmt.Sprintf(`{"last_updated": "2026-11-30", "db-only-model": {"litellm_provider": "openai", "mode": "chat", "input_cost_per_token": %g, "output_cost_per_token": %g}}`, in/1e6, out/1e6)
	}
	dbBody.Store(litellm(1, 2))
	dbSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dbHits.Add(1)
		io.WriteString(w, dbBody.Load().(string))
	}))
	defer dbSrv.Close()
	var n atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_db_%d","type":"message","model":"db-only-model","stop_reason":"end_turn","usage":{"input_tokens":%d,"output_tokens":%d}}`, i, 1000*i, 100*i)
	}))
	defer up.Close()
	proxyAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	s := newSuite(t, "OBSERVER_PROXY_ADDR="+proxyAddr, "OBSERVER_PROXY_ANTHROPIC_UPSTREAM="+up.URL, "OBSERVER_PRICING_URL="+dbSrv.URL+"/model_prices.json",
		"OBSERVER_PRICING_AUTO_UPDATE=false")
	s.start()
	turn := func() {
		t.Helper()
		resp, err := http.Post("http://"+proxyAddr+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"db-only-model","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("proxy answered %d", resp.StatusCode)
		}
	}
	turn()
	turn()
	s.waitCount(30*time.Second, 2, "SELECT count(*) FROM api_turns")
	unpriced := func() []string {
		t.Helper()
		out, errOut, code := s.ctl(nil, "prices", "list", "--unpriced", "--json")
		var rows []struct {
			Model string `json:"model"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
			t.Fatalf("prices list: exit %d: %s%s", code, out, errOut)
		}
		var models []string
		for _, r := range rows {
			models = append(models, r.Model)
		}
		return models
	}
	if got := unpriced(); len(got) != 1 || got[0] != "db-only-model" {
		t.Fatalf("unpriced before the update: %v", got)
	}
	for _, args := range [][]string{{"status"}, {"cost"}, {"prices", "show", "db-only-model"}, {"doctor"}} {
		s.ctl(nil, args...)
	}
	time.Sleep(3 * time.Second) // a few of the components' price polls
	if h := dbHits.Load(); h != 0 {
		t.Fatalf("the suite fetched the price database %d time(s) without being asked", h)
	}

	want := func(p pricing.Price) float64 { // the two turns at p
		return (3000*p.Input + 300*p.Output) / 1e6
	}
	costOf := func() float64 {
		rows, _ := s.costByModel()
		return rows["db-only-model"].CostUSD
	}
	waitCost := func(usd float64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for math.Abs(costOf()-usd) > 1e-12 {
			if time.Now().After(deadline) {
				t.Fatalf("db-only-model cost $%.9f, want $%.9f", costOf(), usd)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	out, errOut, code := s.ctl(nil, "prices", "update")
	if code != 0 || dbHits.Load() != 1 {
		t.Fatalf("prices update: exit %d, %d fetch(es): %s%s", code, dbHits.Load(), out, errOut)
	}
	waitCost(want(pricing.Price{Input: 1, Output: 2}))
	if got := unpriced(); len(got) != 0 {
		t.Errorf("unpriced after the update: %v", got)
	}

	s.waitLog("writer", "price database auto-update is off", 1)

	// auto_update, on by default: a two-day-old copy is fetched again by the writer, and the stored
	// turns follow.
	s.stop()
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(s.home, "prices", "litellm.json"), old, old)
	dbBody.Store(litellm(1.5, 3))
	s.env = slices.DeleteFunc(s.env, func(v string) bool { return strings.HasPrefix(v, "OBSERVER_PRICING_AUTO_UPDATE=") })
	s.start()
	s.waitLog("writer", "price database auto-update is on", 1)
	waitCost(want(pricing.Price{Input: 1.5, Output: 3}))
	if h := dbHits.Load(); h != 2 {
		t.Errorf("fetches after the restart with auto_update: %d, want 2", h)
	}
	s.waitLog("writer", "price database updated", 1)
}
