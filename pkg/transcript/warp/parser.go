package warp

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxMessage = 64 << 10
	maxItem    = 63
)

// Parser reads one database (a transcript.Poller).
type Parser struct {
	a     *Adapter
	src   transcript.Source
	st    state
	stats transcript.Stats
	roots map[string]string // project.Root by working directory
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(a *Adapter, src transcript.Source, raw []byte) *Parser {
	p := &Parser{a: a, src: src}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *Parser) Record(int64, []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns the watermarks as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// conversationData is agent_conversations.conversation_data, the parts this reader uses.
type conversationData struct {
	ParentConversationID string `json:"parent_conversation_id"`
	Usage                *struct {
		TokenUsage []struct {
			ModelID string `json:"model_id"`
		} `json:"token_usage"`
		TotalCharged *struct {
			InputCost      float64         `json:"input_cost_in_cents"`
			OutputCost     float64         `json:"output_cost_in_cents"`
			CacheReadCost  float64         `json:"input_cache_read_cost_in_cents"`
			CacheWriteCost float64         `json:"input_cache_write_cost_in_cents"`
			Input          json.RawMessage `json:"input_tokens"`
			Output         json.RawMessage `json:"output_tokens"`
			CacheRead      json.RawMessage `json:"input_cache_read_tokens"`
			CacheWrite     json.RawMessage `json:"input_cache_write_tokens"`
		} `json:"total_charged_usage"`
	} `json:"conversation_usage_metadata"`
}

// conv is what the events of one conversation share.
type conv struct {
	id, cwd, proj, parent string
	start                 time.Time
	data                  *conversationData // nil when its row was not read or does not decode
}

// events turns one pass's rows into events: each touched conversation's session event, the
// exchanges' prompts and models, then the changed conversations' usage.
func (p *Parser) events(r *pass) []event.Event {
	var out []event.Event
	convs := map[string]*conv{}
	for _, id := range r.order {
		f, ok := r.first[id]
		t, tok := parseTime(f.start)
		if !ok || !tok {
			continue // no exchange: nothing to place it in time
		}
		c := &conv{id: id, cwd: strings.TrimSpace(f.cwd), start: t}
		if c.cwd != "" && filepath.IsAbs(c.cwd) {
			c.cwd = filepath.Clean(c.cwd)
			c.proj = p.projectOf(c.cwd)
		}
		if row := r.convs[id]; row != nil {
			var d conversationData
			raw := bytes.TrimSpace(row.data)
			if len(raw) > 0 && raw[0] == '{' && json.Unmarshal(raw, &d) == nil {
				c.data = &d
				c.parent = strings.TrimSpace(d.ParentConversationID)
			}
		}
		convs[id] = c
		ev := p.newEvent(c, event.KindSession, event.ID(Client, "session", id, "started"), t)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: c.cwd, TranscriptPath: p.src.Path, ParentSessionID: c.parent, StartedAt: t}
		out = append(out, ev)
	}
	for i := range r.exchanges {
		e := &r.exchanges[i]
		p.stats.Lines++
		c := convs[e.conv]
		t, ok := parseTime(e.start)
		if c == nil || !ok || e.exchange == "" {
			p.stats.Malformed++
			continue
		}
		if m := strings.TrimSpace(e.model); m != "" {
			ev := p.newEvent(c, event.KindSession, event.ID(Client, "session", c.id, "model", m), t)
			ev.Session = &event.Session{State: event.SessionActive, Cwd: c.cwd, TranscriptPath: p.src.Path, Model: m}
			out = append(out, ev)
		}
		items, err := queries(e.input)
		if err != nil {
			p.stats.Malformed++
			continue
		}
		for j, text := range items {
			if text == "" {
				continue
			}
			if j == firstQuery(items) {
				ev := p.newEvent(c, event.KindAction, event.ID(Client, "prompt", e.exchange), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: e.exchange,
					Model: strings.TrimSpace(e.model), Transcript: p.src.Path}
				out = append(out, ev)
			}
			ev := p.newEvent(c, event.KindMessage, event.ID(Client, "message", e.exchange, strconv.Itoa(j)), t)
			ev.Message = &event.Message{Role: event.RoleUser, Text: transcript.Clip(text, maxMessage), Seq: e.id*64 + int64(min(j, maxItem)),
				MessageID: e.exchange}
			out = append(out, ev)
		}
	}
	for _, id := range r.changed {
		p.stats.Lines++
		row, c := r.convs[id], convs[id]
		if c == nil {
			continue // no exchange yet
		}
		if c.data == nil {
			if len(bytes.TrimSpace(row.data)) > 0 {
				p.stats.Malformed++
			}
			continue
		}
		if ev, ok := p.usage(c); ok {
			out = append(out, ev)
		}
	}
	return out
}

// usage is a conversation's cumulative token usage (see the package doc).
func (p *Parser) usage(c *conv) (event.Event, bool) {
	u := c.data.Usage
	if u == nil || u.TotalCharged == nil {
		return event.Event{}, false
	}
	ch := u.TotalCharged
	tok := event.Tokens{Input: transcript.Count(ch.Input), Output: transcript.Count(ch.Output),
		CacheRead: transcript.Count(ch.CacheRead), CacheCreation: transcript.Count(ch.CacheWrite)}
	if tok.Input+tok.Output+tok.CacheRead+tok.CacheCreation == 0 {
		return event.Event{}, false
	}
	model := ""
	for _, m := range u.TokenUsage {
		id := strings.TrimSpace(m.ModelID)
		if id == "" || id == model {
			continue
		}
		if model != "" {
			model = "" // more than one model: the totals cannot be told apart
			break
		}
		model = id
	}
	tu := &event.TokenUsage{Tokens: tok, Model: model, Origin: "transcript", Reliability: event.ReliabilityApproximate}
	cents := ch.InputCost + ch.OutputCost + ch.CacheReadCost + ch.CacheWriteCost
	switch {
	case cents > 0 && cents < 1e8:
		tu.CostUSD = cents / 100
	case model != "":
		if usd, known := p.a.prices().CostAt(model, tok, c.start); known {
			tu.CostUSD = usd
		} else {
			tu.Reliability = event.ReliabilityUnknown
		}
	default:
		tu.Reliability = event.ReliabilityUnknown
	}
	ev := p.newEvent(c, event.KindTokenUsage, event.ID(Client, "usage", c.id), c.start)
	ev.TokenUsage = tu
	return ev, true
}

// queries reads an exchange's input: a JSON array of tagged items, returning the text of each
// Query item ("" for the others). An input that is not a JSON array is malformed.
func queries(input string) ([]string, error) {
	raw := bytes.TrimSpace([]byte(input))
	if len(raw) == 0 {
		return nil, nil
	}
	if raw[0] != '[' {
		return nil, transcript.Malformed(Client, "ai_queries input is not a JSON array")
	}
	var items []struct {
		Query *struct {
			Text string `json:"text"`
		} `json:"Query"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, transcript.Malformed(Client, "ai_queries input: %v", err)
	}
	out := make([]string, len(items))
	for i, it := range items {
		if it.Query != nil {
			out[i] = strings.TrimSpace(it.Query.Text)
		}
	}
	return out, nil
}

// firstQuery is the index of the first item with text: the exchange's prompt.
func firstQuery(items []string) int {
	for i, s := range items {
		if s != "" {
			return i
		}
	}
	return -1
}

func (p *Parser) projectOf(cwd string) string {
	if r, ok := p.roots[cwd]; ok {
		return r
	}
	if p.roots == nil || len(p.roots) > 4096 {
		p.roots = map[string]string{}
	}
	r := project.Root(cwd)
	p.roots[cwd] = r
	return r
}

func (p *Parser) newEvent(c *conv, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: c.id, Project: c.proj, V: event.SchemaVersion}
}

// parseTime reads a Warp timestamp: Diesel's NaiveDateTime text (UTC), or RFC 3339.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return transcript.ParseTime(s)
}
