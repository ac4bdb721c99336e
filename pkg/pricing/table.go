package pricing

import (
	"fmt"
	"sync"
	"time"
)

// TableDate is the day the baked-in prices were last checked against their sources.
const TableDate = "2026-11-18"

// Default returns the baked-in table. It is built once and shared; it is immutable.
func Default() *Table { return defaultTable() }

// Source is the table a reader prices with at each use: current when set (a table that follows
// config.toml), else fixed, else Default().
func Source(fixed *Table, current func() *Table) func() *Table {
	switch {
	case current != nil:
		return current
	case fixed != nil:
		return func() *Table { return fixed }
	}
	return Default
}

var defaultTable = sync.OnceValue(func() *Table {
	entries := make(map[string]entry)
	for _, group := range groups {
		for _, s := range group.seeds {
			for _, k := range s.keys {
				if _, dup := entries[k]; dup {
					panic(fmt.Sprintf("pricing: model %q listed twice", k))
				}
				entries[k] = entry{price: s.price, history: s.history, regional: s.regional, approximate: s.approximate}
			}
		}
	}
	return newTable(entries)
})

// groups are the baked-in table's rows by the provider that sells the models (see Providers).
var groups = []struct {
	provider string
	seeds    []seed
}{
	{"anthropic", anthropic}, {"openai", openai}, {"google", google}, {"deepseek", deepseek}, {"qwen", qwen},
	{"zai", zai}, {"moonshot", moonshot}, {"xai", xai}, {"mistral", mistral}, {"kilo", gateways},
}

// seed is one row of the baked-in table: the keys that share a price, the price in force on
// TableDate, and the prices that applied before it, oldest first.
type seed struct {
	keys    []string
	price   Price
	history []period
	// regional: Bedrock's 10% premium for geographic inference profiles applies (Claude 4.5 and
	// later; https://aws.amazon.com/bedrock/pricing/).
	regional bool
	// approximate: usage cannot tell the buckets this price is for from dearer ones (an image
	// model's image output), so every figure priced with it is approximate.
	approximate bool
}

func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// Anthropic, USD per million tokens.
//
// Source: the model pricing table and long context section of
// https://platform.claude.com/docs/en/about-claude/pricing, the model pages under
// https://platform.claude.com/docs/en/models/ (Fable 5.2, Opus 5.5, Sonnet 5.5, Haiku 5.5, Sonnet 5,
// Sonnet 4.5) and the Claude Platform release notes (2026-10-07: Sonnet 5.5 cache reads cut from
// $0.20 to $0.10; 2026-11-09: Fable 5.2 and Mythos 5.2 at $8/$40), read 2026-11-18. Cross-checked
// with kurofune/claudit internal/pricing/default.yaml (checked by its authors against the same page
// on 2026-09-01 and 2026-10-24) and BerriAI/litellm model_prices_and_context_window.json.
// The 1M context of Opus 4.6 and Sonnet 4.6 became standard-priced on 2026-03-13 (Anthropic's GA
// announcement, reported by getaibook.com and agentmastered.com); before, requests above 200k were
// billed at 2x input and 1.5x output, as Sonnet 4 and 4.5 still are with the 1M beta. Fast mode and
// inference_geo "us" (1.1x) are not modelled. Claude 3.x models are retired; their last published
// prices are kept for old transcripts.
var anthropic = []seed{
	// $8/$40 from the release note; the cache prices (0.025x read, 1.25x and 2x writes) from
	// archid21/rightsize v0.10.2 and docs.laozhang.ai (2026-11-10), which quote the pricing page.
	{regional: true, keys: []string{"claude-fable-5-2", "claude-mythos-5-2"},
		price: Price{Input: 8, Output: 40, CacheRead: 0.20, CacheWrite5m: 10, CacheWrite1h: 16}},
	// Fable 5.1 and Mythos 5.1 read the cache at 0.025x input, not 0.1x.
	{regional: true, keys: []string{"claude-fable-5-1", "claude-mythos-5-1"},
		price: Price{Input: 10, Output: 50, CacheRead: 0.25, CacheWrite5m: 12.50, CacheWrite1h: 20}},
	{regional: true, keys: []string{"claude-fable-5", "claude-mythos-5"},
		price: Price{Input: 10, Output: 50, CacheRead: 1, CacheWrite5m: 12.50, CacheWrite1h: 20}},
	// Opus 5.5 reads the cache at 0.05x input.
	{regional: true, keys: []string{"claude-opus-5-5"},
		price: Price{Input: 4, Output: 20, CacheRead: 0.20, CacheWrite5m: 5, CacheWrite1h: 8}},
	{regional: true, keys: []string{"claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-5"},
		price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10}},
	{regional: true, keys: []string{"claude-opus-4-6"},
		price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10},
		history: []period{{until: day(2026, time.March, 13), price: Price{
			Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10,
			LongContextThreshold: 200_000,
			LongInput:            10, LongOutput: 37.50, LongCacheRead: 1, LongCacheWrite5m: 12.50, LongCacheWrite1h: 20,
		}}}},
	{keys: []string{"claude-opus-4-1", "claude-opus-4", "claude-opus-4-0", "claude-3-opus"},
		price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite5m: 18.75, CacheWrite1h: 30}},
	// Sonnet 5.5's cache reads fell to 0.05x input on 2026-10-07.
	{regional: true, keys: []string{"claude-sonnet-5-5"},
		price: Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite5m: 2.50, CacheWrite1h: 4},
		history: []period{{until: day(2026, time.October, 7),
			price: Price{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 4}}}},
	// Sonnet 5's introductory $2/$10 became its standard price; the announced rise never happened.
	{regional: true, keys: []string{"claude-sonnet-5"},
		price: Price{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 4}},
	{regional: true, keys: []string{"claude-sonnet-4-6"},
		price:   Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite5m: 3.75, CacheWrite1h: 6},
		history: []period{{until: day(2026, time.March, 13), price: sonnet4Long}}},
	{keys: []string{"claude-sonnet-4-5"}, price: sonnet4Long, regional: true},
	{keys: []string{"claude-sonnet-4", "claude-sonnet-4-0"}, price: sonnet4Long},
	{keys: []string{"claude-3-7-sonnet", "claude-3-5-sonnet"},
		price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite5m: 3.75, CacheWrite1h: 6}},
	// Haiku 5.5 is priced by prompt length: a prompt over 100k tokens pays 5x on every token.
	{regional: true, keys: []string{"claude-haiku-5-5"},
		price: Price{Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite5m: 0.125, CacheWrite1h: 0.20,
			LongContextThreshold: 100_000,
			LongInput:            0.50, LongOutput: 2.50, LongCacheRead: 0.05, LongCacheWrite5m: 0.625, LongCacheWrite1h: 1}},
	{regional: true, keys: []string{"claude-haiku-4-5"},
		price: Price{Input: 1, Output: 5, CacheRead: 0.10, CacheWrite5m: 1.25, CacheWrite1h: 2}},
	{keys: []string{"claude-3-5-haiku"},
		price: Price{Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite5m: 1, CacheWrite1h: 1.60}},
	// Haiku 3's published cache prices are not the usual multiples of its input price.
	{keys: []string{"claude-3-haiku"},
		price: Price{Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite5m: 0.30, CacheWrite1h: 0.50}},
}

// sonnet4Long is Sonnet 4 and 4.5 (and Sonnet 4.6 before 2026-03-13): a prompt over 200k tokens,
// possible only with the 1M context beta, pays 2x input and 1.5x output on every token.
var sonnet4Long = Price{
	Input: 3, Output: 15, CacheRead: 0.30, CacheWrite5m: 3.75, CacheWrite1h: 6,
	LongContextThreshold: 200_000,
	LongInput:            6, LongOutput: 22.50, LongCacheRead: 0.60, LongCacheWrite5m: 7.50, LongCacheWrite1h: 12,
}

// OpenAI, USD per million tokens, Standard processing tier. Cached input is CacheRead.
//
// Source: https://developers.openai.com/api/docs/pricing and the model pages under
// https://developers.openai.com/api/docs/models/ (gpt-6.2-sol read 2026-11-18: cached input $0.10,
// 30-minute cache writes $2.50, 12-hour writes $5; above 272K input tokens input and cache rates
// double and output costs 1.5x for the whole request). Earlier models from
// BerriAI/litellm model_prices_and_context_window.json (GPT-5 to GPT-5.6 rows, July 2026) and
// hex.pm openai_responses lib/responses/pricing.ex (GPT-4.1, GPT-4o; OpenAI's page of 2025-06-03).
// GPT-5.6 price changes from TheKrush/PromptFuel data/model-pricing-estimates.csv and
// SergeevDmitry/llm-kit usage-tab@1.2.0 (observed 2026-09-07); GPT-6 Astra, Sol and Luna from the
// LiteLLM launch posts (2026-09-03, 2026-09-22) and merefield/codexometer v0.18.4; GPT-6.1 Sol from
// the model page as quoted by KZCFG/AILSA-SubSwitch (checked 2026-10-01) and docs.apiyi.com. o3's
// 80% cut (mid-2025; the date is OpenAI's announcement of 2025-06-10) from calcis.dev and
// modelpedia.dev. Where OpenAI publishes one cache-write price, both write fields carry it; where it
// publishes no cached-input price (the pro models, the first GPT-4o snapshot), cached tokens are
// billed as plain input.
// Regional processing (1.1x), priority, flex and batch tiers are not modelled.
var openai = []seed{
	{keys: []string{"gpt-6.2-sol"},
		price: openAILong(Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite5m: 2.50, CacheWrite1h: 5})},
	{keys: []string{"gpt-6.1-sol"},
		price: openAILong(Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite5m: 2.50, CacheWrite1h: 2.50})},
	{keys: []string{"gpt-6-astra"},
		price: openAILong(Price{Input: 10, Output: 50, CacheRead: 1, CacheWrite5m: 12.50, CacheWrite1h: 12.50})},
	{keys: []string{"gpt-6-sol"},
		price: openAILong(Price{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 2.50})},
	{keys: []string{"gpt-6-luna"},
		price: openAILong(Price{Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite5m: 0.125, CacheWrite1h: 0.125})},
	// GPT-5.6 launched 2026-07-09; Terra and Luna were cut on 2026-07-30, Sol on 2026-08-21.
	{keys: []string{"gpt-5.6-sol"},
		price: openAILong(Price{Input: 4, Output: 20, CacheRead: 0.40, CacheWrite5m: 5, CacheWrite1h: 5}),
		history: []period{{until: day(2026, time.August, 21),
			price: openAILong(Price{Input: 5, Output: 30, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 6.25})}}},
	{keys: []string{"gpt-5.6-terra"},
		price: openAILong(Price{Input: 2, Output: 12, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 2.50}),
		history: []period{{until: day(2026, time.July, 30),
			price: openAILong(Price{Input: 2.50, Output: 15, CacheRead: 0.25, CacheWrite5m: 3.125, CacheWrite1h: 3.125})}}},
	{keys: []string{"gpt-5.6-luna"},
		price: openAILong(Price{Input: 0.20, Output: 1.20, CacheRead: 0.02, CacheWrite5m: 0.25, CacheWrite1h: 0.25}),
		history: []period{{until: day(2026, time.July, 30),
			price: openAILong(Price{Input: 1, Output: 6, CacheRead: 0.10, CacheWrite5m: 1.25, CacheWrite1h: 1.25})}}},
	{keys: []string{"gpt-5.5"}, price: openAILong(Price{Input: 5, Output: 30, CacheRead: 0.50})},
	{keys: []string{"gpt-5.5-pro", "gpt-5.4-pro"}, price: openAILong(Price{Input: 30, Output: 180, CacheRead: 3})},
	{keys: []string{"gpt-5.4"}, price: openAILong(Price{Input: 2.50, Output: 15, CacheRead: 0.25})},
	{keys: []string{"gpt-5.4-mini"}, price: Price{Input: 0.75, Output: 4.50, CacheRead: 0.075}},
	{keys: []string{"gpt-5.4-nano"}, price: Price{Input: 0.20, Output: 1.25, CacheRead: 0.02}},
	{keys: []string{"gpt-5.3-codex", "gpt-5.3-chat", "gpt-5.2", "gpt-5.2-codex"},
		price: Price{Input: 1.75, Output: 14, CacheRead: 0.175}},
	{keys: []string{"gpt-5.2-pro"}, price: Price{Input: 21, Output: 168, CacheRead: 21}},
	{keys: []string{"gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-max", "gpt-5", "gpt-5-codex"},
		price: Price{Input: 1.25, Output: 10, CacheRead: 0.125}},
	{keys: []string{"gpt-5.1-codex-mini", "gpt-5-mini"}, price: Price{Input: 0.25, Output: 2, CacheRead: 0.025}},
	{keys: []string{"gpt-5-nano"}, price: Price{Input: 0.05, Output: 0.40, CacheRead: 0.005}},
	{keys: []string{"gpt-5-pro"}, price: Price{Input: 15, Output: 120, CacheRead: 15}},
	{keys: []string{"gpt-4.1"}, price: Price{Input: 2, Output: 8, CacheRead: 0.50}},
	{keys: []string{"gpt-4.1-mini"}, price: Price{Input: 0.40, Output: 1.60, CacheRead: 0.10}},
	{keys: []string{"gpt-4.1-nano"}, price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.025}},
	{keys: []string{"gpt-4o"}, price: Price{Input: 2.50, Output: 10, CacheRead: 1.25}},
	// The first GPT-4o snapshot kept its launch price and had no cached-input discount.
	{keys: []string{"gpt-4o-2024-05-13"}, price: Price{Input: 5, Output: 15, CacheRead: 5}},
	{keys: []string{"gpt-4o-mini"}, price: Price{Input: 0.15, Output: 0.60, CacheRead: 0.075}},
	{keys: []string{"o1"}, price: Price{Input: 15, Output: 60, CacheRead: 7.50}},
	{keys: []string{"o1-mini", "o3-mini"}, price: Price{Input: 1.10, Output: 4.40, CacheRead: 0.55}},
	{keys: []string{"o1-pro"}, price: Price{Input: 150, Output: 600, CacheRead: 150}},
	{keys: []string{"o3"}, price: Price{Input: 2, Output: 8, CacheRead: 0.50},
		history: []period{{until: day(2025, time.June, 10),
			price: Price{Input: 10, Output: 40, CacheRead: 2.50}}}},
	{keys: []string{"o3-pro"}, price: Price{Input: 20, Output: 80, CacheRead: 20}},
	{keys: []string{"o4-mini"}, price: Price{Input: 1.10, Output: 4.40, CacheRead: 0.275}},
	{keys: []string{"codex-mini-latest"}, price: Price{Input: 1.50, Output: 6, CacheRead: 0.375}},
}

// openAILong adds OpenAI's long-context rule for GPT-5.4 and later: above 272K input tokens, input
// and cache rates double and output costs 1.5x, for the whole request.
func openAILong(p Price) Price {
	p.LongContextThreshold = 272_000
	p.LongInput = 2 * p.Input
	p.LongOutput = 1.5 * p.Output
	p.LongCacheRead = 2 * p.CacheRead
	p.LongCacheWrite5m = 2 * p.CacheWrite5m
	p.LongCacheWrite1h = 2 * p.CacheWrite1h
	return p
}

// Google Gemini API (Developer API, paid tier, text/image/video input), USD per million tokens.
// Context caching is CacheRead; there is no cache-write charge (storage per hour is not modelled).
// Thinking tokens are billed as output.
//
// Source: https://ai.google.dev/gemini-api/docs/pricing through the gemini/ rows of
// BerriAI/litellm model_prices_and_context_window.json (July 2026), cross-checked with
// morphllm.com/gemini-api-pricing and geotoolbox.ai/blog/gemini-api-pricing (July 2026), read
// 2026-11-18. Keys are family names: gemini-3-pro also prices gemini-3-pro-preview (shut down
// 2026-03-09), gemini-3.1-pro prices gemini-3.1-pro-preview and its -customtools variant.
// Gemini 3.6 Flash and 3.5 Flash-Lite are LiteLLM's gemini/ rows (their list prices; the
// promotion that runs until 2026-12-31 is not modelled). Gemini 3.7 and 3.8 Flash, in no source we
// could check, are priced as a newer version of the family (stage 6 of the package documentation):
// as 3.6 Flash, approximately.
var google = []seed{
	{keys: []string{"gemini-3.6-flash"}, price: Price{Input: 1.50, Output: 7.50, CacheRead: 0.15}},
	{keys: []string{"gemini-3.5-flash"}, price: Price{Input: 1.50, Output: 9, CacheRead: 0.15}},
	{keys: []string{"gemini-3.5-flash-lite"}, price: Price{Input: 0.30, Output: 2.50, CacheRead: 0.03}},
	{keys: []string{"gemini-3.1-pro", "gemini-3-pro"}, price: Price{Input: 2, Output: 12, CacheRead: 0.20,
		LongContextThreshold: 200_000, LongInput: 4, LongOutput: 18, LongCacheRead: 0.40}},
	{keys: []string{"gemini-3.1-flash-lite"}, price: Price{Input: 0.25, Output: 1.50, CacheRead: 0.025}},
	{keys: []string{"gemini-3-flash"}, price: Price{Input: 0.50, Output: 3, CacheRead: 0.05}},
	// Gemini 3 Pro Image: text input and output as Gemini 3 Pro, no cached-input price (billed as
	// input). Image output costs $120 per million tokens, which usage does not tell apart from text
	// output, so its figures are approximate.
	{keys: []string{"gemini-3-pro-image"}, price: Price{Input: 2, Output: 12, CacheRead: 2}, approximate: true},
	{keys: []string{"gemini-2.5-pro"}, price: Price{Input: 1.25, Output: 10, CacheRead: 0.125,
		LongContextThreshold: 200_000, LongInput: 2.50, LongOutput: 15, LongCacheRead: 0.25}},
	{keys: []string{"gemini-2.5-flash"}, price: Price{Input: 0.30, Output: 2.50, CacheRead: 0.03}},
	{keys: []string{"gemini-2.5-flash-lite"}, price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.01}},
	{keys: []string{"gemini-2.0-flash"}, price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.025}},
	{keys: []string{"gemini-2.0-flash-lite"}, price: Price{Input: 0.075, Output: 0.30, CacheRead: 0.01875}},
}

// The providers below bill no cache writes (automatic caching: cached input is CacheRead); a
// provider that publishes no cached-input price bills cached tokens as input. Tiered,
// time-of-day and promotional prices are not modelled: each row is the standard list price of the
// shortest context tier. Checked 2026-11-18 against LiteLLM's model_prices_and_context_window.json
// (the provider-prefixed rows named beside each block) and the provider pages.

// DeepSeek, https://api-docs.deepseek.com/quick_start/pricing (the standard, not the off-peak
// price; LiteLLM deepseek/ rows). deepseek-chat and deepseek-reasoner are V3.2.
var deepseek = []seed{
	{keys: []string{"deepseek-v4-flash"}, price: Price{Input: 0.14, Output: 0.28, CacheRead: 0.0028}},
	{keys: []string{"deepseek-v4-pro"}, price: Price{Input: 0.435, Output: 0.87, CacheRead: 0.0036}},
	{keys: []string{"deepseek-chat", "deepseek-reasoner"}, price: Price{Input: 0.28, Output: 0.42, CacheRead: 0.028}},
}

// Qwen (Alibaba Cloud Model Studio), https://www.alibabacloud.com/help/en/model-studio/models,
// international (Singapore) endpoint, first context tier, as OpenRouter lists them
// (https://openrouter.ai/qwen; LiteLLM openrouter/qwen/ and dashscope/ rows). No cached-input price.
// Qwen3-Max is the first tier of LiteLLM's dashscope/qwen3-max (up to 32k prompt tokens); Qwen
// Code's default qwen3.7-max, in no source we could check, is priced as a newer version of it.
var qwen = []seed{
	{keys: []string{"qwen3-max"}, price: Price{Input: 1.20, Output: 6, CacheRead: 1.20}},
	{keys: []string{"qwen3-coder-plus"}, price: Price{Input: 1, Output: 5, CacheRead: 1}},
	{keys: []string{"qwen3-coder-flash", "qwen-coder"}, price: Price{Input: 0.30, Output: 1.50, CacheRead: 0.30}},
	{keys: []string{"qwen3-coder"}, price: Price{Input: 0.22, Output: 0.95, CacheRead: 0.22}},
	{keys: []string{"qwen-max"}, price: Price{Input: 1.60, Output: 6.40, CacheRead: 1.60}},
	{keys: []string{"qwen-plus"}, price: Price{Input: 0.40, Output: 1.20, CacheRead: 0.40}},
}

// Z.ai GLM, https://docs.z.ai/guides/overview/pricing (LiteLLM zai/ rows).
var zai = []seed{
	{keys: []string{"glm-5.1"}, price: Price{Input: 1.40, Output: 4.40, CacheRead: 0.26}},
	{keys: []string{"glm-5"}, price: Price{Input: 1, Output: 3.20, CacheRead: 0.20}},
	{keys: []string{"glm-4.7", "glm-4.6"}, price: Price{Input: 0.60, Output: 2.20, CacheRead: 0.11}},
	{keys: []string{"glm-4.5"}, price: Price{Input: 0.60, Output: 2.20, CacheRead: 0.60}},
	{keys: []string{"glm-4.5-air"}, price: Price{Input: 0.20, Output: 1.10, CacheRead: 0.20}},
}

// Moonshot Kimi, https://platform.moonshot.ai/docs/pricing/chat (LiteLLM moonshot/ rows).
var moonshot = []seed{
	{keys: []string{"kimi-k2.6"}, price: Price{Input: 0.95, Output: 4, CacheRead: 0.16}},
	{keys: []string{"kimi-k2.5"}, price: Price{Input: 0.60, Output: 3, CacheRead: 0.10}},
	{keys: []string{"kimi-k2", "kimi-k2-thinking"}, price: Price{Input: 0.60, Output: 2.50, CacheRead: 0.15}},
	{keys: []string{"kimi-k2-turbo", "kimi-k2-thinking-turbo"}, price: Price{Input: 1.15, Output: 8, CacheRead: 0.15}},
}

// xAI Grok, https://docs.x.ai/docs/models (LiteLLM xai/ rows).
var xai = []seed{
	{keys: []string{"grok-code-fast-1", "grok-code-fast"}, price: Price{Input: 0.20, Output: 1.50, CacheRead: 0.02}},
	{keys: []string{"grok-4.5"}, price: Price{Input: 2, Output: 6, CacheRead: 0.50}},
	// Cline's and Pi's xAI default; LiteLLM lists the non-reasoning model as its beta.
	{keys: []string{"grok-4.20-0309-reasoning", "grok-4.20-0309-non-reasoning"}, price: Price{Input: 2, Output: 6, CacheRead: 0.20}},
	{keys: []string{"grok-4-1-fast", "grok-4-1-fast-reasoning", "grok-4-1-fast-non-reasoning",
		"grok-4-fast-reasoning", "grok-4-fast-non-reasoning"}, price: Price{Input: 0.20, Output: 0.50, CacheRead: 0.05}},
	{keys: []string{"grok-4", "grok-4-0709"}, price: Price{Input: 3, Output: 15, CacheRead: 0.75}},
	{keys: []string{"grok-3"}, price: Price{Input: 3, Output: 15, CacheRead: 0.75}},
	{keys: []string{"grok-3-mini"}, price: Price{Input: 0.30, Output: 0.50, CacheRead: 0.075}},
}

// Mistral, https://mistral.ai/pricing#api-pricing (LiteLLM mistral/ rows). No cached-input price.
var mistral = []seed{
	{keys: []string{"devstral-2512", "devstral-medium", "devstral-medium-2507", "devstral-latest"},
		price: Price{Input: 0.40, Output: 2, CacheRead: 0.40}},
	{keys: []string{"devstral-small", "devstral-small-2507", "labs-devstral-small-2512"},
		price: Price{Input: 0.10, Output: 0.30, CacheRead: 0.10}},
	{keys: []string{"codestral-2508"}, price: Price{Input: 0.30, Output: 0.90, CacheRead: 0.30}},
	{keys: []string{"mistral-large-3", "mistral-large-2512"}, price: Price{Input: 0.50, Output: 1.50, CacheRead: 0.50}},
	{keys: []string{"mistral-medium-3-5", "mistral-medium-2604"}, price: Price{Input: 1.50, Output: 7.50, CacheRead: 1.50}},
	{keys: []string{"mistral-small-3-2-2506"}, price: Price{Input: 0.06, Output: 0.18, CacheRead: 0.06}},
}

// Gateways' own free models. Kilo Code's kilo-auto/free routes to free models at no charge
// (https://kilo.ai/docs/getting-started/setting-up#free-models, read 2026-11-18).
var gateways = []seed{
	{keys: []string{"kilo-auto/free"}, price: Price{}},
}
