package copilot

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// modelUsage is one model's usage in a shutdown's modelMetrics, as the CLI sums it (see the
// package doc).
type modelUsage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
}

// add returns u plus v.
func (u modelUsage) add(v modelUsage) modelUsage {
	return modelUsage{u.Input + v.Input, u.Output + v.Output, u.CacheRead + v.CacheRead, u.CacheWrite + v.CacheWrite,
		u.Reasoning + v.Reasoning}
}

// less returns u minus v, no figure below 0.
func (u modelUsage) less(v modelUsage) modelUsage {
	return modelUsage{max(u.Input-v.Input, 0), max(u.Output-v.Output, 0), max(u.CacheRead-v.CacheRead, 0),
		max(u.CacheWrite-v.CacheWrite, 0), max(u.Reasoning-v.Reasoning, 0)}
}

// readModelUsage reads {requests, usage {inputTokens, outputTokens, cacheReadTokens,
// cacheWriteTokens, reasoningTokens}}.
func readModelUsage(raw json.RawMessage) (modelUsage, bool) {
	var m struct {
		Usage map[string]json.RawMessage `json:"usage"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Usage == nil {
		return modelUsage{}, false
	}
	n := func(k string) int64 { return num(m.Usage[k]) }
	return modelUsage{Input: n("inputTokens"), Output: n("outputTokens"), CacheRead: n("cacheReadTokens"),
		CacheWrite: n("cacheWriteTokens"), Reasoning: n("reasoningTokens")}, true
}

// zero reports a usage that counts nothing.
func (u modelUsage) zero() bool { return u.Input+u.Output+u.CacheRead+u.CacheWrite == 0 }

// tokens are observer's buckets: the CLI's input holds the cache reads and writes (the prompt's
// whole size), its output the reasoning.
func (u modelUsage) tokens() event.Tokens {
	return event.Tokens{Input: max(u.Input-u.CacheRead-u.CacheWrite, 0), Output: u.Output, CacheRead: u.CacheRead,
		CacheCreation: u.CacheWrite, Reasoning: min(u.Reasoning, u.Output)}
}

// shutdown reads session.shutdown: one token_usage event per model with usage, for the requests
// of the process that wrote it.
func (p *Parser) shutdown(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		ModelMetrics map[string]json.RawMessage `json:"modelMetrics"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	recorded := p.st.Recorded
	p.st.Recorded = nil // the next run starts its own sums
	models := make([]string, 0, len(d.ModelMetrics))
	for m := range d.ModelMetrics {
		models = append(models, m)
	}
	sort.Strings(models)
	var evs []event.Event
	for _, model := range models {
		u, ok := readModelUsage(d.ModelMetrics[model])
		if !ok {
			p.stats.CountUnknown("session.shutdown (model metrics)")
			continue
		}
		// What the run's usage records counted already (each call once, by its response id) is
		// taken out: what is left are the model's calls without a record, if any.
		u = u.less(recorded[model])
		if u.zero() {
			continue
		}
		tu := &event.TokenUsage{Tokens: u.tokens(), Model: strings.TrimSpace(model), Origin: "transcript",
			Reliability: event.ReliabilityUnknown}
		if usd, known := p.prices().CostAt(tu.Model, tu.Tokens, t); known {
			tu.CostUSD, tu.Reliability = usd, event.ReliabilityApproximate
		}
		ev := p.newEvent(event.KindTokenUsage, event.ID(ClientCLI, "usage", p.st.SessionID, model, key(r)), t)
		ev.TokenUsage = tu
		evs = append(evs, ev)
	}
	return evs, nil
}

// usageRecord reads session.usage_record (1.0.102): one API call's usage, in the shutdown's shape,
// with the call's response id (apiCallId), so the proxy's figures for the same call replace it.
func (p *Parser) usageRecord(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		Usage struct {
			Model     string          `json:"model"`
			APICallID string          `json:"apiCallId"`
			Input     json.RawMessage `json:"inputTokens"`
			Output    json.RawMessage `json:"outputTokens"`
			CacheRead json.RawMessage `json:"cacheReadTokens"`
			CacheWr   json.RawMessage `json:"cacheWriteTokens"`
			Reasoning json.RawMessage `json:"reasoningTokens"`
		} `json:"usage"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	x := d.Usage
	u := modelUsage{Input: num(x.Input), Output: num(x.Output), CacheRead: num(x.CacheRead), CacheWrite: num(x.CacheWr),
		Reasoning: num(x.Reasoning)}
	if u.zero() {
		return nil, nil
	}
	model := strings.TrimSpace(x.Model)
	if model == "" {
		model = p.st.Model
	}
	if p.st.Recorded == nil {
		p.st.Recorded = map[string]modelUsage{}
	}
	if _, ok := p.st.Recorded[model]; ok || len(p.st.Recorded) < maxRecordedModels {
		p.st.Recorded[model] = p.st.Recorded[model].add(u)
	}
	callID := strings.TrimSpace(x.APICallID)
	tu := &event.TokenUsage{Tokens: u.tokens(), Model: model, MessageID: callID, Origin: "transcript",
		Reliability: event.ReliabilityUnknown}
	if usd, known := p.prices().CostAt(tu.Model, tu.Tokens, t); known {
		tu.CostUSD, tu.Reliability = usd, event.ReliabilityApproximate
	}
	id := callID
	if id == "" {
		id = key(r)
	}
	ev := p.newEvent(event.KindTokenUsage, event.ID(ClientCLI, "usage", p.st.SessionID, "call", id), t)
	ev.TokenUsage = tu
	return []event.Event{ev}, nil
}

// maxRecordedModels bounds the models a run's usage records are summed for (State).
const maxRecordedModels = 32

func num(v []byte) int64 { return transcript.Count(v) }
