package pricing_test

import (
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/pricing"
)

const litellmCopy = "/work/shared/pricing/model_prices_and_context_window.json"

func TestReadLiteLLM_SharedCopy(t *testing.T) {
	db, err := pricing.ReadLiteLLM(litellmCopy)
	if err != nil {
		t.Skipf("shared LiteLLM copy: %v", err)
	}
	if db.Entries != 2983 || len(db.Prices) != 2229 || db.Skipped != 754 || db.Updated == "" {
		t.Errorf("entries %d, kept %d, skipped %d, date %q; want 2983, 2229, 754 and a date", db.Entries, len(db.Prices), db.Skipped, db.Updated)
	}
	for _, skipped := range []string{"text-embedding-3-small", "dall-e-3", "whisper-1"} {
		if _, ok := db.Prices[skipped]; ok {
			t.Errorf("%s (not a chat model) kept", skipped)
		}
	}
	want := map[string]pricing.Price{
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6,
			LongContextThreshold: 200_000, LongInput: 6, LongOutput: 22.5, LongCacheRead: 0.6, LongCacheWrite5m: 7.5, LongCacheWrite1h: 12},
		"claude-opus-4-1": {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite5m: 18.75, CacheWrite1h: 30},
		"gpt-5":           {Input: 1.25, Output: 10, CacheRead: 0.125},
	}
	for k, p := range want {
		if got := db.Prices[k]; got != p {
			t.Errorf("%s: %+v, want %+v", k, got, p)
		}
	}
	if p := db.Prices["gpt-5.4"]; p.LongContextThreshold != 272_000 || p.LongInput != 2*p.Input {
		t.Errorf("gpt-5.4's 272k tier: %+v", p)
	}
	if db.Providers["claude-sonnet-4-5"] != "anthropic" {
		t.Errorf("provider %q", db.Providers["claude-sonnet-4-5"])
	}
	for k, p := range db.Prices {
		if !p.Valid() {
			t.Errorf("%s: invalid price %+v", k, p)
		}
	}
	// The matcher uses it: a dated Bedrock id resolves to a database key.
	tab := pricing.Default().WithDatabase(db.Prices)
	if _, key, ok := tab.Lookup("claude-sonnet-4-5-20250929"); !ok || key != "claude-sonnet-4-5-20250929" {
		t.Errorf("lookup: %q %v", key, ok)
	}
	if _, ok := pricing.Default().Exact("gpt-4"); ok {
		t.Skip("built-in table now has gpt-4")
	}
	if _, key, ok := tab.Lookup("openai/gpt-4"); !ok || key != "gpt-4" {
		t.Errorf("a model only the database has: %q %v", key, ok)
	}
}

func TestParseLiteLLM_Refuses(t *testing.T) {
	for name, in := range map[string]string{
		"not json":     "{not json",
		"not object":   "[1,2]",
		"wrong schema": `{"a": {"price": 1}, "b": {"cost": 2}}`,
		"bad price":    `{"m": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": "cheap"}}`,
		"negative":     `{"m": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": -1e-6}}`,
		"no chat":      `{"m": {"litellm_provider": "x", "mode": "embedding", "input_cost_per_token": 1e-6}}`,
	} {
		if _, err := pricing.ParseLiteLLM([]byte(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	db, err := pricing.ParseLiteLLM([]byte(`{"last_updated": "2026-01-02", "M": {"litellm_provider": "x", "mode": "responses",
		"input_cost_per_token": 2e-6, "output_cost_per_token": 8e-6}}`))
	if err != nil || db.Updated != "2026-01-02" {
		t.Fatal(db, err)
	}
	if p := db.Prices["m"]; p != (pricing.Price{Input: 2, Output: 8, CacheRead: 2}) || !strings.Contains(db.Providers["m"], "x") {
		t.Errorf("%+v", p)
	}
}
