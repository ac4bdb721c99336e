package pricing_test

import (
	"bufio"
	"errors"
	"io"
	"maps"
	"os"
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
	if db.Entries != 2983 || len(db.Prices) != 2218 || db.Skipped != 754 || len(db.Absurd) != 11 || db.Updated == "" {
		t.Errorf("entries %d, kept %d, skipped %d, absurd %d, date %q; want 2983, 2218, 754, 11 and a date",
			db.Entries, len(db.Prices), db.Skipped, len(db.Absurd), db.Updated)
	}
	// What an import installs reads back as the same prices.
	b, err := db.MarshalLiteLLM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := pricing.ParseLiteLLM(b)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(back.Prices, db.Prices) || !maps.Equal(back.Providers, db.Providers) || !maps.Equal(back.Modes, db.Modes) || back.Updated != db.Updated {
		t.Errorf("MarshalLiteLLM does not read back as the same database")
	}
	if len(b) > 1<<20 {
		t.Errorf("the installed form is %d bytes", len(b))
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

// endless is a JSON object that never ends: one string value growing for ever.
type endless struct{ head string }

func (e *endless) Read(p []byte) (int, error) {
	if e.head != "" {
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	}
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

func TestDecodeLiteLLM_SizeLimit(t *testing.T) {
	_, err := pricing.DecodeLiteLLM(&endless{head: `{"m": {"litellm_provider": "x", "mode": "chat", "note": "`})
	if !errors.Is(err, pricing.ErrTooLarge) || !strings.Contains(err.Error(), "64 MB") {
		t.Errorf("an endless value: %v, want the size limit", err)
	}
	// Whitespace after a valid object is read up to the limit too.
	_, err = pricing.DecodeLiteLLM(io.MultiReader(strings.NewReader(`{"m": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6}}`),
		bufio.NewReader(&endless{head: " "})))
	if err == nil {
		t.Errorf("trailing bytes accepted")
	}
	// /dev/zero: refused at once, without reading it all.
	f, err := os.Open("/dev/zero")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if _, err := pricing.ReadLiteLLM("/dev/zero"); err == nil {
		t.Errorf("/dev/zero accepted")
	}
	if _, err := pricing.DecodeLiteLLM(io.MultiReader(strings.NewReader("{"), strings.NewReader(`"k": `), f)); err == nil {
		t.Errorf("/dev/zero after a key accepted")
	}
}

func TestParseLiteLLM_AbsurdPrices(t *testing.T) {
	db, err := pricing.ParseLiteLLM([]byte(`{
		"huge": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e303, "output_cost_per_token": 1e-6},
		"dear-cache": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 1e-6, "cache_read_input_token_cost": 0.5},
		"ok": {"litellm_provider": "x", "mode": "chat", "input_cost_per_token": 0.01, "output_cost_per_token": 2e-6},
		"not-chat": {"litellm_provider": "x", "mode": "embedding", "input_cost_per_token": 5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Prices) != 1 || db.Prices["ok"].Input != pricing.MaxPricePerMillion {
		t.Errorf("kept %v", db.Prices)
	}
	if len(db.Absurd) != 2 || !strings.Contains(db.Absurd[0], `"huge"`) || !strings.Contains(db.Absurd[0], "input_cost_per_token = 1e303") ||
		!strings.Contains(db.Absurd[1], `"dear-cache"`) {
		t.Errorf("absurd %q", db.Absurd)
	}
	for _, in := range []string{`1e400`, `-0.5`, `"NaN"`, `"Infinity"`} {
		if _, err := pricing.ParseLiteLLM([]byte(`{"m": {"litellm_provider": "x", "mode": "chat", "output_cost_per_token": ` + in + `}}`)); err == nil ||
			!strings.Contains(err.Error(), `"m"`) {
			t.Errorf("%s: %v, want refused naming the model", in, err)
		}
	}
}
