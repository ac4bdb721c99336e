package claudecode

import (
	"bytes"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// syntheticModel names the messages Claude Code writes itself (API errors, "No response
// requested."): they carry no usage of a real request.
const syntheticModel = "<synthetic>"

// lineUsage reads the usage of one assistant message line in observer's buckets. ok is false when
// the line carries no countable usage: no usage object, no message id, or a synthetic message.
// Counts that are not numbers read as 0. It reads the object with jsonscan (the usage of every
// assistant line, through encoding/json, was a twelfth of the watcher's time on a history): keys
// are matched byte for byte, as Claude Code writes them.
func lineUsage(m *message) (tok event.Tokens, ok bool) {
	raw := bytes.TrimSpace(m.Usage)
	if len(raw) == 0 || raw[0] != '{' || m.ID == "" || m.Model == syntheticModel {
		return tok, false
	}
	var breakdown []byte
	if jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "input_tokens":
			tok.Input = transcript.Count(v)
		case "output_tokens":
			tok.Output = transcript.Count(v)
		case "cache_read_input_tokens":
			tok.CacheRead = transcript.Count(v)
		case "cache_creation_input_tokens":
			tok.CacheCreation = transcript.Count(v)
		case "cache_creation": // {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}
			breakdown = v
		}
		return true
	}) != nil {
		return event.Tokens{}, false
	}
	if len(breakdown) == 0 || breakdown[0] != '{' {
		return tok, true
	}
	var write5m, write1h int64
	if jsonscan.Members(breakdown, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "ephemeral_5m_input_tokens":
			write5m = transcript.Count(v)
		case "ephemeral_1h_input_tokens":
			write1h = transcript.Count(v)
		}
		return true
	}) != nil {
		return tok, true
	}
	tok.CacheCreation1h = write1h
	if tok.CacheCreation == 0 {
		tok.CacheCreation = write5m + write1h
	}
	if tok.CacheCreation1h > tok.CacheCreation {
		tok.CacheCreation1h = tok.CacheCreation
	}
	return tok, true
}

// usage returns the token_usage event of an assistant line, unless an earlier line of the same
// message in this file already reported an output at least as large.
func (p *Parser) usage(l *line, m *message, t time.Time) (event.Event, bool) {
	tok, ok := lineUsage(m)
	if !ok || !p.outputGrew(m.ID, tok.Output) {
		return event.Event{}, false
	}
	u := &event.TokenUsage{Tokens: tok, MessageID: m.ID, RequestID: l.RequestID, Model: m.Model,
		AgentID: p.agentID(l), Reliability: event.ReliabilityUnreliable, Origin: "transcript"}
	cost, known := p.prices().CostAt(m.Model, tok, t)
	if known {
		u.CostUSD = cost
	} else {
		u.Reliability = event.ReliabilityUnknown
	}
	ev := p.newEvent(event.KindTokenUsage, UsageID(m.ID), t)
	ev.TokenUsage = u
	return ev, true
}

// UsageID is the id of the token_usage event of a Claude model message, whichever file and line
// it is read from.
func UsageID(messageID string) string {
	return event.ID(Client, "usage", messageID)
}

// outputGrew records a message's output and reports whether it is the first or a larger one.
func (p *Parser) outputGrew(id string, out int64) bool {
	for i := len(p.st.Outputs) - 1; i >= 0; i-- {
		if p.st.Outputs[i].ID == id {
			if out <= p.st.Outputs[i].Output {
				return false
			}
			p.st.Outputs[i].Output = out
			return true
		}
	}
	p.st.Outputs = append(p.st.Outputs, msgOut{ID: id, Output: out})
	if n := len(p.st.Outputs); n > maxMessages {
		p.st.Outputs = append(p.st.Outputs[:0:0], p.st.Outputs[n-maxMessages:]...)
	}
	return true
}
