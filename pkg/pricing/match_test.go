package pricing_test

import (
	"encoding/json"
	"os"
	"time"

	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// Every model name the shared corpus's transcripts carry (Claude Code, Codex, Gemini CLI, Pi,
// Cline, OpenCode, Copilot dumps) is priced by the built-in table; only the Azure deployment name
// and the image model are approximate.
func TestCorpus_EveryModelPriced(t *testing.T) {
	names := map[string]struct {
		key    string
		approx bool
	}{
		"claude-sonnet-4-5-20250929":                           {key: "claude-sonnet-4-5"},
		"claude-sonnet-4-5":                                    {key: "claude-sonnet-4-5"},
		"claude-sonnet-4-20250514":                             {key: "claude-sonnet-4"},
		"claude-opus-4-5":                                      {key: "claude-opus-4-5"},
		"claude-opus-4-5-20251101":                             {key: "claude-opus-4-5"},
		"claude-3-opus-20240229":                               {key: "claude-3-opus"},
		"claude-sonnet-4.6":                                    {key: "claude-sonnet-4-6"},
		"converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0": {key: "claude-haiku-4-5"},
		"generic-copilot/litellm/anthropic/claude-haiku-4.5":   {key: "claude-haiku-4-5"},
		"aide-gpt-5":                                           {key: "gpt-5", approx: true},
		"gpt-5-1-codex-2025-11-13":                             {key: "gpt-5.1-codex"},
		"gpt-5.1-codex":                                        {key: "gpt-5.1-codex"},
		"gpt-5.5":                                              {key: "gpt-5.5"},
		"gemini-3-pro":                                         {key: "gemini-3-pro"},
		"gemini-3-pro-image-preview":                           {key: "gemini-3-pro-image", approx: true},
		"gemini-3-flash-preview":                               {key: "gemini-3-flash"},
		"gemini-3.1-pro-preview":                               {key: "gemini-3.1-pro"},
		"gemini-3.1-pro-preview-customtools":                   {key: "gemini-3.1-pro"},
		"gemini-3.5-flash":                                     {key: "gemini-3.5-flash"},
		"gemini-3.5-flash-lite":                                {key: "gemini-3.5-flash-lite"},
		"gemini-3.8-flash":                                     {key: "gemini-3.6-flash", approx: true},
		"deepseek/deepseek-v4-flash":                           {key: "deepseek-v4-flash"},
		"kilo-auto/free":                                       {key: "kilo-auto/free"},
	}
	tab := pricing.Default()
	for name, want := range names {
		m, ok := tab.Resolve(name)
		if !ok || m.Key != want.key || m.Approximate != want.approx {
			t.Errorf("Resolve(%q) = %+v, %v; want key %q, approximate %v", name, m, ok, want.key, want.approx)
		}
		usd, ap, known := tab.Quote(name, event.Tokens{Input: 1000, Output: 1000}, time.Time{})
		if !known || ap != want.approx || (usd <= 0 && name != "kilo-auto/free") {
			t.Errorf("Quote(%q) = %v, %v, %v", name, usd, ap, known)
		}
	}
}

// The default models of the supported clients, and the new families they bring.
func TestDefault_ClientDefaultsAndNewFamilies(t *testing.T) {
	tab := pricing.Default()
	for name, key := range map[string]string{
		"gemini-2.5-pro": "gemini-2.5-pro", "gemini-3-pro-preview": "gemini-3-pro", "gpt-5-codex": "gpt-5-codex",
		"claude-sonnet-4-5-20250929": "claude-sonnet-4-5", "qwen3-coder-plus": "qwen3-coder-plus",
		"deepseek-chat": "deepseek-chat", "deepseek-reasoner": "deepseek-reasoner", "deepseek-v4-pro": "deepseek-v4-pro",
		"openrouter/qwen/qwen3-coder": "qwen3-coder", "z-ai/glm-4.6": "glm-4.6", "glm-4.7": "glm-4.7", "glm-5.1": "glm-5.1",
		"moonshotai/kimi-k2": "kimi-k2", "kimi-k2-0905-preview": "kimi-k2", "kimi-k2-turbo-preview": "kimi-k2-turbo",
		"x-ai/grok-code-fast-1": "grok-code-fast-1", "xai/grok-4-0709": "grok-4-0709", "grok-4-1-fast-reasoning": "grok-4-1-fast-reasoning",
		"mistralai/devstral-2512": "devstral-2512", "mistral/devstral-small-2507": "devstral-small-2507",
		"codestral-2508": "codestral-2508", "mistral-large-2512": "mistral-large-2512",
	} {
		m, ok := tab.Resolve(name)
		if !ok || m.Key != key || m.Approximate {
			t.Errorf("Resolve(%q) = %+v, %v; want exactly %q", name, m, ok, key)
		}
	}
	// Tiers stay apart: a smaller or dearer tier never takes a neighbour's price.
	for _, name := range []string{"qwen3-coder-next", "glm-4.6v", "grok-4-heavy", "devstral-large", "kimi-k3"} {
		if m, ok := tab.Resolve(name); ok {
			t.Errorf("Resolve(%q) = %+v; want unknown", name, m)
		}
	}
}

// A route names where a model ran, not another model: every spelling prices as the model itself.
func TestTable_RouteSpellings(t *testing.T) {
	tab := pricing.Default()
	for name, key := range map[string]string{
		"bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0":                         "claude-sonnet-4-5",
		"bedrock/converse/global.anthropic.claude-opus-4-5-20251101-v1:0":           "claude-opus-4-5",
		"converse/anthropic.claude-haiku-4-5-20251001-v1:0":                         "claude-haiku-4-5",
		"vertex_ai/claude-sonnet-4-5@20250929":                                      "claude-sonnet-4-5",
		"vertex_ai/gemini-2.5-pro":                                                  "gemini-2.5-pro",
		"azure/gpt-5":                                                               "gpt-5",
		"azure/gpt-5.1-codex":                                                       "gpt-5.1-codex",
		"openrouter/anthropic/claude-sonnet-4.5":                                    "claude-sonnet-4-5",
		"openrouter/openai/gpt-5":                                                   "gpt-5",
		"openrouter/deepseek/deepseek-chat":                                         "deepseek-chat",
		"openrouter/google/gemini-2.5-flash":                                        "gemini-2.5-flash",
		"projects/p/locations/us-east5/publishers/anthropic/models/claude-opus-4-5": "claude-opus-4-5",
	} {
		m, ok := tab.Resolve(name)
		if !ok || m.Key != key || m.Approximate || m.Factor != 1 {
			t.Errorf("Resolve(%q) = %+v, %v; want exactly %q at factor 1", name, m, ok, key)
		}
	}
	// An OpenRouter free variant costs nothing.
	if usd, known := tab.Cost("openrouter/qwen/qwen3-coder:free", event.Tokens{Input: 1_000_000, Output: 1_000_000}); !known || usd != 0 {
		t.Errorf("qwen3-coder:free = %v, %v; want 0, known", usd, known)
	}
	// Family fallback: names around a known model are priced as it, approximately.
	for name, key := range map[string]string{
		"aide-gpt-5": "gpt-5", "azure/my-team-gpt-5-mini": "gpt-5-mini", "prod_claude-sonnet-4-5": "claude-sonnet-4-5",
		"gpt-5-eastus-deployment": "gpt-5",
	} {
		m, ok := tab.Resolve(name)
		if !ok || m.Key != key || !m.Approximate {
			t.Errorf("Resolve(%q) = %+v, %v; want %q, approximate", name, m, ok, key)
		}
		if r := pricing.Tag(event.ReliabilityAccurate, m.Approximate); r != event.ReliabilityApproximate {
			t.Errorf("Tag(accurate, fallback) = %q", r)
		}
	}
	if r := pricing.Tag(event.ReliabilityUnreliable, true); r != event.ReliabilityUnreliable {
		t.Errorf("Tag must not raise an unreliable figure: %q", r)
	}
	if r := pricing.Tag(event.ReliabilityAccurate, false); r != event.ReliabilityAccurate {
		t.Errorf("Tag of an exact price: %q", r)
	}
}

// Bedrock's geographic inference profiles cost 10% more for Claude 4.5 and later; the global
// profile and older models do not.
func TestTable_BedrockRegionalPremium(t *testing.T) {
	tab := pricing.Default()
	tok := event.Tokens{Input: 1000, Output: 2000, CacheRead: 30000, CacheCreation: 4000}
	for _, tc := range []struct {
		name, base string
		factor     float64
	}{
		{"converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", 1.1},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", 1.1},
		{"bedrock/eu.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5", 1.1},
		{"apac.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", 1.1},
		{"au.anthropic.claude-sonnet-4-6", "claude-sonnet-4-6", 1.1},
		{"jp.anthropic.claude-opus-4-7", "claude-opus-4-7", 1.1},
		{"global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", 1},
		{"anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", 1},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4", 1},
		{"eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet", 1},
		{"us.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1", 1},
	} {
		got, known := tab.Cost(tc.name, tok)
		base, _ := tab.Cost(tc.base, tok)
		if !known || !approx(got, base*tc.factor) {
			t.Errorf("%s: %v, want %v x %.1f = %v", tc.name, got, base, tc.factor, base*tc.factor)
		}
	}
	// An override is the price paid: no premium is added to it.
	o := tab.WithOverrides(map[string]pricing.Price{"claude-haiku-4-5": {Input: 1, Output: 1}})
	if usd, _ := o.Cost("jp.anthropic.claude-haiku-4-5-20251001-v1:0", event.Tokens{Input: 1_000_000}); !approx(usd, 1) {
		t.Errorf("override with a regional route: %v, want 1", usd)
	}
}

// LiteLLM's price database (used by path, when present) agrees on the regional premium and on
// the new families' prices: every Bedrock regional Claude row it has is our base price times
// our factor.
func TestTable_AgreesWithLiteLLM(t *testing.T) {
	b, err := os.ReadFile("../../../shared/pricing/model_prices_and_context_window.json")
	if err != nil {
		t.Skipf("LiteLLM database not available: %v", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	type litellmRow struct {
		Input  float64 `json:"input_cost_per_token"`
		Output float64 `json:"output_cost_per_token"`
	}
	db := map[string]litellmRow{}
	for k, v := range raw {
		var r litellmRow
		if json.Unmarshal(v, &r) == nil {
			db[k] = r
		}
	}
	tab := pricing.Default()
	for _, name := range []string{
		"jp.anthropic.claude-haiku-4-5-20251001-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu.anthropic.claude-sonnet-4-6",
		"us.anthropic.claude-opus-4-5-20251101-v1:0", "us.anthropic.claude-sonnet-4-20250514-v1:0",
		"deepseek/deepseek-v4-flash", "xai/grok-code-fast-1", "zai/glm-4.6", "moonshot/kimi-k2.5",
		"mistral/devstral-2512", "openrouter/qwen/qwen3-coder-plus", "gemini/gemini-3-pro-image-preview",
		"gemini/gemini-3.6-flash", "gemini/gemini-3.5-flash-lite", "xai/grok-4.20-0309-reasoning",
		"gpt-5.3-chat-latest",
	} {
		row, ok := db[name]
		if !ok {
			t.Errorf("%s: not in LiteLLM's database", name)
			continue
		}
		p, _, known := tab.Lookup(name)
		if !known || !approx(p.Input, row.Input*1e6) || !approx(p.Output, row.Output*1e6) {
			t.Errorf("%s: ours %v/%v, LiteLLM %v/%v", name, p.Input, p.Output, row.Input*1e6, row.Output*1e6)
		}
	}
}

// A newer version of a known family (Gemini CLI 0.61's default gemini-3.8-flash, next to
// gemini-3.5-flash and gemini-3.6-flash) is priced as the family's newest known version below it,
// approximately; an older version, another major version, another number of version parts or
// another tier stays unknown.
func TestTable_NewerVersionOfAFamily(t *testing.T) {
	tab := pricing.Default()
	for name, key := range map[string]string{
		"gemini-3.8-flash":                  "gemini-3.6-flash",
		"gemini-3.7-flash":                  "gemini-3.6-flash",
		"models/gemini-3.8-flash":           "gemini-3.6-flash",
		"gemini-3.8-flash-preview":          "gemini-3.6-flash",
		"gemini-3.8-flash-lite":             "gemini-3.5-flash-lite",
		"gemini-3.9-pro-preview":            "gemini-3.1-pro",
		"claude-opus-4-9":                   "claude-opus-4-8",
		"claude-opus-4-9-20261201":          "claude-opus-4-8",
		"us.anthropic.claude-opus-4-9-v1:0": "claude-opus-4-8",
		"claude-sonnet-4-7":                 "claude-sonnet-4-6",
		"claude-haiku-4-6":                  "claude-haiku-4-5",
		"gpt-5.6":                           "gpt-5.5",
		"gpt-5.6-codex":                     "gpt-5.3-codex",
		"gpt-5.6-mini":                      "gpt-5.4-mini",
		"glm-4.8":                           "glm-4.7",
		"gpt-6.2-astra":                     "gpt-6-astra",
		"gpt-6.3-sol":                       "gpt-6.2-sol",
		"kimi-k2.7":                         "kimi-k2.6",
		"deepseek-v4.1-flash":               "deepseek-v4-flash",
		"gemini-3.2-flash":                  "gemini-3-flash",
		"qwen3.7-max":                       "qwen3-max",
	} {
		m, ok := tab.Resolve(name)
		if !ok || m.Key != key || !m.Approximate {
			t.Errorf("Resolve(%q) = %+v, %v; want %q, approximate", name, m, ok, key)
			continue
		}
		usd, approximate, known := tab.Quote(name, event.Tokens{Input: 1000}, time.Time{})
		want, _, _ := tab.Lookup(key)
		if !known || !approximate || !approx(usd, want.Input*m.Factor/1000) {
			t.Errorf("Quote(%q) = %v, %v, %v; want %q's input price, approximate", name, usd, approximate, known, key)
		}
	}
	for _, name := range []string{
		"glm-4.1",                // older than every known GLM 4
		"gemini-4.1-flash",       // another major version
		"kimi-k3",                // another major version
		"gpt-6.1-terra",          // the only Terra is 5.6
		"gemini-3.8-flash-image", // another tier
		"gemini-3.8-flash-tts",   // another tier
		"gpt-5.6-codex-spark",    // another tier
		"claude-opus-4-9-fast",   // another tier
		"my-gemini-3.8-flash",    // not the family's own name
		"gemini-3.8-flash-8b",    // a parameter count
		"devstral-2601",          // a snapshot number, not a version
	} {
		if m, ok := tab.Resolve(name); ok {
			t.Errorf("Resolve(%q) = %+v; want unknown", name, m)
		}
	}
	// The family's newest version below the name wins, whatever the table holds.
	small := pricing.New(map[string]pricing.Price{"gemini-3.5-flash": {Input: 1}, "gemini-3-flash": {Input: 2}})
	if m, ok := small.Resolve("gemini-3.8-flash"); !ok || m.Key != "gemini-3.5-flash" || !m.Approximate {
		t.Errorf("with 3.5 and 3 Flash, Resolve(gemini-3.8-flash) = %+v, %v; want gemini-3.5-flash, approximate", m, ok)
	}
	// A known model is never approximate, and an exact override of a newer version wins.
	over := tab.WithOverrides(map[string]pricing.Price{"gemini-3.8-flash": {Input: 3, Output: 4}})
	if m, ok := over.Resolve("gemini-3.8-flash"); !ok || m.Key != "gemini-3.8-flash" || m.Approximate {
		t.Errorf("with an override, Resolve(gemini-3.8-flash) = %+v, %v; want itself, exact", m, ok)
	}
}
