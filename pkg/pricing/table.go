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
	for _, group := range [][]seed{anthropic, openai, google} {
		for _, s := range group {
			for _, k := range s.keys {
				if _, dup := entries[k]; dup {
					panic(fmt.Sprintf("pricing: model %q listed twice", k))
				}
				entries[k] = entry{price: s.price, history: s.history}
			}
		}
	}
	return newTable(entries)
})

// seed is one row of the baked-in table: the keys that share a price, the price in force on
// TableDate, and the prices that applied before it, oldest first.
type seed struct {
	keys    []string
	price   Price
	history []period
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
	{keys: []string{"claude-fable-5-2", "claude-mythos-5-2"},
		price: Price{Input: 8, Output: 40, CacheRead: 0.20, CacheWrite5m: 10, CacheWrite1h: 16}},
	// Fable 5.1 and Mythos 5.1 read the cache at 0.025x input, not 0.1x.
	{keys: []string{"claude-fable-5-1", "claude-mythos-5-1"},
		price: Price{Input: 10, Output: 50, CacheRead: 0.25, CacheWrite5m: 12.50, CacheWrite1h: 20}},
	{keys: []string{"claude-fable-5", "claude-mythos-5"},
		price: Price{Input: 10, Output: 50, CacheRead: 1, CacheWrite5m: 12.50, CacheWrite1h: 20}},
	// Opus 5.5 reads the cache at 0.05x input.
	{keys: []string{"claude-opus-5-5"},
		price: Price{Input: 4, Output: 20, CacheRead: 0.20, CacheWrite5m: 5, CacheWrite1h: 8}},
	{keys: []string{"claude-opus-5", "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-5"},
		price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10}},
	{keys: []string{"claude-opus-4-6"},
		price: Price{Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10},
		history: []period{{until: day(2026, time.March, 13), price: Price{
			Input: 5, Output: 25, CacheRead: 0.50, CacheWrite5m: 6.25, CacheWrite1h: 10,
			LongContextThreshold: 200_000,
			LongInput:            10, LongOutput: 37.50, LongCacheRead: 1, LongCacheWrite5m: 12.50, LongCacheWrite1h: 20,
		}}}},
	{keys: []string{"claude-opus-4-1", "claude-opus-4", "claude-opus-4-0", "claude-3-opus"},
		price: Price{Input: 15, Output: 75, CacheRead: 1.50, CacheWrite5m: 18.75, CacheWrite1h: 30}},
	// Sonnet 5.5's cache reads fell to 0.05x input on 2026-10-07.
	{keys: []string{"claude-sonnet-5-5"},
		price: Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite5m: 2.50, CacheWrite1h: 4},
		history: []period{{until: day(2026, time.October, 7),
			price: Price{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 4}}}},
	// Sonnet 5's introductory $2/$10 became its standard price; the announced rise never happened.
	{keys: []string{"claude-sonnet-5"},
		price: Price{Input: 2, Output: 10, CacheRead: 0.20, CacheWrite5m: 2.50, CacheWrite1h: 4}},
	{keys: []string{"claude-sonnet-4-6"},
		price:   Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite5m: 3.75, CacheWrite1h: 6},
		history: []period{{until: day(2026, time.March, 13), price: sonnet4Long}}},
	{keys: []string{"claude-sonnet-4-5", "claude-sonnet-4", "claude-sonnet-4-0"}, price: sonnet4Long},
	{keys: []string{"claude-3-7-sonnet", "claude-3-5-sonnet"},
		price: Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite5m: 3.75, CacheWrite1h: 6}},
	// Haiku 5.5 is priced by prompt length: a prompt over 100k tokens pays 5x on every token.
	{keys: []string{"claude-haiku-5-5"},
		price: Price{Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite5m: 0.125, CacheWrite1h: 0.20,
			LongContextThreshold: 100_000,
			LongInput:            0.50, LongOutput: 2.50, LongCacheRead: 0.05, LongCacheWrite5m: 0.625, LongCacheWrite1h: 1}},
	{keys: []string{"claude-haiku-4-5"},
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
	{keys: []string{"gpt-5.3-codex", "gpt-5.2", "gpt-5.2-codex"},
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
// Gemini 3.6, 3.7 and 3.8 Flash are left out: their cache prices could not be verified and 3.6/3.8
// run a promotion until 2026-12-31.
var google = []seed{
	{keys: []string{"gemini-3.5-flash"}, price: Price{Input: 1.50, Output: 9, CacheRead: 0.15}},
	{keys: []string{"gemini-3.1-pro", "gemini-3-pro"}, price: Price{Input: 2, Output: 12, CacheRead: 0.20,
		LongContextThreshold: 200_000, LongInput: 4, LongOutput: 18, LongCacheRead: 0.40}},
	{keys: []string{"gemini-3.1-flash-lite"}, price: Price{Input: 0.25, Output: 1.50, CacheRead: 0.025}},
	{keys: []string{"gemini-3-flash"}, price: Price{Input: 0.50, Output: 3, CacheRead: 0.05}},
	{keys: []string{"gemini-2.5-pro"}, price: Price{Input: 1.25, Output: 10, CacheRead: 0.125,
		LongContextThreshold: 200_000, LongInput: 2.50, LongOutput: 15, LongCacheRead: 0.25}},
	{keys: []string{"gemini-2.5-flash"}, price: Price{Input: 0.30, Output: 2.50, CacheRead: 0.03}},
	{keys: []string{"gemini-2.5-flash-lite"}, price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.01}},
	{keys: []string{"gemini-2.0-flash"}, price: Price{Input: 0.10, Output: 0.40, CacheRead: 0.025}},
	{keys: []string{"gemini-2.0-flash-lite"}, price: Price{Input: 0.075, Output: 0.30, CacheRead: 0.01875}},
}
