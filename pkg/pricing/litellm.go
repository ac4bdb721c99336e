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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// MaxLiteLLMBytes is the size limit of a price file, read from a path or a URL alike: 64 MB
// (LiteLLM's own is about 1.5 MB). A longer file is refused while it is read (ErrTooLarge), so
// reading one never holds more than that, whatever it is (a 379 MB file, /dev/zero).
const MaxLiteLLMBytes = 64 << 20

// MaxPricePerMillion is the highest price (USD per million tokens, any field) taken from a price
// file: $10,000, 0.01 per token, some 16 times the dearest model sold (o1-pro's output). A kept
// model with a price above it is a mistake in the file (LiteLLM's own has a few, wandb/ models
// priced per million as if per token): it is left out (Database.Absurd) and the built-in table,
// or nothing, prices it. The rest of the file is kept.
const MaxPricePerMillion = 10_000

// ErrTooLarge is returned for a price file longer than MaxLiteLLMBytes.
var ErrTooLarge = fmt.Errorf("larger than %d MB, the size limit of a price file", MaxLiteLLMBytes>>20)

// Database is a price table read from LiteLLM's JSON.
type Database struct {
	// Prices are the kept models, keyed by their lower-case LiteLLM key.
	Prices map[string]Price
	// Providers is each kept key's litellm_provider, Modes its mode.
	Providers, Modes map[string]string
	// Entries is the number of model keys in the file (sample_spec excluded); Skipped those not
	// kept for another mode or no token price. Absurd lists the chat models left out for a price
	// above MaxPricePerMillion ("key: field = value per token"), in the file's order.
	Entries, Skipped int
	Absurd           []string
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

// ReadLiteLLM reads a LiteLLM price file from path (see DecodeLiteLLM).
func ReadLiteLLM(path string) (*Database, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	db, err := DecodeLiteLLM(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}

// ParseLiteLLM reads LiteLLM's model_prices_and_context_window.json from data (see DecodeLiteLLM).
func ParseLiteLLM(data []byte) (*Database, error) {
	return DecodeLiteLLM(bytes.NewReader(data))
}

// capped reads at most left bytes of r, then fails with ErrTooLarge if r has more.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.left = -1
		return 0, ErrTooLarge
	}
	c.left -= int64(n)
	return n, err
}

// DecodeLiteLLM reads LiteLLM's model_prices_and_context_window.json from r, one model at a time:
// it holds the kept prices and one entry, never the file, and reads at most MaxLiteLLMBytes
// (ErrTooLarge beyond). It fails on text that is not a JSON object of objects, on a file none of
// whose entries carries litellm_provider and mode (not LiteLLM's schema), on a cost field that is
// not a number >= 0 (or that overflows a float), and on a file that keeps no model; a chat model
// priced above MaxPricePerMillion is left out (Database.Absurd). A key given twice keeps its last
// entry.
func DecodeLiteLLM(r io.Reader) (*Database, error) {
	db := &Database{Prices: map[string]Price{}, Providers: map[string]string{}, Modes: map[string]string{}}
	dec := json.NewDecoder(&capped{r: r, left: MaxLiteLLMBytes})
	notObject := func(err error) error {
		if errors.Is(err, ErrTooLarge) {
			return err
		}
		return fmt.Errorf("not a LiteLLM price file (a JSON object of models): %w", err)
	}
	if tok, err := dec.Token(); err != nil {
		return nil, notObject(err)
	} else if tok != json.Delim('{') {
		return nil, notObject(fmt.Errorf("starts with %v", tok))
	}
	schema := 0
	var errs []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notObject(err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, notObject(err)
		}
		if key == "sample_spec" {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			// Metadata beside the models: "last_updated" is the file's date.
			if key == "last_updated" {
				_ = json.Unmarshal(raw, &db.Updated)
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
		var absurd []string
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
			if x*1e6 > MaxPricePerMillion {
				absurd = append(absurd, fmt.Sprintf("%s = %s", f, v))
				continue
			}
			costs[f] = perMillion(x)
		}
		if bad {
			continue
		}
		_, hasIn := costs["input_cost_per_token"]
		_, hasOut := costs["output_cost_per_token"]
		switch {
		case !litellmModes[mode] || (!hasIn && !hasOut && len(absurd) == 0):
			db.Skipped++
			continue
		case len(absurd) > 0:
			db.Absurd = append(db.Absurd, fmt.Sprintf("%q: %s per token (above $%d per million tokens)",
				key, strings.Join(absurd, ", "), MaxPricePerMillion))
			continue
		}
		k := strings.ToLower(strings.TrimSpace(key))
		db.Prices[k] = litellmPrice(costs)
		db.Providers[k] = provider
		db.Modes[k] = mode
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, notObject(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more after the object")
		}
		return nil, notObject(err)
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

// MarshalLiteLLM writes db back as LiteLLM's JSON, holding only what DecodeLiteLLM reads of its
// kept models (their cost fields, provider and mode) and the file's date: what an import installs,
// so that the components that load it read a file of the size of what they keep, not of what was
// imported. DecodeLiteLLM of the result gives the same Prices, Providers, Modes and Updated.
func (db *Database) MarshalLiteLLM() ([]byte, error) {
	out := make(map[string]any, len(db.Prices)+1)
	if db.Updated != "" {
		out["last_updated"] = db.Updated
	}
	for k, p := range db.Prices {
		if !p.Valid() {
			return nil, fmt.Errorf("%q: not a valid price %+v", k, p)
		}
		m := map[string]any{"litellm_provider": db.Providers[k], "mode": db.Modes[k]}
		if m["mode"] == "" {
			m["mode"] = "chat"
		}
		if m["litellm_provider"] == "" {
			m["litellm_provider"] = "unknown"
		}
		set := func(f string, v float64) { m[f] = v / 1e6 }
		set("input_cost_per_token", p.Input)
		set("output_cost_per_token", p.Output)
		set("cache_read_input_token_cost", p.CacheRead)
		set("cache_creation_input_token_cost", p.CacheWrite5m)
		set("cache_creation_input_token_cost_above_1hr", p.CacheWrite1h)
		var tier string
		switch p.LongContextThreshold {
		case 0:
		case 200_000:
			tier = "200k"
		case 272_000:
			tier = "272k"
		default:
			return nil, fmt.Errorf("%q: a long-context threshold of %d is not one LiteLLM writes", k, p.LongContextThreshold)
		}
		if tier != "" {
			set("input_cost_per_token_above_"+tier+"_tokens", p.LongInput)
			set("output_cost_per_token_above_"+tier+"_tokens", p.LongOutput)
			set("cache_read_input_token_cost_above_"+tier+"_tokens", p.LongCacheRead)
			set("cache_creation_input_token_cost_above_"+tier+"_tokens", p.LongCacheWrite5m)
			if tier == "200k" {
				set("cache_creation_input_token_cost_above_1hr_above_200k_tokens", p.LongCacheWrite1h)
			} else if p.LongCacheWrite1h != p.CacheWrite1h {
				return nil, fmt.Errorf("%q: LiteLLM has no 1-hour cache write price above 272k tokens", k)
			}
		}
		out[k] = m
	}
	return json.MarshalIndent(out, "", " ")
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
