package pi

import (
	"math"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// usage is an assistant message's usage as pi-ai normalized it (see the package doc), with the
// split @openclaw/ai, OpenClaw's fork of pi-ai, adds: the 1-hour part of the cache writes and
// the reasoning part of the output.
type usage struct {
	input, output, cacheRead, cacheWrite, cacheWrite1h, reasoning int64
	cost                                                          float64 // the client's own cost.total
}

// readUsage reads a usage object; ok is false when it is not one.
func readUsage(raw []byte) (u usage, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return u, false
	}
	err := jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "input":
			u.input = num(v)
		case "output":
			u.output = num(v)
		case "cacheRead":
			u.cacheRead = num(v)
		case "cacheWrite":
			u.cacheWrite = num(v)
		case "cacheWrite1h":
			u.cacheWrite1h = num(v)
		case "reasoningTokens":
			u.reasoning = num(v)
		case "cost":
			if len(v) > 0 && v[0] == '{' {
				_ = jsonscan.Members(v, func(k, v []byte) bool {
					if jsonscan.Key(k, "total") {
						if f, ok := jsonscan.Float(v); ok && f > 0 && f < 1e6 && !math.IsInf(f, 0) {
							u.cost = f
						}
						return false
					}
					return true
				})
			}
		}
		return true
	})
	return u, err == nil
}

// zero reports a usage that counts nothing: a request aborted before the API reported any.
func (u usage) zero() bool { return u.input+u.output+u.cacheRead+u.cacheWrite == 0 }

// tokens are observer's buckets: the input is already net of cache reads and writes, the output
// already holds the reasoning, and the cache writes hold both lifetimes.
func (u usage) tokens() event.Tokens {
	return event.Tokens{Input: u.input, Output: u.output, CacheRead: u.cacheRead, CacheCreation: u.cacheWrite,
		CacheCreation1h: min(u.cacheWrite1h, u.cacheWrite), Reasoning: min(u.reasoning, u.output)}
}

// usage returns the token_usage event of an assistant message; ok is false when it has no usage.
func (r *Reader) usage(s *Session, m *message, key string, t time.Time) (event.Event, bool) {
	u, ok := readUsage(m.Usage)
	if !ok || u.zero() {
		return event.Event{}, false
	}
	id := event.ID(r.Client, "usage", m.Provider, m.Model, key, m.ResponseID)
	tu := &event.TokenUsage{Tokens: u.tokens(), MessageID: m.ResponseID, Model: m.Model, AgentID: s.agentID(),
		Origin: "transcript"}
	tu.CostUSD, tu.Reliability = r.cost(m, tu.Tokens, u.cost, t)
	ev := r.newEvent(s, event.KindTokenUsage, id, t)
	ev.TokenUsage = tu
	return ev, true
}

// cost prices one message: observer's table for the model named, else for the model the API
// answered with, else the client's own cost; with none of them, 0 and unknown.
func (r *Reader) cost(m *message, tok event.Tokens, own float64, t time.Time) (float64, event.Reliability) {
	table := r.Prices()
	for _, model := range []string{m.Model, m.ResponseModel} {
		if model == "" {
			continue
		}
		if usd, known := table.CostAt(model, tok, t); known {
			return usd, event.ReliabilityApproximate
		}
	}
	if own > 0 {
		return own, event.ReliabilityApproximate
	}
	return 0, event.ReliabilityUnknown
}
