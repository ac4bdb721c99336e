package pricing_test

import (
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// approx reports whether got equals want to 1e-12, relative to want (or absolute below 1).
func approx(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

func wantCost(tb testing.TB, tab *pricing.Table, model string, tok event.Tokens, want float64) {
	tb.Helper()
	got, known := tab.Cost(model, tok)
	if !known {
		tb.Fatalf("Cost(%q): model unknown", model)
	}
	if !approx(got, want) {
		tb.Errorf("Cost(%q, %+v) = %.12f, want %.12f", model, tok, got, want)
	}
}

func TestTableDate(t *testing.T) {
	d, err := time.Parse("2006-01-02", pricing.TableDate)
	if err != nil {
		t.Fatalf("TableDate %q: %v", pricing.TableDate, err)
	}
	if d.Year() != 2026 {
		t.Errorf("TableDate %s: want a 2026 date", pricing.TableDate)
	}
}

// Every key must be reachable by its own name (normalization must not rewrite it into something
// else) and carry a sane price.
func TestDefault_KeysMatchThemselves(t *testing.T) {
	tab := pricing.Default()
	models := tab.Models()
	if len(models) < 70 {
		t.Fatalf("Default has %d models, want the full table", len(models))
	}
	for _, k := range models {
		p, key, ok := tab.Lookup(k)
		if !ok || key != k {
			t.Errorf("Lookup(%q) = %q, %v; want the key itself", k, key, ok)
		}
		if !p.Valid() {
			t.Errorf("%s: invalid price %+v", k, p)
		}
		if free := k == "kilo-auto/free"; !free && (p.Input <= 0 || p.Output <= 0) || free && p != (pricing.Price{}) {
			t.Errorf("%s: input and output prices must be set: %+v", k, p)
		}
		if p.Output < p.Input {
			t.Errorf("%s: output %.3f below input %.3f", k, p.Output, p.Input)
		}
		if p.CacheRead > p.Input {
			t.Errorf("%s: cache read %.3f above input %.3f", k, p.CacheRead, p.Input)
		}
		if k != strings.ToLower(strings.TrimSpace(k)) {
			t.Errorf("key %q is not lower case", k)
		}
	}
	if pricing.Default() != tab {
		t.Error("Default() builds a new table each call; want one shared table")
	}
}

// The published prices, written out again by hand from the sources cited in table.go. A change
// to the table must change this list too.
func TestDefault_Prices(t *testing.T) {
	type pr = pricing.Price
	tests := []struct {
		model string
		want  pr
	}{
		// Anthropic.
		{"claude-fable-5-2", pr{Input: 8, Output: 40, CacheRead: 0.20, CacheWrite5m: 10, CacheWrite1h: 16}},
		{"claude-mythos-5-2", pr{Input: 8, Output: 40, CacheRead: 0.20, CacheWrite5m: 10, CacheWrite1h: 16}},
		{"claude-fable-5-1", pr{Input: 10, Output: 50, CacheRead: 0.25, CacheWrite5m: 12.5, CacheWrite1h: 20}},
		{"claude-fable-5", pr{Input: 10, Output: 50, CacheRead: 1, CacheWrite5m: 12.5, CacheWrite1h: 20}},
		{"claude-opus-5-5", pr{Input: 4, Output: 20, CacheRead: 0.20, CacheWrite5m: 5, CacheWrite1h: 8}},
		{"claude-opus-5", pr{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite5m: 6.25, CacheWrite1h: 10}},
		{"claude-opus-4-8", pr{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite5m: 6.25, CacheWrite1h: 10}},
		{"claude-opus-4-6", pr{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite5m: 6.25, CacheWrite1h: 10}},
		{"claude-opus-4-5", pr{Input: 5, Output: 25, CacheRead: 0.5, CacheWrite5m: 6.25, CacheWrite1h: 10}},
		{"claude-opus-4-1", pr{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite5m: 18.75, CacheWrite1h: 30}},
		{"claude-opus-4", pr{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite5m: 18.75, CacheWrite1h: 30}},
		{"claude-3-opus", pr{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite5m: 18.75, CacheWrite1h: 30}},
		{"claude-sonnet-5-5", pr{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite5m: 2.5, CacheWrite1h: 4}},
		{"claude-sonnet-5", pr{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.5, CacheWrite1h: 4}},
		{"claude-sonnet-4-6", pr{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6}},
		{"claude-sonnet-4-5", pr{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6,
			LongContextThreshold: 200000, LongInput: 6, LongOutput: 22.5, LongCacheRead: 0.6, LongCacheWrite5m: 7.5, LongCacheWrite1h: 12}},
		{"claude-sonnet-4", pr{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6,
			LongContextThreshold: 200000, LongInput: 6, LongOutput: 22.5, LongCacheRead: 0.6, LongCacheWrite5m: 7.5, LongCacheWrite1h: 12}},
		{"claude-3-7-sonnet", pr{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6}},
		{"claude-3-5-sonnet", pr{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite5m: 3.75, CacheWrite1h: 6}},
		{"claude-haiku-5-5", pr{Input: 0.1, Output: 0.5, CacheRead: 0.01, CacheWrite5m: 0.125, CacheWrite1h: 0.2,
			LongContextThreshold: 100000, LongInput: 0.5, LongOutput: 2.5, LongCacheRead: 0.05, LongCacheWrite5m: 0.625, LongCacheWrite1h: 1}},
		{"claude-haiku-4-5", pr{Input: 1, Output: 5, CacheRead: 0.1, CacheWrite5m: 1.25, CacheWrite1h: 2}},
		{"claude-3-5-haiku", pr{Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite5m: 1, CacheWrite1h: 1.6}},
		{"claude-3-haiku", pr{Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite5m: 0.3, CacheWrite1h: 0.5}},
		// OpenAI.
		{"gpt-6.2-sol", pr{Input: 2, Output: 10, CacheRead: 0.1, CacheWrite5m: 2.5, CacheWrite1h: 5,
			LongContextThreshold: 272000, LongInput: 4, LongOutput: 15, LongCacheRead: 0.2, LongCacheWrite5m: 5, LongCacheWrite1h: 10}},
		{"gpt-6.1-sol", pr{Input: 2, Output: 10, CacheRead: 0.1, CacheWrite5m: 2.5, CacheWrite1h: 2.5,
			LongContextThreshold: 272000, LongInput: 4, LongOutput: 15, LongCacheRead: 0.2, LongCacheWrite5m: 5, LongCacheWrite1h: 5}},
		{"gpt-6-astra", pr{Input: 10, Output: 50, CacheRead: 1, CacheWrite5m: 12.5, CacheWrite1h: 12.5,
			LongContextThreshold: 272000, LongInput: 20, LongOutput: 75, LongCacheRead: 2, LongCacheWrite5m: 25, LongCacheWrite1h: 25}},
		{"gpt-6-luna", pr{Input: 0.1, Output: 0.5, CacheRead: 0.01, CacheWrite5m: 0.125, CacheWrite1h: 0.125,
			LongContextThreshold: 272000, LongInput: 0.2, LongOutput: 0.75, LongCacheRead: 0.02, LongCacheWrite5m: 0.25, LongCacheWrite1h: 0.25}},
		{"gpt-5.5", pr{Input: 5, Output: 30, CacheRead: 0.5,
			LongContextThreshold: 272000, LongInput: 10, LongOutput: 45, LongCacheRead: 1}},
		{"gpt-5.4", pr{Input: 2.5, Output: 15, CacheRead: 0.25,
			LongContextThreshold: 272000, LongInput: 5, LongOutput: 22.5, LongCacheRead: 0.5}},
		{"gpt-5.4-mini", pr{Input: 0.75, Output: 4.5, CacheRead: 0.075}},
		{"gpt-5.4-nano", pr{Input: 0.2, Output: 1.25, CacheRead: 0.02}},
		{"gpt-5.3-codex", pr{Input: 1.75, Output: 14, CacheRead: 0.175}},
		{"gpt-5.2", pr{Input: 1.75, Output: 14, CacheRead: 0.175}},
		{"gpt-5.2-codex", pr{Input: 1.75, Output: 14, CacheRead: 0.175}},
		{"gpt-5.1", pr{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5.1-codex", pr{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5.1-codex-max", pr{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5.1-codex-mini", pr{Input: 0.25, Output: 2, CacheRead: 0.025}},
		{"gpt-5", pr{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5-codex", pr{Input: 1.25, Output: 10, CacheRead: 0.125}},
		{"gpt-5-mini", pr{Input: 0.25, Output: 2, CacheRead: 0.025}},
		{"gpt-5-nano", pr{Input: 0.05, Output: 0.4, CacheRead: 0.005}},
		{"gpt-4.1", pr{Input: 2, Output: 8, CacheRead: 0.5}},
		{"gpt-4.1-mini", pr{Input: 0.4, Output: 1.6, CacheRead: 0.1}},
		{"gpt-4.1-nano", pr{Input: 0.1, Output: 0.4, CacheRead: 0.025}},
		{"gpt-4o", pr{Input: 2.5, Output: 10, CacheRead: 1.25}},
		{"gpt-4o-mini", pr{Input: 0.15, Output: 0.6, CacheRead: 0.075}},
		{"o1", pr{Input: 15, Output: 60, CacheRead: 7.5}},
		{"o3", pr{Input: 2, Output: 8, CacheRead: 0.5}},
		{"o3-mini", pr{Input: 1.1, Output: 4.4, CacheRead: 0.55}},
		{"o4-mini", pr{Input: 1.1, Output: 4.4, CacheRead: 0.275}},
		{"codex-mini-latest", pr{Input: 1.5, Output: 6, CacheRead: 0.375}},
		// Google.
		{"gemini-3.5-flash", pr{Input: 1.5, Output: 9, CacheRead: 0.15}},
		{"gemini-3.1-pro", pr{Input: 2, Output: 12, CacheRead: 0.2,
			LongContextThreshold: 200000, LongInput: 4, LongOutput: 18, LongCacheRead: 0.4}},
		{"gemini-3-pro", pr{Input: 2, Output: 12, CacheRead: 0.2,
			LongContextThreshold: 200000, LongInput: 4, LongOutput: 18, LongCacheRead: 0.4}},
		{"gemini-3-flash", pr{Input: 0.5, Output: 3, CacheRead: 0.05}},
		{"gemini-3.1-flash-lite", pr{Input: 0.25, Output: 1.5, CacheRead: 0.025}},
		{"gemini-2.5-pro", pr{Input: 1.25, Output: 10, CacheRead: 0.125,
			LongContextThreshold: 200000, LongInput: 2.5, LongOutput: 15, LongCacheRead: 0.25}},
		{"gemini-2.5-flash", pr{Input: 0.3, Output: 2.5, CacheRead: 0.03}},
		{"gemini-2.5-flash-lite", pr{Input: 0.1, Output: 0.4, CacheRead: 0.01}},
		{"gemini-2.0-flash", pr{Input: 0.1, Output: 0.4, CacheRead: 0.025}},
	}
	tab := pricing.Default()
	for _, tt := range tests {
		got, key, ok := tab.Lookup(tt.model)
		if !ok || key != tt.model {
			t.Errorf("Lookup(%q) = %q, %v", tt.model, key, ok)
			continue
		}
		if !samePrice(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.model, got, tt.want)
		}
	}
}

func samePrice(a, b pricing.Price) bool {
	return a.LongContextThreshold == b.LongContextThreshold &&
		approx(a.Input, b.Input) && approx(a.Output, b.Output) && approx(a.CacheRead, b.CacheRead) &&
		approx(a.CacheWrite5m, b.CacheWrite5m) && approx(a.CacheWrite1h, b.CacheWrite1h) &&
		approx(a.LongInput, b.LongInput) && approx(a.LongOutput, b.LongOutput) &&
		approx(a.LongCacheRead, b.LongCacheRead) && approx(a.LongCacheWrite5m, b.LongCacheWrite5m) &&
		approx(a.LongCacheWrite1h, b.LongCacheWrite1h)
}

// Anthropic writes cost 1.25x input (5m) and 2x input (1h), reads 0.1x input, in both tiers; the
// exceptions are the ones Anthropic publishes.
func TestDefault_AnthropicCacheMultipliers(t *testing.T) {
	readMul := map[string]float64{
		"claude-fable-5-2": 0.025, "claude-mythos-5-2": 0.025,
		"claude-fable-5-1": 0.025, "claude-mythos-5-1": 0.025,
		"claude-opus-5-5": 0.05, "claude-sonnet-5-5": 0.05,
	}
	tab := pricing.Default()
	n := 0
	for _, k := range tab.Models() {
		if !strings.HasPrefix(k, "claude-") || k == "claude-3-haiku" {
			continue
		}
		n++
		p, _, _ := tab.Lookup(k)
		mul, ok := readMul[k]
		if !ok {
			mul = 0.1
		}
		check := func(tier string, in, read, w5, w1 float64) {
			if !approx(w5, 1.25*in) || !approx(w1, 2*in) || !approx(read, mul*in) {
				t.Errorf("%s %s: input %.4g read %.4g 5m %.4g 1h %.4g; want read %.3gx, writes 1.25x and 2x",
					k, tier, in, read, w5, w1, mul)
			}
		}
		check("base", p.Input, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h)
		if p.LongContextThreshold > 0 {
			check("long", p.LongInput, p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h)
		}
	}
	if n < 25 {
		t.Errorf("checked %d Claude models, want the whole family", n)
	}
}

// OpenAI models before GPT-5.6 and all Gemini models have no cache-write charge.
func TestDefault_NoCacheWriteCharge(t *testing.T) {
	tab := pricing.Default()
	for _, k := range tab.Models() {
		if strings.HasPrefix(k, "claude-") || strings.HasPrefix(k, "gpt-5.6-") || strings.HasPrefix(k, "gpt-6") {
			continue
		}
		p, _, _ := tab.Lookup(k)
		if p.CacheWrite5m != 0 || p.CacheWrite1h != 0 || p.LongCacheWrite5m != 0 || p.LongCacheWrite1h != 0 {
			t.Errorf("%s: cache writes priced %+v; OpenAI and Google charge none for this model", k, p)
		}
	}
}

func TestTable_Lookup(t *testing.T) {
	tests := []struct {
		name, model, want string
	}{
		{"exact", "claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"upper case", "Claude-Sonnet-4-5", "claude-sonnet-4-5"},
		{"spaces", "  gpt-5.1-codex ", "gpt-5.1-codex"},
		{"anthropic date", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic date old", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet"},
		{"opus 4 dated", "claude-opus-4-20250514", "claude-opus-4"},
		{"opus 4-0 alias", "claude-opus-4-0", "claude-opus-4-0"},
		{"openai date", "gpt-4o-2024-08-06", "gpt-4o"},
		{"openai date gpt-5", "gpt-5-2025-08-07", "gpt-5"},
		{"openai date o3", "o3-2025-04-16", "o3"},
		{"openai date 5.5", "gpt-5.5-2026-04-23", "gpt-5.5"},
		{"dated snapshot with own price", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
		{"dated snapshot with own price behind a prefix", "openai/gpt-4o-2024-05-13", "gpt-4o-2024-05-13"},
		{"anthropic prefix", "anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"openai prefix", "openai/gpt-5.1-codex", "gpt-5.1-codex"},
		{"gemini models prefix", "models/gemini-2.5-pro", "gemini-2.5-pro"},
		{"openrouter dotted", "openrouter/anthropic/claude-opus-4.5", "claude-opus-4-5"},
		{"nested prefixes", "generic-copilot/litellm/anthropic/claude-haiku-4.5", "claude-haiku-4-5"},
		{"copilot dotted", "claude-sonnet-4.6", "claude-sonnet-4-6"},
		{"old dotted", "claude-3.5-sonnet", "claude-3-5-sonnet"},
		{"google prefix", "google/gemini-3.1-pro-preview", "gemini-3.1-pro"},
		{"bedrock region", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"},
		{"bedrock plain", "anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet"},
		{"bedrock global", "global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
		{"bedrock eu", "eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"},
		{"bedrock no date", "global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6"},
		{"bedrock new id", "anthropic.claude-haiku-5-5", "claude-haiku-5-5"},
		{"bedrock converse (codemie)", "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"},
		{"bedrock arn", "arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1"},
		{"vertex", "claude-sonnet-4-5@20250929", "claude-sonnet-4-5"},
		{"vertex v2", "claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet"},
		{"vertex path", "projects/p/locations/us-east5/publishers/anthropic/models/claude-opus-4-1@20250805", "claude-opus-4-1"},
		{"context marker", "claude-opus-4-6[1m]", "claude-opus-4-6"},
		{"effort tag", "claude-sonnet-5-5:medium", "claude-sonnet-5-5"},
		{"gpt dashed minor (codemie)", "gpt-5-1-codex-2025-11-13", "gpt-5.1-codex"},
		{"gpt dashed minor", "gpt-4-1-mini", "gpt-4.1-mini"},
		{"family codex preview", "gpt-5.2-codex-preview", "gpt-5.2-codex"},
		{"family gemini preview", "gemini-3-pro-preview", "gemini-3-pro"},
		{"family gemini flash preview", "gemini-3-flash-preview", "gemini-3-flash"},
		{"gemini 3 pro (codemie)", "gemini-3-pro", "gemini-3-pro"},
		{"gemini 3.5 flash", "gemini-3.5-flash", "gemini-3.5-flash"},
		{"family customtools", "gemini-3.1-pro-preview-customtools", "gemini-3.1-pro"},
		{"family flash preview", "gemini-2.5-flash-preview-09-2025", "gemini-2.5-flash"},
		{"family flash-lite preview", "gemini-2.5-flash-lite-preview-09-2025", "gemini-2.5-flash-lite"},
		{"family gemini version", "gemini-2.0-flash-001", "gemini-2.0-flash"},
		{"family flash-lite preview 3.1", "gemini-3.1-flash-lite-preview", "gemini-3.1-flash-lite"},
		{"family latest", "claude-3-5-sonnet-latest", "claude-3-5-sonnet"},
		{"family chat-latest", "gpt-5-chat-latest", "gpt-5"},
		{"family dated thinking", "claude-opus-4-5-20251101-thinking", "claude-opus-4-5"},
		{"mini is its own model", "gpt-4o-mini", "gpt-4o-mini"},
		{"mini dated", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"o3-mini is its own model", "o3-mini-2025-01-31", "o3-mini"},
		{"haiku is its own model", "claude-3-5-haiku-20241022", "claude-3-5-haiku"},
		{"pro is its own model", "gpt-5.5-pro-2026-04-23", "gpt-5.5-pro"},
		{"flash-lite is its own model", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
		{"codex-max is its own key", "gpt-5.1-codex-max", "gpt-5.1-codex-max"},
		{"codex-mini is its own key", "gpt-5.1-codex-mini", "gpt-5.1-codex-mini"},
		{"dotted gpt stays", "gpt-6.1-sol", "gpt-6.1-sol"},
	}
	tab := pricing.Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, key, ok := tab.Lookup(tt.model)
			if !ok || key != tt.want {
				t.Errorf("Lookup(%q) = %q, %v; want %q", tt.model, key, ok, tt.want)
			}
		})
	}
}

func TestTable_Lookup_Unknown(t *testing.T) {
	unknown := []string{
		"", "   ",
		"gpt-5.3-codex-spark", "gpt-6-astra-fast",
		"gemini-2.5-flash-preview-tts", "gpt-4o-audio-preview", "gpt-4o-realtime-preview",
		"gpt-4o-mini-search-preview", "o4-mini-deep-research", "gpt-5-codex-mini",
		"gemini-1.5-flash-8b", "claude", "gpt", "claude-opus",
	}
	tab := pricing.Default()
	for _, m := range unknown {
		if _, key, ok := tab.Lookup(m); ok {
			t.Errorf("Lookup(%q) = %q; want unknown", m, key)
		}
		usd, known := tab.Cost(m, event.Tokens{Input: 1000, Output: 1000})
		if known || usd != 0 {
			t.Errorf("Cost(%q) = %v, %v; want 0, false", m, usd, known)
		}
	}
}

// A shorter key must never price a different model: each id is looked up in a table that holds only
// the shorter neighbour.
func TestTable_Lookup_NeverFallsBackToADifferentModel(t *testing.T) {
	pairs := []struct{ have, id string }{
		{"gpt-4o", "gpt-4o-mini"},
		{"gpt-4o", "gpt-4o-mini-2024-07-18"},
		{"o3", "o3-mini"},
		{"o3", "o3-pro"},
		{"o1", "o1-mini"},
		{"o4-mini", "o4-mini-deep-research"},
		{"claude-3-5-sonnet", "claude-3-5-haiku"},
		{"claude-3-5-sonnet", "claude-3-5-haiku-20241022"},
		{"gpt-5", "gpt-5-mini"},
		{"gpt-5", "gpt-5-nano"},
		{"gpt-5", "gpt-5-pro"},
		{"gpt-5.5", "gpt-5.5-pro"},
		{"gpt-5.1-codex", "gpt-5.1-codex-mini"},
		{"gpt-5.1-codex", "gpt-5.1-codex-max"},
		{"gpt-4.1", "gpt-4.1-nano"},
		{"gpt-6-astra", "gpt-6-astra-fast"},
		{"gemini-2.5-flash", "gemini-2.5-flash-lite"},
		{"gemini-2.5-flash", "gemini-2.5-flash-image"},
		{"gemini-2.5-pro", "gemini-2.5-pro-preview-tts"},
		{"gemini-3-pro", "gemini-3-pro-image-preview"},
		{"gemini-1.5-flash", "gemini-1.5-flash-8b"},
	}
	for _, p := range pairs {
		tab := pricing.New(map[string]pricing.Price{p.have: {Input: 1, Output: 2}})
		if _, key, ok := tab.Lookup(p.id); ok {
			t.Errorf("with only %q in the table, Lookup(%q) = %q; want unknown", p.have, p.id, key)
		}
	}
	// A later minor version of the key is the same family: priced as it, but only approximately.
	for _, p := range []struct{ have, id string }{
		{"claude-opus-4", "claude-opus-4-5"},
		{"claude-opus-4", "claude-opus-4-9"},
		{"claude-sonnet-4", "claude-sonnet-4-6"},
		{"claude-opus-5", "claude-opus-5-5"},
		{"claude-fable-5", "claude-fable-5-2"},
		{"gpt-5", "gpt-5.1"},
	} {
		tab := pricing.New(map[string]pricing.Price{p.have: {Input: 1, Output: 2}})
		if m, ok := tab.Resolve(p.id); !ok || m.Key != p.have || !m.Approximate {
			t.Errorf("with only %q in the table, Resolve(%q) = %+v, %v; want it, approximate", p.have, p.id, m, ok)
		}
	}
	// And in the full table each of them resolves to itself, never to the neighbour.
	full := pricing.Default()
	for _, id := range []string{"gpt-4o-mini", "o3-mini", "claude-3-5-haiku", "gpt-5-mini", "gpt-5.5-pro",
		"gpt-5.1-codex-mini", "gemini-2.5-flash-lite", "claude-opus-4-5", "claude-fable-5-2"} {
		if _, key, ok := full.Lookup(id); !ok || key != id {
			t.Errorf("Default Lookup(%q) = %q, %v; want itself", id, key, ok)
		}
	}
}

func TestTable_Lookup_FamilyFallsBackToBase(t *testing.T) {
	tab := pricing.New(map[string]pricing.Price{"gpt-5.2": {Input: 1.75, Output: 14, CacheRead: 0.175}})
	if _, key, ok := tab.Lookup("gpt-5.2-codex-preview"); !ok || key != "gpt-5.2" {
		t.Errorf("Lookup(gpt-5.2-codex-preview) = %q, %v; want gpt-5.2 when gpt-5.2-codex is absent", key, ok)
	}
	tab = tab.WithOverrides(map[string]pricing.Price{"gpt-5.2-codex": {Input: 2, Output: 15}})
	if _, key, ok := tab.Lookup("gpt-5.2-codex-preview"); !ok || key != "gpt-5.2-codex" {
		t.Errorf("Lookup(gpt-5.2-codex-preview) = %q, %v; want the longest key gpt-5.2-codex", key, ok)
	}
}

func TestTable_Cost_Buckets(t *testing.T) {
	tab := pricing.Default()
	// 100k tokens per bucket stays below Sonnet 4.5's 200k long-context threshold.
	const k100 = 100_000
	sonnet := "claude-sonnet-4-5-20250929"
	wantCost(t, tab, sonnet, event.Tokens{Input: k100}, 0.3)
	wantCost(t, tab, sonnet, event.Tokens{Output: k100}, 1.5)
	wantCost(t, tab, sonnet, event.Tokens{CacheRead: k100}, 0.03)
	wantCost(t, tab, sonnet, event.Tokens{CacheCreation: k100}, 0.375)
	wantCost(t, tab, sonnet, event.Tokens{CacheCreation: k100, CacheCreation1h: k100}, 0.6)
	// A model without a long-context tier: 1M tokens at the base price.
	const m = 1_000_000
	wantCost(t, tab, "claude-opus-4-1", event.Tokens{Input: m, Output: m}, 90)
	// All buckets at once: 1234*3 + 5678*15 + 90123*0.30 + (4567-1000)*3.75 + 1000*6 = 135285.15 µ$.
	mixed := event.Tokens{Input: 1234, Output: 5678, CacheRead: 90123, CacheCreation: 4567, CacheCreation1h: 1000}
	wantCost(t, tab, sonnet, mixed, 0.13528515)
	// Reasoning is inside Output: it adds nothing.
	withReasoning := mixed
	withReasoning.Reasoning = 5000
	wantCost(t, tab, sonnet, withReasoning, 0.13528515)
	wantCost(t, tab, sonnet, event.Tokens{}, 0)

	// Opus 4.5: 1h writes at 2x input, 5m at 1.25x.
	wantCost(t, tab, "claude-opus-4-5", event.Tokens{CacheCreation: 100_000}, 0.625)
	wantCost(t, tab, "claude-opus-4-5", event.Tokens{CacheCreation: 100_000, CacheCreation1h: 100_000}, 1.0)
	wantCost(t, tab, "claude-opus-4-5", event.Tokens{CacheCreation: 100_000, CacheCreation1h: 40_000}, 0.775)

	// OpenAI: net input, cached input at the cached price, no write charge.
	// 10000*1.25 + 90000*0.125 + 2000*10 = 43750 µ$.
	wantCost(t, tab, "gpt-5", event.Tokens{Input: 10_000, CacheRead: 90_000, Output: 2000, Reasoning: 1500}, 0.04375)
	wantCost(t, tab, "gpt-5", event.Tokens{CacheCreation: m}, 0)
	// GPT-6 Sol charges cache writes: 1000*2 + 4000*2.5 + 500*10 = 17000 µ$.
	wantCost(t, tab, "gpt-6-sol", event.Tokens{Input: 1000, CacheCreation: 4000, Output: 500}, 0.017)
	// GPT-6.2 Sol: 30-minute writes $2.50, 12-hour writes $5.
	wantCost(t, tab, "gpt-6.2-sol", event.Tokens{CacheCreation: k100, CacheCreation1h: 40_000}, 0.06*2.5+0.04*5)

	// Gemini: 100000*0.30 + 1000*2.50 + 50000*0.03 = 34000 µ$.
	wantCost(t, tab, "gemini-2.5-flash", event.Tokens{Input: 100_000, Output: 1000, CacheRead: 50_000}, 0.034)
}

func TestTable_Cost_BadCounts(t *testing.T) {
	tab := pricing.Default()
	// Negative counts are zero.
	wantCost(t, tab, "claude-haiku-4-5", event.Tokens{Input: -5, Output: 1000, CacheRead: -1}, 0.005)
	// A 1h part larger than the total leaves no 5m part; the 1h part is priced as reported.
	wantCost(t, tab, "claude-haiku-4-5", event.Tokens{CacheCreation: 100, CacheCreation1h: 1000}, 0.002)
}

func TestTable_Cost_LongContext(t *testing.T) {
	tab := pricing.Default()
	sonnet := "claude-sonnet-4-5"
	// Prompt exactly 200000 (1000 + 190000 + 9000): base prices.
	// 1000*3 + 190000*0.30 + 9000*3.75 + 1000*15 = 108750 µ$.
	wantCost(t, tab, sonnet, event.Tokens{Input: 1000, CacheRead: 190_000, CacheCreation: 9000, Output: 1000}, 0.10875)
	// One token more: every token at the long prices.
	// 1001*6 + 190000*0.60 + 9000*7.50 + 1000*22.50 = 210006 µ$.
	wantCost(t, tab, sonnet, event.Tokens{Input: 1001, CacheRead: 190_000, CacheCreation: 9000, Output: 1000}, 0.210006)
	// 1h writes in the long tier: 250000 * 12.
	wantCost(t, tab, sonnet, event.Tokens{CacheCreation: 250_000, CacheCreation1h: 250_000}, 3)
	// Output is not part of the prompt.
	wantCost(t, tab, sonnet, event.Tokens{Input: 200_000, Output: 100_000}, 0.6+1.5)

	// Gemini 2.5 Pro: 200000 at $1.25; 200001 at $2.50; cached input doubles too.
	wantCost(t, tab, "gemini-2.5-pro", event.Tokens{Input: 200_000}, 0.25)
	wantCost(t, tab, "gemini-2.5-pro", event.Tokens{Input: 200_001}, 0.5000025)
	wantCost(t, tab, "gemini-2.5-pro", event.Tokens{Input: 1, CacheRead: 200_000, Output: 1000}, (2.5+200_000*0.25+1000*15)/1e6)

	// Haiku 5.5 switches at 100k, 5x on everything.
	wantCost(t, tab, "claude-haiku-5-5", event.Tokens{Input: 100_000, Output: 1000}, 0.0105)
	wantCost(t, tab, "claude-haiku-5-5", event.Tokens{Input: 100_001, Output: 1000}, (100_001*0.5+1000*2.5)/1e6)

	// OpenAI above 272K: 2x input and cache, 1.5x output.
	wantCost(t, tab, "gpt-5.5", event.Tokens{Input: 272_000, Output: 1000}, (272_000*5+1000*30)/1e6)
	wantCost(t, tab, "gpt-5.5", event.Tokens{Input: 72_001, CacheRead: 200_000, Output: 1000}, (72_001*10+200_000*1+1000*45)/1e6)
	wantCost(t, tab, "gpt-6-sol", event.Tokens{Input: 100_000, CacheCreation: 172_001}, (100_000*4+172_001*5)/1e6)

	// Sonnet 4.6 and Opus 4.6 have standard prices across 1M now.
	wantCost(t, tab, "claude-sonnet-4-6", event.Tokens{Input: 500_000}, 1.5)
	wantCost(t, tab, "claude-opus-4-6", event.Tokens{Input: 500_000}, 2.5)
}

func TestTable_CostAt_History(t *testing.T) {
	tab := pricing.Default()
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		model string
		tok   event.Tokens
		when  time.Time
		want  float64
	}{
		// Sonnet 5.5 cache reads: $0.20 until 2026-10-07, $0.10 from then.
		{"claude-sonnet-5-5", event.Tokens{CacheRead: 1_000_000}, at("2026-10-06T23:59:59Z"), 0.20},
		{"claude-sonnet-5-5", event.Tokens{CacheRead: 1_000_000}, at("2026-10-07T00:00:00Z"), 0.10},
		{"claude-sonnet-5-5", event.Tokens{CacheRead: 1_000_000}, time.Time{}, 0.10},
		// Sonnet 4.6 and Opus 4.6 above 200k before the 1M GA of 2026-03-13.
		{"claude-sonnet-4-6", event.Tokens{Input: 250_000, Output: 1000}, at("2026-03-01T12:00:00Z"), (250_000*6 + 1000*22.5) / 1e6},
		{"claude-sonnet-4-6", event.Tokens{Input: 250_000, Output: 1000}, at("2026-03-13T12:00:00Z"), (250_000*3 + 1000*15) / 1e6},
		{"claude-opus-4-6[1m]", event.Tokens{Input: 250_000, Output: 1000}, at("2026-02-20T00:00:00Z"), (250_000*10 + 1000*37.5) / 1e6},
		{"claude-opus-4-6", event.Tokens{Input: 150_000}, at("2026-02-20T00:00:00Z"), 0.75},
		// o3 before and after its 2025 price cut.
		{"o3-2025-04-16", event.Tokens{Input: 1_000_000, CacheRead: 1_000_000}, at("2025-05-01T00:00:00Z"), 12.5},
		{"o3-2025-04-16", event.Tokens{Input: 1_000_000, CacheRead: 1_000_000}, at("2025-07-01T00:00:00Z"), 2.5},
		// GPT-5.6 cuts.
		{"gpt-5.6-sol", event.Tokens{Input: 100_000}, at("2026-08-20T00:00:00Z"), 0.5},
		{"gpt-5.6-sol", event.Tokens{Input: 100_000}, at("2026-08-21T00:00:00Z"), 0.4},
		{"gpt-5.6-luna", event.Tokens{Output: 1_000_000}, at("2026-07-15T00:00:00Z"), 6},
		{"gpt-5.6-luna", event.Tokens{Output: 1_000_000}, at("2026-08-15T00:00:00Z"), 1.2},
		{"gpt-5.6-terra", event.Tokens{Input: 300_000}, at("2026-07-15T00:00:00Z"), 300_000 * 5.0 / 1e6},
		// A model without history prices the same at any time.
		{"claude-haiku-4-5", event.Tokens{Input: 1_000_000}, at("2025-01-01T00:00:00Z"), 1},
	}
	for _, tt := range tests {
		got, known := tab.CostAt(tt.model, tt.tok, tt.when)
		if !known || !approx(got, tt.want) {
			t.Errorf("CostAt(%q, %+v, %s) = %.9f, %v; want %.9f", tt.model, tt.tok, tt.when.Format(time.RFC3339), got, known, tt.want)
		}
	}
	// Cost and Lookup use the current price.
	p, _, _ := tab.Lookup("claude-sonnet-5-5")
	old, _, _ := tab.LookupAt("claude-sonnet-5-5", at("2026-10-01T00:00:00Z"))
	if p.CacheRead != 0.10 || old.CacheRead != 0.20 {
		t.Errorf("Lookup cache read %.2f, LookupAt(October 1) %.2f; want 0.10 and 0.20", p.CacheRead, old.CacheRead)
	}
}

func TestTable_WithOverrides(t *testing.T) {
	base := pricing.Default()
	beforeSonnet, _, _ := base.Lookup("claude-sonnet-4-5")
	beforeModels := len(base.Models())

	custom := pricing.Price{Input: 1, Output: 2, CacheRead: 0.5}
	tab := base.WithOverrides(map[string]pricing.Price{
		"Claude-Sonnet-4-5": custom,                              // replaces a built-in model, any case
		"my-local-model":    {},                                  // free, but known
		"claude-sonnet-5-5": {Input: 9, Output: 9, CacheRead: 9}, // replaces the dated history too
		"  ":                {Input: 100},                        // ignored
	})

	// The override applies, through the usual lookup stages.
	if p, key, ok := tab.Lookup("claude-sonnet-4-5-20250929"); !ok || key != "claude-sonnet-4-5" || p != custom {
		t.Errorf("overridden Lookup = %+v, %q, %v; want %+v", p, key, ok, custom)
	}
	wantCost(t, tab, "anthropic/claude-sonnet-4-5", event.Tokens{Input: 1_000_000, Output: 1_000_000}, 3)
	// Long context came with the built-in price and goes with it.
	wantCost(t, tab, "claude-sonnet-4-5", event.Tokens{Input: 300_000}, 0.3)
	if usd, known := tab.Cost("my-local-model", event.Tokens{Input: 1000}); !known || usd != 0 {
		t.Errorf("Cost(my-local-model) = %v, %v; want 0, true", usd, known)
	}
	old := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	if usd, _ := tab.CostAt("claude-sonnet-5-5", event.Tokens{CacheRead: 1_000_000}, old); !approx(usd, 9) {
		t.Errorf("overridden CostAt(before history) = %v; want the override at all times", usd)
	}

	// Other models are untouched.
	for _, m := range []string{"claude-opus-4-5", "gpt-5", "gemini-2.5-pro", "claude-sonnet-4"} {
		a, _ := base.Cost(m, event.Tokens{Input: 1234, Output: 567, CacheRead: 8910})
		b, _ := tab.Cost(m, event.Tokens{Input: 1234, Output: 567, CacheRead: 8910})
		if a != b {
			t.Errorf("%s: cost %v with overrides, %v without", m, b, a)
		}
	}
	if len(tab.Models()) != beforeModels+1 {
		t.Errorf("overridden table has %d models, want %d", len(tab.Models()), beforeModels+1)
	}

	// The receiver is unchanged.
	if p, _, _ := base.Lookup("claude-sonnet-4-5"); p != beforeSonnet {
		t.Errorf("WithOverrides changed the receiver: %+v, was %+v", p, beforeSonnet)
	}
	if _, _, ok := base.Lookup("my-local-model"); ok {
		t.Error("WithOverrides added a model to the receiver")
	}
	if got := base.WithOverrides(nil); got != base {
		t.Error("WithOverrides(nil) should return the table itself")
	}
}

func TestTable_WithAliases(t *testing.T) {
	base := pricing.Default()
	// The Codex transcript in the corpus names an Azure deployment, not a model: without an alias
	// the family fallback prices it, approximately; with one it is exact.
	if m, ok := base.Resolve("aide-gpt-5"); !ok || m.Key != "gpt-5" || !m.Approximate {
		t.Fatalf("aide-gpt-5 without an alias: %+v, %v; want gpt-5, approximate", m, ok)
	}
	tab, err := base.WithAliases(map[string]string{
		"aide-gpt-5":  "gpt-5",
		"My-Sonnet":   "anthropic/claude-sonnet-5-5-20261001", // resolved through the lookup stages
		"team/router": "claude-haiku-4-5",
	})
	if err != nil {
		t.Fatal(err)
	}
	wantCost(t, tab, "aide-gpt-5", event.Tokens{Input: 10_000, CacheRead: 90_000, Output: 2000}, 0.04375)
	wantCost(t, tab, "team/router", event.Tokens{Input: 1_000_000}, 1)
	// The alias carries the target's dated history.
	sept := time.Date(2026, 9, 30, 0, 0, 0, 0, time.UTC)
	if usd, _ := tab.CostAt("my-sonnet", event.Tokens{CacheRead: 1_000_000}, sept); !approx(usd, 0.20) {
		t.Errorf("alias CostAt(September) = %v, want the price then (0.20)", usd)
	}
	if m, _ := base.Resolve("aide-gpt-5"); m.Key != "gpt-5" || !m.Approximate {
		t.Error("WithAliases changed the receiver")
	}
	if m, _ := tab.Resolve("aide-gpt-5"); m.Key != "aide-gpt-5" || m.Approximate {
		t.Errorf("an alias is an exact name: %+v", m)
	}

	same, err := base.WithAliases(map[string]string{"x": "gpt-5", "y": "no-such-model"})
	if err == nil || !strings.Contains(err.Error(), "y -> no-such-model") {
		t.Errorf("unknown target: err = %v", err)
	}
	if same != base {
		t.Error("WithAliases with an unknown target must return the receiver unchanged")
	}
}

func TestTable_Empty(t *testing.T) {
	for _, tab := range []*pricing.Table{nil, {}, pricing.New(nil)} {
		if usd, known := tab.Cost("claude-sonnet-4-5", event.Tokens{Input: 10}); known || usd != 0 {
			t.Errorf("empty table Cost = %v, %v", usd, known)
		}
		if _, _, ok := tab.Lookup("gpt-5"); ok {
			t.Error("empty table Lookup found a model")
		}
	}
	var nilTab *pricing.Table
	if got := nilTab.WithOverrides(map[string]pricing.Price{"x": {Input: 1, Output: 1}}); len(got.Models()) != 1 {
		t.Errorf("nil.WithOverrides has %v", got.Models())
	}
}

func TestPrice_Valid(t *testing.T) {
	tests := []struct {
		p    pricing.Price
		want bool
	}{
		{pricing.Price{}, true},
		{pricing.Price{Input: 1, Output: 2}, true},
		{pricing.Price{Input: -1}, false},
		{pricing.Price{CacheRead: math.NaN()}, false},
		{pricing.Price{Output: math.Inf(1)}, false},
		{pricing.Price{Input: 1, LongContextThreshold: 1000}, false},
		{pricing.Price{Input: 1, LongContextThreshold: 1000, LongInput: 2, LongOutput: 3}, true},
		{pricing.Price{LongContextThreshold: -1}, false},
	}
	for _, tt := range tests {
		if got := tt.p.Valid(); got != tt.want {
			t.Errorf("%+v.Valid() = %v, want %v", tt.p, got, tt.want)
		}
	}
}

// The table is immutable: many readers and writers of derived tables give stable answers.
func TestTable_ConcurrentUse(t *testing.T) {
	base := pricing.Default()
	tok := event.Tokens{Input: 1000, Output: 2000, CacheRead: 30000, CacheCreation: 4000, CacheCreation1h: 1000}
	want, _ := base.Cost("claude-opus-4-5", tok)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				if got, _ := base.Cost("global.anthropic.claude-opus-4-5-20251101-v1:0", tok); got != want {
					errs <- "base cost changed"
					return
				}
				derived := base.WithOverrides(map[string]pricing.Price{"claude-opus-4-5": {Input: float64(g)}})
				if p, _, _ := derived.Lookup("claude-opus-4-5"); p.Input != float64(g) {
					errs <- "derived table lost its override"
					return
				}
				_ = base.Models()
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func BenchmarkTable_Cost(b *testing.B) {
	tab := pricing.Default()
	tok := event.Tokens{Input: 1000, Output: 2000, CacheRead: 30000, CacheCreation: 4000}
	for _, m := range []string{"claude-sonnet-4-5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "gemini-2.5-flash-preview-09-2025"} {
		b.Run(m, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				tab.Cost(m, tok)
			}
		})
	}
}

func TestTable_CostAt_NonFinite(t *testing.T) {
	// A table built without checks (New takes any price): a cost that is not a number is unknown,
	// never NaN or Inf.
	tab := pricing.New(map[string]pricing.Price{"inf-model": {Input: math.Inf(1), Output: 1}})
	tok := event.Tokens{Output: 10}
	if usd, known := tab.Cost("inf-model", tok); known || usd != 0 {
		t.Errorf("Cost = %v, %v; want 0, unknown", usd, known)
	}
	if usd, _, known := tab.Quote("inf-model", tok, time.Time{}); known || usd != 0 {
		t.Errorf("Quote = %v, %v; want 0, unknown", usd, known)
	}
	if (pricing.Price{Input: 10_001, Output: 1}).Sane() || !(pricing.Price{Input: 10_000}).Sane() {
		t.Errorf("Sane")
	}
}
