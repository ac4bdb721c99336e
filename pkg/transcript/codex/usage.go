package codex

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// counts are Codex's usage counters. input includes cached (and cache-write) tokens; output
// includes reasoning.
type counts struct {
	Input      int64 `json:"input_tokens"`
	Cached     int64 `json:"cached_input_tokens"`
	CacheWrite int64 `json:"cache_write_input_tokens,omitempty"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_output_tokens"`
}

type tokenInfo struct {
	Total *counts `json:"total_token_usage"`
	Last  *counts `json:"last_token_usage"`
}

func (c counts) clean() counts {
	for _, f := range []*int64{&c.Input, &c.Cached, &c.CacheWrite, &c.Output, &c.Reasoning} {
		if *f < 0 {
			*f = 0
		}
	}
	return c
}

func (c counts) zero() bool { return c == counts{} }

// less reports whether any counter of c is below b's: a cumulative total went down.
func (c counts) less(b counts) bool {
	return c.Input < b.Input || c.Cached < b.Cached || c.CacheWrite < b.CacheWrite || c.Output < b.Output ||
		c.Reasoning < b.Reasoning
}

func (c counts) sub(b counts) counts {
	return counts{c.Input - b.Input, c.Cached - b.Cached, c.CacheWrite - b.CacheWrite, c.Output - b.Output,
		c.Reasoning - b.Reasoning}
}

func (c counts) add(b counts) counts {
	return counts{c.Input + b.Input, c.Cached + b.Cached, c.CacheWrite + b.CacheWrite, c.Output + b.Output,
		c.Reasoning + b.Reasoning}
}

// key names a cumulative total; it identifies the usage that brought the session to it.
func (c counts) key() string {
	k := strconv.FormatInt(c.Input, 10) + ":" + strconv.FormatInt(c.Cached, 10) + ":" +
		strconv.FormatInt(c.Output, 10) + ":" + strconv.FormatInt(c.Reasoning, 10)
	if c.CacheWrite > 0 {
		k += ":w" + strconv.FormatInt(c.CacheWrite, 10)
	}
	return k
}

// tokens converts a usage delta to observer's billing buckets: input net of cache reads and writes.
func (c counts) tokens() event.Tokens {
	in := c.Input - c.Cached - c.CacheWrite
	if in < 0 {
		in = 0
	}
	return event.Tokens{Input: in, CacheRead: c.Cached, CacheCreation: c.CacheWrite, Output: c.Output,
		Reasoning: c.Reasoning}
}

func (p *Parser) totalKey() string {
	if p.st.Base == nil {
		return ""
	}
	return p.st.Base.key()
}

// tokenCount turns a cumulative token_count into a usage delta.
func (p *Parser) tokenCount(info *tokenInfo, t time.Time, hasTime bool) ([]event.Event, error) {
	if info == nil || (info.Total == nil && info.Last == nil) {
		return nil, nil // rate limits only, or info null before the first response
	}
	var base counts
	if p.st.Base != nil {
		base = *p.st.Base
	}
	var cur counts
	var last *counts
	if info.Last != nil {
		l := info.Last.clean()
		last = &l
	}
	if info.Total != nil {
		cur = info.Total.clean()
	} else {
		// No cumulative total: add the last request, unless it repeats the previous token_count
		// with no model output in between.
		if p.st.PrevLast != nil && *p.st.PrevLast == *last && !p.st.SinceUsage {
			return nil, nil
		}
		cur = base.add(*last)
	}
	p.st.PrevLast, p.st.SinceUsage = last, false
	if cur.less(base) {
		base = counts{} // a new conversation or a reset: start over
	}
	delta := cur.sub(base)
	p.st.Base = &cur
	if delta.zero() || p.st.Records {
		return nil, nil // a repeat, or usage counted from token_usage_record lines
	}
	if err := needTime(hasTime, "token_count"); err != nil {
		return nil, err
	}
	id := event.ID(Client, "usage", p.rootID(), cur.key())
	return []event.Event{p.usage(id, t, delta, last)}, nil
}

// usageRecord reads a token_usage_record: the usage of one response, not cumulative.
func (p *Parser) usageRecord(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var r struct {
		ResponseID string  `json:"response_id"`
		Model      string  `json:"model"`
		Usage      *counts `json:"usage"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, malformed("token_usage_record: %v", err)
	}
	if r.Usage == nil {
		return nil, nil
	}
	u := r.Usage.clean()
	if u.zero() {
		return nil, nil
	}
	if err := needTime(hasTime, "token_usage_record"); err != nil {
		return nil, err
	}
	p.st.Records = true
	key := r.ResponseID
	if key == "" {
		key = "record:" + u.key() + ":" + p.totalKey()
	}
	ev := p.usage(event.ID(Client, "usage", p.rootID(), "response", key), t, u, &u)
	ev.TokenUsage.MessageID = r.ResponseID
	if r.Model != "" {
		ev.TokenUsage.Model = r.Model
		ev.TokenUsage.CostUSD, ev.TokenUsage.Reliability = p.cost(r.Model, u, &u, t)
	}
	return []event.Event{ev}, nil
}

func (p *Parser) usage(id string, t time.Time, delta counts, last *counts) event.Event {
	ev := p.newEvent(event.KindTokenUsage, id, t)
	u := &event.TokenUsage{Tokens: delta.tokens(), Model: p.st.Model, Origin: "transcript"}
	u.CostUSD, u.Reliability = p.cost(p.st.Model, delta, last, t)
	ev.TokenUsage = u
	return ev
}

// cost prices a delta. Long-context prices apply per request, so a delta larger than the last
// request (some token_count was not written) is priced as the last request plus the rest.
func (p *Parser) cost(model string, delta counts, last *counts, t time.Time) (float64, event.Reliability) {
	if model == "" {
		return 0, event.ReliabilityUnknown
	}
	parts := []counts{delta}
	if last != nil && !last.zero() && *last != delta && !delta.less(*last) {
		parts = []counts{*last, delta.sub(*last)}
	}
	var usd float64
	for _, c := range parts {
		v, known := p.prices().CostAt(model, c.tokens(), t)
		if !known {
			return 0, event.ReliabilityUnknown
		}
		usd += v
	}
	return usd, event.ReliabilityApproximate
}
