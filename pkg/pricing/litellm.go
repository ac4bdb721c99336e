package pricing

// LiteLLM's price database: BerriAI/litellm's model_prices_and_context_window.json, one object per
// model key. Its costs are USD per token; a Price is USD per million tokens, so every figure is
// multiplied by 1e6 (and rounded to 1e-9 to drop the float noise of the multiplication).
//
// Read here, per key: input_cost_per_token, output_cost_per_token, cache_read_input_token_cost,
// cache_creation_input_token_cost (the 5-minute write), cache_creation_input_token_cost_above_1hr
// (the 1-hour write; the 5-minute price when absent), and the prices above 200k prompt tokens
// (input_cost_per_token_above_200k_tokens, output_..., cache_read_..., cache_creation_...,
// cache_creation_input_token_cost_above_1hr_above_200k_tokens), which set LongContextThreshold
// 200000, or else the same fields above 272k tokens (OpenAI's GPT-5.4 and later), threshold 272000.
// A long price LiteLLM omits is the base price. A missing cache-read price bills cached tokens as input, as the built-in table does; a
// missing cache-write price is 0 (providers with automatic caching). Only chat and responses
// models are kept (mode); embeddings, images, audio, rerank and the rest are skipped, and so is a
// key with neither an input nor an output price. Other tiers (128k, 256k, 512k), priority, flex
// and batch prices are not read.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// Database is a price table read from LiteLLM's JSON.
type Database struct {
	// Prices are the kept models, keyed by their lower-case LiteLLM key.
	Prices map[string]Price
	// Providers is each kept key's litellm_provider.
	Providers map[string]string
	// Entries is the number of model keys in the file (sample_spec excluded); Skipped those not
	// kept (another mode, or no token price).
	Entries, Skipped int
	// Updated is the file's own "last_updated" stamp, as written there; empty when it has none.
	Updated string
}

// litellmModes are the modes whose models observer prices.
var litellmModes = map[string]bool{"chat": true, "responses": true}

// litellmCostFields are the per-token fields read; each must be a number >= 0 where present.
var litellmCostFields = []string{
	"input_cost_per_token", "output_cost_per_token",
	"cache_read_input_token_cost", "cache_creation_input_token_cost", "cache_creation_input_token_cost_above_1hr",
	"input_cost_per_token_above_200k_tokens", "output_cost_per_token_above_200k_tokens",
	"cache_read_input_token_cost_above_200k_tokens", "cache_creation_input_token_cost_above_200k_tokens",
	"cache_creation_input_token_cost_above_1hr_above_200k_tokens",
	"input_cost_per_token_above_272k_tokens", "output_cost_per_token_above_272k_tokens",
	"cache_read_input_token_cost_above_272k_tokens", "cache_creation_input_token_cost_above_272k_tokens",
}

// ReadLiteLLM reads a LiteLLM price file from path (see ParseLiteLLM).
func ReadLiteLLM(path string) (*Database, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	db, err := ParseLiteLLM(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// ParseLiteLLM reads LiteLLM's model_prices_and_context_window.json. It fails on text that is not
// a JSON object of objects, on a file none of whose entries carries litellm_provider and mode (not
// LiteLLM's schema), on a cost field that is not a number >= 0, and on a file that keeps no model.
func ParseLiteLLM(data []byte) (*Database, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("not a LiteLLM price file (a JSON object of models): %w", err)
	}
	db := &Database{Prices: map[string]Price{}, Providers: map[string]string{}}
	schema := 0
	var errs []string
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if key == "sample_spec" {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw[key], &fields); err != nil || fields == nil {
			// Metadata beside the models: "last_updated" is the file's date.
			if key == "last_updated" {
				_ = json.Unmarshal(raw[key], &db.Updated)
			}
			continue
		}
		db.Entries++
		var provider, mode string
		_ = json.Unmarshal(fields["litellm_provider"], &provider)
		_ = json.Unmarshal(fields["mode"], &mode)
		if provider != "" && mode != "" {
			schema++
		}
		costs := map[string]float64{}
		bad := false
		for _, f := range litellmCostFields {
			v, ok := fields[f]
			if !ok || string(v) == "null" {
				continue
			}
			var x float64
			if err := json.Unmarshal(v, &x); err != nil || x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				errs = append(errs, fmt.Sprintf("%q: %s = %s is not a price (a number >= 0)", key, f, v))
				bad = true
				continue
			}
			costs[f] = perMillion(x)
		}
		if bad {
			continue
		}
		_, hasIn := costs["input_cost_per_token"]
		_, hasOut := costs["output_cost_per_token"]
		if !litellmModes[mode] || (!hasIn && !hasOut) {
			db.Skipped++
			continue
		}
		k := strings.ToLower(strings.TrimSpace(key))
		db.Prices[k] = litellmPrice(costs)
		db.Providers[k] = provider
	}
	switch {
	case len(errs) > 0:
		if len(errs) > 10 {
			errs = append(errs[:10], fmt.Sprintf("and %d more", len(errs)-10))
		}
		return nil, errors.New("bad LiteLLM price file: " + strings.Join(errs, "; "))
	case schema == 0:
		return nil, errors.New("not LiteLLM's schema: no model has litellm_provider and mode")
	case len(db.Prices) == 0:
		return nil, errors.New("no chat model with a token price in the file")
	}
	return db, nil
}

// perMillion turns USD per token into USD per million tokens.
func perMillion(x float64) float64 { return math.Round(x*1e15) / 1e9 }

func litellmPrice(c map[string]float64) Price {
	get := func(f string, def float64) float64 {
		if v, ok := c[f]; ok {
			return v
		}
		return def
	}
	p := Price{Input: c["input_cost_per_token"], Output: c["output_cost_per_token"]}
	p.CacheRead = get("cache_read_input_token_cost", p.Input)
	p.CacheWrite5m = get("cache_creation_input_token_cost", 0)
	p.CacheWrite1h = get("cache_creation_input_token_cost_above_1hr", p.CacheWrite5m)
	for _, tier := range []struct {
		suffix    string
		threshold int64
	}{{"200k", 200_000}, {"272k", 272_000}} {
		_, okIn := c["input_cost_per_token_above_"+tier.suffix+"_tokens"]
		_, okOut := c["output_cost_per_token_above_"+tier.suffix+"_tokens"]
		if !okIn && !okOut {
			continue
		}
		p.LongContextThreshold = tier.threshold
		p.LongInput = get("input_cost_per_token_above_"+tier.suffix+"_tokens", p.Input)
		p.LongOutput = get("output_cost_per_token_above_"+tier.suffix+"_tokens", p.Output)
		p.LongCacheRead = get("cache_read_input_token_cost_above_"+tier.suffix+"_tokens", p.CacheRead)
		p.LongCacheWrite5m = get("cache_creation_input_token_cost_above_"+tier.suffix+"_tokens", p.CacheWrite5m)
		p.LongCacheWrite1h = get("cache_creation_input_token_cost_above_1hr_above_"+tier.suffix+"_tokens", p.CacheWrite1h)
		if p.LongInput == 0 || p.LongOutput == 0 {
			// A zero long price fails Price.Valid; such a row has no usable tier.
			p.LongContextThreshold, p.LongInput, p.LongOutput = 0, 0, 0
			p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h = 0, 0, 0
			continue
		}
		break
	}
	return p
}

// WithDatabase returns a new table in which each given model name (case-insensitive, exact) has
// the given price now. A model the table already has keeps its dated history (the prices before
// it) and its Bedrock regional premium; any other is added. Every other model is unchanged. Apply
// overrides after it (WithOverrides), so that they take precedence.
func (t *Table) WithDatabase(prices map[string]Price) *Table {
	if len(prices) == 0 && t != nil {
		return t
	}
	entries := make(map[string]entry, t.len()+len(prices))
	if t != nil {
		for k, e := range t.entries {
			entries[k] = e
		}
	}
	for name, p := range prices {
		k := strings.ToLower(strings.TrimSpace(name))
		if k == "" {
			continue
		}
		e := entries[k]
		e.price = p
		entries[k] = e
	}
	return newTable(entries)
}

// Exact returns the current price of the table key name (case-insensitive), without any of the
// matching stages of Resolve.
func (t *Table) Exact(name string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	e, ok := t.entries[strings.ToLower(strings.TrimSpace(name))]
	return e.price, ok
}
