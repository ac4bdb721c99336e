// Package pricing holds a baked-in, dated table of model prices and turns token counts into US
// dollars. Every token and dollar figure observer shows rests on it.
//
// # Prices
//
// A Price is in USD per million tokens. The table (see table.go) was checked on TableDate against
// the providers' own pricing pages, with the source and date beside each provider block. A model
// whose price could not be verified is left out: it is better to report "unknown" than a wrong
// number. Users can add or replace models with Table.WithOverrides (config), give a model a second
// name with Table.WithAliases (Azure deployments, gateway names), or build a whole table with New.
//
// # Cost
//
// Cost follows the billing buckets of event.Tokens, whose Input is net of cache reads and writes:
//
//	usd = ( Input*Input + Output*Output + CacheRead*CacheRead
//	      + (CacheCreation-CacheCreation1h)*CacheWrite5m + CacheCreation1h*CacheWrite1h ) / 1e6
//
// Reasoning tokens are not added: they are already inside Output, so a producer must fold a
// separately reported thinking count (Gemini's thoughtsTokenCount) into Output, and subtract cached
// tokens from an input count that includes them (OpenAI, Gemini). OpenAI and Google price cached
// input as CacheRead. Where a provider has one cache-write price (OpenAI's GPT-5.6 and GPT-6
// models) both write fields carry it; CacheWrite1h is otherwise the provider's longer retention
// (Anthropic's 1-hour write, OpenAI's 12-hour write). Negative counts are treated as zero, and a 1h
// part larger than CacheCreation leaves no 5m part.
//
// Long context: when the prompt of one request (Input + CacheRead + CacheCreation) exceeds
// LongContextThreshold, the Long* prices apply to every token of that request, output included
// (Anthropic Sonnet 4/4.5 beyond 200k, Haiku 5.5 beyond 100k, Gemini Pro beyond 200k, OpenAI
// GPT-5.4, GPT-5.5, GPT-5.6 and GPT-6 beyond 272k). A prompt of exactly the threshold is billed at the base prices.
// Cost must therefore be called per request, never on tokens summed over many requests.
//
// # Dated prices
//
// A few prices changed while the models were in use (Claude Sonnet 5.5's cache reads, the end of
// the 4.6 long-context premium, GPT-5.6 price cuts, o3's price cut). Cost and Lookup use the price
// in force now (as of TableDate), which is right for live traffic (the proxy). CostAt and LookupAt take the
// request's time and use the price in force then, which is right when replaying old transcripts.
//
// # Lookup
//
// A model id is matched case-insensitively, in this order:
//
//  1. the id as given;
//  2. the id without decoration: a provider or path prefix ("anthropic/", "openai/", "models/",
//     "publishers/anthropic/models/"), a Bedrock region and vendor prefix ("us.anthropic.") and
//     version suffix ("-v1:0"), a Vertex "@version", a context marker ("[1m]") or a ":tag";
//     Claude ids written with dots ("claude-sonnet-4.5") and GPT ids written with dashes
//     ("gpt-5-1-codex") are rewritten to the canonical form;
//  3. that id without a date suffix (-YYYYMMDD or -YYYY-MM-DD);
//  4. a variant: the longest table key that is a prefix of the id at a "-" boundary, when the rest
//     names a release of the same model ("-preview", "-latest", "-001", "-customtools",
//     "-thinking"). The rest must not name a different tier ("mini", "nano", "lite", "flash",
//     "pro", "max", "fast", "image", "small", "large", "plus", "coder", ...) nor start with a
//     minor version ("-7"), so gpt-4o-mini never falls back to gpt-4o nor o3-mini to o3, and
//     claude-opus-4-9 is no variant of claude-opus-4 (it is a newer version: stage 6). A rest of
//     any other word ("gpt-5-mydeployment") is the family fallback below;
//  5. the family fallback: a table key inside the id after a "-", "_" or "." (an Azure deployment
//     "aide-gpt-5", a gateway's "prod_claude-sonnet-4-5"), same rules for what follows it. Such a
//     price is Match.Approximate: Quote reports it and callers tag the figure
//     event.ReliabilityApproximate at best (Tag);
//  6. a newer version of a known family: an id whose version (the first run of one- or two-digit
//     numbers: "3.8" in gemini-3.8-flash, "4-9" in claude-opus-4-9, "3.7" in qwen3.7-max) the
//     table lacks takes the price of the family's newest known version below it with the same
//     major version (gemini-3.8-flash as gemini-3.6-flash, claude-opus-4-9 as claude-opus-4-8,
//     gpt-6.2-astra as gpt-6-astra, a version without a minor being its .0), the words around
//     the version naming the same family (the longest match wins: gpt-5.6-codex is priced as
//     gpt-5.3-codex, not gpt-5.5; gemini-3.8-flash-lite never as a Flash). A client's new
//     default model is then priced the day it ships, approximately (Match.Approximate), until
//     the table or the price database knows it. An older version or another major version
//     (gemini-4-flash) stays unknown: prices move most between major versions.
//
// The route sets a factor on the matched price: a Bedrock geographic inference profile (us., eu.,
// jp., apac., au.) of a Claude 4.5 or later model costs BedrockRegionalPremium (10%) more than the
// global profile or the plain model id; an OpenRouter ":free" model costs nothing. A price override
// is taken as the price paid and gets no premium. An unknown name stays unknown: $0 and "unknown price".
//
// # What is not modelled
//
// Batch and flex discounts, priority and fast-mode surcharges, Anthropic's inference_geo and
// OpenAI's regional-processing uplifts, Vertex regional premiums, Bedrock's US GovCloud prices, Gemini context-cache
// storage per hour, audio-token rates, web search and tool fees, and DeepSeek's peak/off-peak
// pricing: none of them is visible in event.Tokens. Costs are standard-tier list prices.
//
// # Concurrency
//
// A Table is immutable once built; all its methods are safe for concurrent use. WithOverrides and
// WithAliases return a new Table and leave the receiver untouched.
package pricing

import (
	"cmp"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input        float64 `json:"input" toml:"input"`
	Output       float64 `json:"output" toml:"output"`
	CacheRead    float64 `json:"cache_read" toml:"cache_read"`
	CacheWrite5m float64 `json:"cache_write_5m" toml:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h" toml:"cache_write_1h"`

	// LongContextThreshold, when positive, switches the whole request to the Long* prices once its
	// prompt (input + cache read + cache write tokens) exceeds this many tokens.
	LongContextThreshold int64   `json:"long_context_threshold,omitempty" toml:"long_context_threshold,omitempty"`
	LongInput            float64 `json:"long_input,omitempty" toml:"long_input,omitempty"`
	LongOutput           float64 `json:"long_output,omitempty" toml:"long_output,omitempty"`
	LongCacheRead        float64 `json:"long_cache_read,omitempty" toml:"long_cache_read,omitempty"`
	LongCacheWrite5m     float64 `json:"long_cache_write_5m,omitempty" toml:"long_cache_write_5m,omitempty"`
	LongCacheWrite1h     float64 `json:"long_cache_write_1h,omitempty" toml:"long_cache_write_1h,omitempty"`
}

// Valid reports whether every price is a finite number not below zero, and whether a long-context
// threshold, when set, comes with long input and output prices. Config should check overrides
// with it before handing them to WithOverrides.
func (p Price) Valid() bool {
	for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h,
		p.LongInput, p.LongOutput, p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	if p.LongContextThreshold < 0 {
		return false
	}
	if p.LongContextThreshold > 0 && (p.LongInput == 0 || p.LongOutput == 0) {
		return false
	}
	return true
}

// Sane reports whether p is Valid and no price in it is above MaxPricePerMillion: what a price
// database may hold.
func (p Price) Sane() bool {
	if !p.Valid() {
		return false
	}
	for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h,
		p.LongInput, p.LongOutput, p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h} {
		if v > MaxPricePerMillion {
			return false
		}
	}
	return true
}

// Cost prices one request's tokens.
func (p Price) Cost(tok event.Tokens) float64 {
	in := nonNeg(tok.Input)
	out := nonNeg(tok.Output)
	read := nonNeg(tok.CacheRead)
	write := nonNeg(tok.CacheCreation)
	write1h := nonNeg(tok.CacheCreation1h)
	write5m := write - write1h
	if write5m < 0 {
		write5m = 0
	}

	rIn, rOut, rRead, r5m, r1h := p.Input, p.Output, p.CacheRead, p.CacheWrite5m, p.CacheWrite1h
	if p.LongContextThreshold > 0 && in+read+write > p.LongContextThreshold {
		rIn, rOut, rRead, r5m, r1h = p.LongInput, p.LongOutput, p.LongCacheRead, p.LongCacheWrite5m, p.LongCacheWrite1h
	}
	sum := float64(in)*rIn + float64(out)*rOut + float64(read)*rRead +
		float64(write5m)*r5m + float64(write1h)*r1h
	return sum / 1e6
}

func nonNeg(n int64) int64 {
	if n < 0 {
		return 0
	}
	return n
}

// period is a price that applied to requests made before until.
type period struct {
	until time.Time
	price Price
}

// entry is one table key: the current price and, oldest first, the prices it replaced.
type entry struct {
	price       Price
	history     []period
	regional    bool // Bedrock's regional premium applies (Claude 4.5 and later)
	approximate bool // every figure priced with it is approximate (see seed)
}

// at returns the price in force at t; the zero time means now.
func (e entry) at(t time.Time) Price {
	if t.IsZero() {
		return e.price
	}
	for _, p := range e.history {
		if t.Before(p.until) {
			return p.price
		}
	}
	return e.price
}

// Table maps model ids to prices. The zero value and nil are empty tables.
type Table struct {
	entries  map[string]entry
	byLen    []string    // keys, longest first, for family matching
	versions []versioned // keys that carry a version, for the newer-version fallback
}

// New builds a table from exact model names (case-insensitive). The prices hold at all times.
func New(prices map[string]Price) *Table {
	return (&Table{}).WithOverrides(prices)
}

func newTable(entries map[string]entry) *Table {
	t := &Table{entries: entries, byLen: make([]string, 0, len(entries))}
	for k := range entries {
		t.byLen = append(t.byLen, k)
	}
	sort.Slice(t.byLen, func(i, j int) bool {
		if len(t.byLen[i]) != len(t.byLen[j]) {
			return len(t.byLen[i]) > len(t.byLen[j])
		}
		return t.byLen[i] < t.byLen[j]
	})
	for _, k := range t.byLen {
		if v, ok := splitVersion(k); ok && !strings.ContainsAny(k, "/@:") {
			t.versions = append(t.versions, v)
		}
	}
	return t
}

// WithOverrides returns a new table in which each given model name (case-insensitive, exact) has
// the given price at all times, replacing the built-in price and its history. Every other model is
// unchanged. The lookup stages still apply, so an override for "claude-sonnet-4-5" also prices
// "claude-sonnet-4-5-20250929". Prices are taken as given: check them with Price.Valid first.
func (t *Table) WithOverrides(overrides map[string]Price) *Table {
	if len(overrides) == 0 && t != nil {
		return t
	}
	entries := make(map[string]entry, t.len()+len(overrides))
	if t != nil {
		for k, e := range t.entries {
			entries[k] = e
		}
	}
	for name, p := range overrides {
		k := strings.ToLower(strings.TrimSpace(name))
		if k == "" {
			continue
		}
		entries[k] = entry{price: p}
	}
	return newTable(entries)
}

// WithAliases returns a new table in which each alias name (case-insensitive, exact) has the price,
// and the dated history, of the model its target resolves to. It is for names the table cannot
// know, such as an Azure deployment ("aide-gpt-5" -> "gpt-5") or a gateway's own model names. If a
// target is unknown, WithAliases returns the receiver unchanged and an error naming it.
func (t *Table) WithAliases(aliases map[string]string) (*Table, error) {
	if len(aliases) == 0 {
		return t, nil
	}
	var unknown []string
	resolved := make(map[string]entry, len(aliases))
	for name, target := range aliases {
		k := strings.ToLower(strings.TrimSpace(name))
		key, ok := t.match(target)
		if !ok {
			unknown = append(unknown, fmt.Sprintf("%s -> %s", name, target))
			continue
		}
		if k != "" {
			resolved[k] = t.entries[key]
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return t, fmt.Errorf("pricing aliases with no priced target (add a price override for the target): %s",
			strings.Join(unknown, ", "))
	}
	entries := make(map[string]entry, t.len()+len(resolved))
	for k, e := range t.entries {
		entries[k] = e
	}
	for k, e := range resolved {
		entries[k] = e
	}
	return newTable(entries), nil
}

func (t *Table) len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Models lists the table's keys in lexical order.
func (t *Table) Models() []string {
	if t == nil {
		return nil
	}
	keys := make([]string, 0, len(t.entries))
	for k := range t.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Lookup returns the current price of model and the table key it matched.
func (t *Table) Lookup(model string) (Price, string, bool) {
	return t.LookupAt(model, time.Time{})
}

// LookupAt returns the price of model in force at the time at (the zero time means now) and the
// table key it matched. The price includes what the route adds (Bedrock's regional premium) or
// takes away (an OpenRouter ":free" model).
func (t *Table) LookupAt(model string, at time.Time) (Price, string, bool) {
	m, ok := t.Resolve(model)
	if !ok {
		return Price{}, "", false
	}
	return t.entries[m.Key].at(at).scaled(m.Factor), m.Key, true
}

// Cost prices one request of model at current prices. known is false, and usd 0, when the table
// has no price for the model.
func (t *Table) Cost(model string, tok event.Tokens) (usd float64, known bool) {
	return t.CostAt(model, tok, time.Time{})
}

// CostAt prices one request of model made at the time at, with the prices in force then; the zero
// time means now. known is false, and usd 0, when the table has no price for the model.
func (t *Table) CostAt(model string, tok event.Tokens, at time.Time) (usd float64, known bool) {
	p, _, ok := t.LookupAt(model, at)
	if !ok {
		return 0, false
	}
	return finite(p.Cost(tok))
}

// finite is usd, known, or 0, unknown for a figure that is not a finite number (a price no check
// let through must not make an event that cannot be encoded, nor a NaN in a sum).
func finite(usd float64) (float64, bool) {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return 0, false
	}
	return usd, true
}

// Quote prices one request like CostAt and also says whether the price is only approximate: the
// model was matched by the family fallback (a deployment or gateway name around a known model, see
// Match.Approximate). A caller must then tag the figure with Tag.
func (t *Table) Quote(model string, tok event.Tokens, at time.Time) (usd float64, approximate, known bool) {
	m, ok := t.Resolve(model)
	if !ok {
		return 0, false, false
	}
	usd, known = finite(t.entries[m.Key].at(at).scaled(m.Factor).Cost(tok))
	return usd, m.Approximate && known, known
}

// Tag returns the reliability of a figure priced with an approximate (family fallback) price: at
// best ReliabilityApproximate. A figure already less trustworthy keeps its tag.
func Tag(r event.Reliability, approximate bool) event.Reliability {
	if approximate && (r == event.ReliabilityAccurate || r == "") {
		return event.ReliabilityApproximate
	}
	return r
}

// Match says how a model name was matched to the table.
type Match struct {
	// Key is the table key whose price applies.
	Key string
	// Factor multiplies every price of Key: 1.1 on a Bedrock regional route of a model that carries
	// the regional premium, 0 for an OpenRouter ":free" model, else 1.
	Factor float64
	// Approximate is true when the name was matched by the family fallback: a known model inside
	// a name the table does not know ("aide-gpt-5", "gpt-5-mydeployment"). The price is the
	// model's, but the name does not prove that model was billed.
	Approximate bool
}

// Resolve matches model to a table key, following the stages in the package documentation.
func (t *Table) Resolve(model string) (Match, bool) {
	if t == nil || len(t.entries) == 0 {
		return Match{}, false
	}
	raw := strings.ToLower(strings.TrimSpace(model))
	if raw == "" {
		return Match{}, false
	}
	if e, ok := t.entries[raw]; ok {
		return Match{Key: raw, Factor: 1, Approximate: e.approximate}, true
	}
	n := normalize(raw)
	m, ok := t.matchID(n.id)
	if !ok {
		return Match{}, false
	}
	m.Factor = 1
	m.Approximate = m.Approximate || t.entries[m.Key].approximate
	switch {
	case n.free:
		m.Factor = 0
	case n.region != "" && regionalPremium[n.region] && t.entries[m.Key].regional:
		m.Factor = 1 + BedrockRegionalPremium
	}
	return m, true
}

// BedrockRegionalPremium is what Amazon Bedrock adds to Claude 4.5 and later models called through
// a geographic cross-region inference profile (us., eu., jp., apac., au.) rather than the global
// one (global.) or the model id itself: 10%, on every token price.
const BedrockRegionalPremium = 0.10

// regionalPremium lists the Bedrock inference-profile prefixes that carry the premium. The
// US GovCloud profile (us-gov.) is priced apart and not modelled.
var regionalPremium = map[string]bool{"us": true, "eu": true, "jp": true, "apac": true, "au": true}

// match finds the table key for model, following the stages in the package documentation.
func (t *Table) match(model string) (string, bool) {
	m, ok := t.Resolve(model)
	return m.Key, ok
}

// matchID matches an undecorated id: as is, without its date, by a variant suffix, then by the
// family fallback.
func (t *Table) matchID(bare string) (Match, bool) {
	if _, ok := t.entries[bare]; ok {
		return Match{Key: bare}, true
	}
	id := stripDate(bare)
	if _, ok := t.entries[id]; ok {
		return Match{Key: id}, true
	}
	// A known variant of a table key: gemini-3-flash-preview, gemini-3.1-pro-preview-customtools.
	for _, k := range t.byLen {
		if len(k) < len(id) && id[len(k)] == '-' && strings.HasPrefix(id, k) && sameModel(id[len(k)+1:]) {
			return Match{Key: k, Approximate: !knownVariant(id[len(k)+1:])}, true
		}
	}
	// The family fallback: a table key inside a longer name, after a "-", "_" or ".":
	// an Azure deployment (aide-gpt-5) or a gateway's name for the model.
	for _, k := range t.byLen {
		if len(k) < 3 || len(k) >= len(id) {
			continue
		}
		for i := strings.Index(id, k); i >= 0; {
			if i > 0 && strings.ContainsRune("-_.", rune(id[i-1])) && !otherModel[lastWord(id[:i-1])] {
				rest := id[i+len(k):]
				if rest == "" || rest[0] == '-' && sameModel(rest[1:]) {
					return Match{Key: k, Approximate: true}, true
				}
			}
			j := strings.Index(id[i+1:], k)
			if j < 0 {
				break
			}
			i += 1 + j
		}
	}
	if k, ok := t.olderVersion(id); ok {
		return Match{Key: k, Approximate: true}, true
	}
	return Match{}, false
}

// versioned is a model id split at its version: gemini-3.8-flash is "gemini-", [3 8], "-flash";
// qwen3.7-max is "qwen", [3 7], "-max".
type versioned struct {
	key            string
	prefix, suffix string
	parts          []int
}

// splitVersion finds the version of id: the first run of "-"-separated numbers of one or two
// digits, each dotted or not (gemini-3.8-flash, claude-opus-4-9, claude-3-5-sonnet), or such a
// number glued to the letters of a name (qwen3.7-max, kimi-k2.6, deepseek-v4-flash). A longer
// number is a snapshot or a date, not a version. Something must come before it.
func splitVersion(id string) (versioned, bool) {
	words := strings.Split(id, "-")
	for i, w := range words {
		head := strings.TrimRightFunc(w, func(r rune) bool { return r >= '0' && r <= '9' || r == '.' })
		num := w[len(head):]
		if !versionWord(num) || (head != "" && !allLetters(head)) || (head == "" && i == 0) {
			continue
		}
		v := versioned{key: id, prefix: strings.Join(words[:i], "-")}
		if head == "" {
			v.prefix += "-"
		} else if i > 0 {
			v.prefix += "-" + head
		} else {
			v.prefix = head
		}
		v.parts = versionParts(num)
		j := i + 1
		for j < len(words) && versionWord(words[j]) {
			v.parts = append(v.parts, versionParts(words[j])...)
			j++
		}
		if j < len(words) {
			v.suffix = "-" + strings.Join(words[j:], "-")
		}
		return v, true
	}
	return versioned{}, false
}

// versionWord reports whether w is a version: "3", "45", "3.8", "2.0".
func versionWord(w string) bool {
	for _, n := range strings.Split(w, ".") {
		if len(n) == 0 || len(n) > 2 || !allDigits(n) {
			return false
		}
	}
	return true
}

func versionParts(w string) []int {
	var parts []int
	for _, n := range strings.Split(w, ".") {
		v := 0
		for k := 0; k < len(n); k++ {
			v = v*10 + int(n[k]-'0')
		}
		parts = append(parts, v)
	}
	return parts
}

func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// olderVersion finds the table key that prices id as a newer version of a known family (stage 6
// of the package documentation): the same name before the version, the words after it the key's
// own (or the key's followed by a variant billed alike), the same major version, and the newest
// such version below id's (a version without a minor is its .0: claude-opus-4 is 4.0). The key
// with the most words after the version wins, then the newest.
func (t *Table) olderVersion(id string) (string, bool) {
	v, ok := splitVersion(id)
	if !ok {
		return "", false
	}
	var best *versioned
	for i := range t.versions {
		k := &t.versions[i]
		if k.prefix != v.prefix || k.parts[0] != v.parts[0] || compareParts(k.parts, v.parts) >= 0 {
			continue
		}
		if k.suffix != v.suffix {
			rest, cut := strings.CutPrefix(v.suffix, k.suffix+"-")
			if !cut || !sameModel(rest) {
				continue
			}
		}
		if best == nil || len(k.suffix) > len(best.suffix) ||
			len(k.suffix) == len(best.suffix) && compareParts(k.parts, best.parts) > 0 {
			best = k
		}
	}
	if best == nil {
		return "", false
	}
	return best.key, true
}

// compareParts compares two versions; a missing part is 0 (4 is 4.0).
func compareParts(a, b []int) int {
	for i := range max(len(a), len(b)) {
		x, y := 0, 0
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return 0
}

// lastWord is the last "-", "_" or "." separated word of s.
func lastWord(s string) string {
	if i := strings.LastIndexAny(s, "-_."); i >= 0 {
		return s[i+1:]
	}
	return s
}

// scaled multiplies every price by f.
func (p Price) scaled(f float64) Price {
	if f == 1 {
		return p
	}
	p.Input *= f
	p.Output *= f
	p.CacheRead *= f
	p.CacheWrite5m *= f
	p.CacheWrite1h *= f
	p.LongInput *= f
	p.LongOutput *= f
	p.LongCacheRead *= f
	p.LongCacheWrite5m *= f
	p.LongCacheWrite1h *= f
	return p
}

// normalized is a model id without its decoration, and what the decoration said.
type normalized struct {
	id     string
	region string // the Bedrock inference-profile prefix ("jp", "global"), if any
	free   bool   // an OpenRouter ":free" variant
}

// normalize removes the decoration clients and clouds put around a model id. s is lower case.
func normalize(s string) normalized {
	var n normalized
	// A context-mode marker: claude-opus-4-6[1m].
	if i := strings.IndexByte(s, '['); i > 0 && strings.HasSuffix(s, "]") {
		s = s[:i]
	}
	// Provider, route and path prefixes: anthropic/, openrouter/anthropic/, bedrock/converse/,
	// vertex_ai/, azure/, models/, projects/p/locations/l/publishers/anthropic/models/.
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	// Vertex version: claude-sonnet-4-5@20250929.
	if i := strings.IndexByte(s, '@'); i > 0 {
		s = s[:i]
	}
	// Bedrock: [region.]anthropic.<model>-v1:0.
	bedrock := false
	if i := strings.LastIndex(s, "anthropic."); i >= 0 {
		if i > 1 && s[i-1] == '.' {
			n.region = s[:i-1]
		}
		s = s[i+len("anthropic."):]
		bedrock = true
	}
	// Bedrock throughput version (:0) and tags some clients append (:medium, OpenRouter's :free).
	if i := strings.IndexByte(s, ':'); i > 0 {
		n.free = s[i:] == ":free"
		s = s[:i]
	}
	s = stripBedrockVersion(s, bedrock)
	if strings.HasPrefix(s, "claude") {
		// OpenRouter and Copilot write claude-sonnet-4.5 and claude-3.5-sonnet.
		s = strings.ReplaceAll(s, ".", "-")
	} else if strings.HasPrefix(s, "gpt-") {
		s = dotGPTVersion(s)
	}
	n.id = s
	return n
}

// stripBedrockVersion removes Bedrock's trailing -v<digits> (claude-3-5-sonnet-20241022-v2). Without
// the Bedrock prefix it does so only after a date, so deepseek-v3 keeps its version.
func stripBedrockVersion(s string, bedrock bool) string {
	i := strings.LastIndex(s, "-v")
	if i <= 0 || i+2 == len(s) || !allDigits(s[i+2:]) {
		return s
	}
	if !bedrock && (i < 9 || s[i-9] != '-' || !allDigits(s[i-8:i])) {
		return s
	}
	return s[:i]
}

// dotGPTVersion rewrites gpt-5-1-codex as gpt-5.1-codex: a single digit after the major version
// that is followed by "-" or the end is a minor version, not a date or a snapshot number.
func dotGPTVersion(s string) string {
	rest := s[len("gpt-"):]
	i := 0
	for i < len(rest) && isDigit(rest[i]) {
		i++
	}
	if i == 0 || i+2 > len(rest) || rest[i] != '-' || !isDigit(rest[i+1]) {
		return s
	}
	if i+2 < len(rest) && rest[i+2] != '-' {
		return s
	}
	return "gpt-" + rest[:i] + "." + rest[i+1:]
}

// stripDate removes a trailing -YYYYMMDD or -YYYY-MM-DD.
func stripDate(s string) string {
	if n := len(s); n > 9 && s[n-9] == '-' && allDigits(s[n-8:]) && isYear(s[n-8:n-4]) {
		return s[:n-9]
	}
	if n := len(s); n > 11 && s[n-11] == '-' && s[n-6] == '-' && s[n-3] == '-' &&
		allDigits(s[n-10:n-6]) && allDigits(s[n-5:n-3]) && allDigits(s[n-2:]) && isYear(s[n-10:n-6]) {
		return s[:n-11]
	}
	return s
}

func isYear(s string) bool { return s >= "2020" && s <= "2099" }

// otherModel lists words that, after a table key, name a different model or tier with its own
// price, so the key's price must not be used for it.
var otherModel = map[string]bool{
	"mini": true, "nano": true, "lite": true, "flash": true, "pro": true, "max": true,
	"turbo": true, "haiku": true, "sonnet": true, "opus": true, "fable": true, "mythos": true,
	"sol": true, "luna": true, "terra": true, "astra": true, "omni": true,
	"image": true, "audio": true, "realtime": true, "tts": true, "transcribe": true,
	"search": true, "research": true, "embedding": true, "embed": true, "instruct": true,
	"vision": true, "live": true, "fast": true, "ultrafast": true, "priority": true,
	"flex": true, "batch": true, "spark": true, "oss": true,
	"small": true, "medium": true, "large": true, "air": true, "airx": true, "plus": true,
	"coder": true, "code": true, "free": true, "vl": true, "ocr": true, "heavy": true, "next": true,
}

// variantWords name a release of the same model at the same price: a preview, a dated or numbered
// snapshot, a tool-tuned endpoint. A name that adds any other word to a table key is matched only
// approximately.
var variantWords = map[string]bool{
	"preview": true, "latest": true, "exp": true, "experimental": true, "beta": true,
	"customtools": true, "thinking": true, "codex": true, "reasoning": true,
}

// knownVariant reports whether rest, the part of an id after a table key and its "-", is only
// variant words and snapshot numbers.
func knownVariant(rest string) bool {
	for _, w := range strings.FieldsFunc(rest, func(r rune) bool { return r == '-' || r == '.' || r == '_' }) {
		if !variantWords[w] && !(allDigits(w) && len(w) >= 3) {
			return false
		}
	}
	return true
}

// sameModel reports whether rest, the part of an id after a table key and its "-", only names a
// variant billed like the key itself.
func sameModel(rest string) bool {
	words := strings.FieldsFunc(rest, func(r rune) bool { return r == '-' || r == '.' || r == '_' })
	if len(words) == 0 {
		return false
	}
	// A short number right after the key is a minor version: claude-opus-4 -> claude-opus-4-9.
	if allDigits(words[0]) && len(words[0]) <= 2 {
		return false
	}
	for _, w := range words {
		if otherModel[w] {
			return false
		}
		// A parameter count: gemini-1.5-flash-8b.
		if len(w) > 1 && w[len(w)-1] == 'b' && allDigits(w[:len(w)-1]) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
