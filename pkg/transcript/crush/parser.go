package crush

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits of what an event carries and of what the parser keeps.
const (
	maxTarget = 500
	maxError  = 2 << 10
	maxOutput = 8 << 10
	maxText   = 64 << 10 // of a message
	maxAtMark = 256      // rows kept at a watermark's second
	maxParts  = 64 << 20 // decompressed size of one message's parts
)

// mark is one table's watermark: the largest time read and the rows read at it, each with the
// fingerprint of what was read ("" for sessions, read once).
type mark struct {
	T    int64             `json:"t"`
	Seen map[string]string `json:"seen,omitempty"`
}

// seen reports whether the row id was read at time t with this fingerprint already.
func (m *mark) seen(id string, t int64, fp string) bool {
	if t < m.T {
		return true
	}
	got, ok := m.Seen[id]
	return t == m.T && ok && got == fp
}

func (m *mark) advance(id string, t int64, fp string) {
	switch {
	case t > m.T:
		m.T, m.Seen = t, map[string]string{id: fp}
	case t == m.T:
		if _, ok := m.Seen[id]; ok || len(m.Seen) < maxAtMark {
			if m.Seen == nil {
				m.Seen = map[string]string{}
			}
			m.Seen[id] = fp
		}
	}
}

// state is the parser's State: the watermarks.
type state struct {
	Session mark `json:"session"` // by created_at
	Message mark `json:"message"` // by updated_at
}

func (s state) clone() state {
	s.Session.Seen = maps.Clone(s.Session.Seen)
	s.Message.Seen = maps.Clone(s.Message.Seen)
	return s
}

// Parser reads one database (a transcript.Poller).
type Parser struct {
	a     *Adapter
	src   transcript.Source
	dir   string // the project's directory, "" when not known
	root  string // project.Root(dir)
	st    state
	stats transcript.Stats
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(a *Adapter, src transcript.Source, raw []byte) *Parser {
	p := &Parser{a: a, src: src, dir: a.projectDir(src.Path)}
	if p.dir != "" {
		p.root = project.Root(p.dir)
	}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns the watermarks as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// owner is who a session's events belong to: the root session, and the sub-agent's session.
type owner struct {
	session, agent string
	title          bool // a title-generation session
}

func (p *Parser) owner(r *rows, id string) owner {
	o := owner{session: id, title: strings.HasPrefix(id, "title-")}
	cur := id
	for range 16 { // parent chains are short; a loop in damaged data ends here
		s, ok := r.sessions[cur]
		if !ok || s.parent == "" || s.parent == cur {
			break
		}
		cur = s.parent
	}
	if cur != id {
		o.session, o.agent = cur, id
	}
	return o
}

func (p *Parser) newEvent(o owner, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: o.session, Project: p.root, V: event.SchemaVersion}
}

// unixTime reads a Crush timestamp: Unix seconds (milliseconds, should a version write them).
func unixTime(v int64) time.Time {
	switch {
	case v <= 0:
		return time.Unix(0, 0)
	case v > 1e11:
		return time.UnixMilli(v)
	}
	return time.Unix(v, 0)
}

// events turns one pass's rows into events, in order: sessions, then messages.
func (p *Parser) events(r *rows) []event.Event {
	var out []event.Event
	for _, id := range r.newSess {
		s := r.sessions[id]
		if s.parent != "" || id == "" {
			continue // a sub-agent's session belongs to its parent's
		}
		t := unixTime(s.created)
		ev := p.newEvent(owner{session: id}, event.KindSession, event.ID(Client, "session", id), t)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.dir, TranscriptPath: p.src.Path, StartedAt: t.UTC()}
		out = append(out, ev)
	}
	// The tool messages come last, so that a result finds its call when this pass read it (Crush
	// finishes the assistant message, and so updates it, after the tool message is written).
	calls := map[string]*event.Action{} // this pass's tool calls, by event id
	for _, results := range []bool{false, true} {
		for _, m := range r.messages {
			if (m.role == "tool") != results {
				continue
			}
			p.stats.Lines++
			if m.id == "" || m.session == "" {
				p.stats.Malformed++
				continue
			}
			evs, err := p.message(r, m, calls)
			if err != nil {
				p.stats.Malformed++
				continue
			}
			out = append(out, evs...)
		}
	}
	return out
}

// part is one element of a message's parts: {"type", "data"}.
type part struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// zstdMagic starts every zstd frame: the parts of builds that compress them.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// zstdDecoder decompresses parts; DecodeAll is safe for concurrent use.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxParts))
})

// decodeParts reads a message's parts column.
func decodeParts(raw []byte) ([]part, error) {
	if bytes.HasPrefix(raw, zstdMagic) {
		d, err := zstdDecoder()
		if err != nil {
			return nil, err
		}
		if raw, err = d.DecodeAll(raw, nil); err != nil {
			return nil, transcript.Malformed(Client, "parts: %v", err)
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, transcript.Malformed(Client, "parts are not a JSON array")
	}
	var parts []part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, transcript.Malformed(Client, "parts: %v", err)
	}
	return parts, nil
}

// The parts this reader uses.
type (
	textData struct {
		Text   string `json:"text"`
		Hidden bool   `json:"hidden"`
	}
	reasoningData struct {
		Thinking string `json:"thinking"`
	}
	toolCallData struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Input    string `json:"input"`
		Finished bool   `json:"finished"`
	}
	toolResultData struct {
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
		Content    string `json:"content"`
		Metadata   string `json:"metadata"`
		IsError    bool   `json:"is_error"`
		MIMEType   string `json:"mime_type"`
	}
	finishData struct {
		Reason  string `json:"reason"`
		Time    int64  `json:"time"`
		Message string `json:"message"`
		Details string `json:"details"`
		// Step usage, in the builds that record it (see the package doc).
		PromptTokens     json.RawMessage `json:"prompt_tokens"`
		CompletionTokens json.RawMessage `json:"completion_tokens"`
		Cost             float64         `json:"cost"`
	}
)

// knownParts are the part types that yield nothing.
var knownParts = map[string]bool{"reasoning": true, "image_url": true, "binary": true}

func decodeData(p part, v any) error {
	d := bytes.TrimSpace(p.Data)
	if len(d) == 0 || d[0] != '{' {
		return transcript.Malformed(Client, "%s part: data is not a JSON object", transcript.CutRunes(p.Type, 40))
	}
	if err := json.Unmarshal(d, v); err != nil {
		return transcript.Malformed(Client, "%s part: %v", transcript.CutRunes(p.Type, 40), err)
	}
	return nil
}

// message returns the events of one message row. A part that does not decode makes the row
// malformed; nothing of it is emitted.
func (p *Parser) message(r *rows, m msgRow, calls map[string]*event.Action) ([]event.Event, error) {
	parts, err := decodeParts(m.parts)
	if err != nil {
		return nil, err
	}
	var (
		texts   []textData
		tcalls  []toolCallData
		results []toolResultData
		fin     *finishData
	)
	for _, pt := range parts {
		var err error
		switch pt.Type {
		case "text":
			var d textData
			err = decodeData(pt, &d)
			texts = append(texts, d)
		case "tool_call":
			var d toolCallData
			err = decodeData(pt, &d)
			tcalls = append(tcalls, d)
		case "tool_result":
			var d toolResultData
			err = decodeData(pt, &d)
			results = append(results, d)
		case "finish":
			var d finishData
			err = decodeData(pt, &d)
			fin = &d
		default:
			if !knownParts[pt.Type] {
				p.stats.CountUnknown("part " + transcript.CutRunes(pt.Type, 40))
			}
		}
		if err != nil {
			return nil, err
		}
	}
	o := p.owner(r, m.session)
	t := unixTime(m.created)
	out, err := p.conversation(r, o, m, parts, fin != nil, t)
	if err != nil {
		return nil, err
	}
	switch m.role {
	case "user":
		for _, d := range texts {
			if d.Hidden || o.title || strings.TrimSpace(d.Text) == "" {
				continue
			}
			a := &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(d.Text), MessageID: m.id,
				AgentID: o.agent, Transcript: p.src.Path}
			ev := p.newEvent(o, event.KindAction, event.ID(Client, "prompt", m.id), t)
			ev.Action = a
			out = append(out, ev)
			break // the message's prompt is its first text, as Crush sends it
		}
	case "assistant":
		for _, d := range tcalls {
			if !d.Finished && fin == nil {
				continue // still streaming: its input is not complete yet
			}
			out = append(out, p.toolCall(o, m, d, t, calls))
		}
		if fin != nil {
			out = append(out, p.finish(o, m, fin, t)...)
		}
		if m.summary || r.sessions[m.session].summary == m.id {
			a := &event.Action{Type: event.ActionContextCompacted, Tool: "summarize", MessageID: m.id,
				Model: m.model, AgentID: o.agent, Transcript: p.src.Path}
			ev := p.newEvent(o, event.KindAction, event.ID(Client, "compaction", m.id), t)
			ev.Action = a
			out = append(out, ev)
		}
	case "tool", "system":
	default:
		p.stats.CountUnknown("message role " + transcript.CutRunes(m.role, 40))
	}
	for _, d := range results {
		out = append(out, p.toolResult(o, m, d, t, calls))
	}
	return out, nil
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

// conversation returns the message events of a message row (see the package doc): the user's
// prompt; once the assistant message is finished, its reasoning, text (a summary's text is the
// summary) and tool calls, a tool call as soon as it is complete.
func (p *Parser) conversation(r *rows, o owner, m msgRow, parts []part, finished bool, t time.Time) ([]event.Event, error) {
	if o.title {
		return nil, nil // a title's generation: not the session's conversation
	}
	var out []event.Event
	add := func(i int, id string, msg event.Message) {
		msg.Seq = m.rowid*64 + int64(i)
		msg.MessageID = m.id
		msg.AgentID, msg.Sidechain = o.agent, o.agent != ""
		if m.role == "assistant" {
			msg.Model = m.model
		}
		ev := p.newEvent(o, event.KindMessage, id, t)
		ev.Message = &msg
		out = append(out, ev)
	}
	switch m.role {
	case "user":
		for i, pt := range parts {
			if pt.Type != "text" {
				continue
			}
			var d textData
			if err := decodeData(pt, &d); err != nil {
				return nil, err
			}
			if d.Hidden || strings.TrimSpace(d.Text) == "" {
				continue
			}
			add(i, event.ID(Client, "message", m.id, strconv.Itoa(i)), event.Message{Role: event.RoleUser, Text: clipText(d.Text)})
			break // the message's prompt is its first text, as Crush sends it
		}
	case "assistant":
		summary := m.summary || r.sessions[m.session].summary == m.id
		for i, pt := range parts {
			switch pt.Type {
			case "text", "reasoning":
				if !finished {
					continue // still streaming
				}
				var d textData
				var th reasoningData
				role, text := event.RoleAssistant, ""
				var err error
				if pt.Type == "text" {
					err = decodeData(pt, &d)
					text = d.Text
					if summary {
						role = event.RoleSummary
					}
				} else {
					err = decodeData(pt, &th)
					role, text = event.RoleThinking, th.Thinking
				}
				if err != nil {
					return nil, err
				}
				if d.Hidden || strings.TrimSpace(text) == "" {
					continue
				}
				add(i, event.ID(Client, "message", m.id, strconv.Itoa(i)), event.Message{Role: role, Text: clipText(text)})
			case "tool_call":
				var d toolCallData
				if err := decodeData(pt, &d); err != nil {
					return nil, err
				}
				if !d.Finished && !finished || d.ID == "" && d.Name == "" {
					continue // its input is not complete yet, or it names nothing
				}
				callID := d.ID
				if callID == "" {
					callID = m.id + ":" + d.Name
				}
				add(i, event.ID(Client, "message", m.session, callID), event.Message{Role: event.RoleToolCall,
					Text: clipTarget(p.target(d.Name, []byte(d.Input))), Tool: d.Name, ToolUseID: d.ID})
			}
		}
	}
	return out, nil
}

// clipText scrubs a message's text and keeps at most maxText bytes of it.
func clipText(s string) string { return transcript.Clip(s, maxText) }

// actionID is the id of a tool call's action: its session's and its own.
func actionID(session, callID string) string { return event.ID(Client, "action", session, callID) }

func (p *Parser) toolCall(o owner, m msgRow, d toolCallData, t time.Time, calls map[string]*event.Action) event.Event {
	callID := d.ID
	if callID == "" {
		callID = m.id + ":" + d.Name
	}
	a := &event.Action{Type: ToolType(d.Name), Tool: d.Name, ToolUseID: d.ID, MessageID: m.id, Model: m.model,
		AgentID: o.agent, Transcript: p.src.Path}
	a.Target = clipTarget(p.target(d.Name, []byte(d.Input)))
	a.InputHash = hashInput([]byte(d.Input))
	id := actionID(m.session, callID)
	cp := *a
	calls[id] = &cp
	ev := p.newEvent(o, event.KindAction, id, t)
	ev.Action = a
	return ev
}

// bashMeta is the part of a bash result's metadata this reader uses.
type bashMeta struct {
	StartTime int64 `json:"start_time"`
	EndTime   int64 `json:"end_time"`
	ExitCode  *int  `json:"exit_code"`
}

func (p *Parser) toolResult(o owner, m msgRow, d toolResultData, t time.Time, calls map[string]*event.Action) event.Event {
	callID := d.ToolCallID
	if callID == "" {
		callID = m.id + ":" + d.Name
	}
	id := actionID(m.session, callID)
	a := &event.Action{Type: ToolType(d.Name), Tool: d.Name, ToolUseID: d.ToolCallID, AgentID: o.agent, Transcript: p.src.Path}
	if c := calls[id]; c != nil {
		a.Type, a.Target, a.InputHash, a.MessageID, a.Model = c.Type, c.Target, c.InputHash, c.MessageID, c.Model
		if a.Tool == "" {
			a.Tool = c.Tool
		}
	}
	ok := !d.IsError
	content := d.Content
	if content == "" && strings.HasPrefix(d.MIMEType, "image/") {
		content = "[image]"
	}
	var meta bashMeta
	if strings.TrimSpace(d.Metadata) != "" && json.Unmarshal([]byte(d.Metadata), &meta) == nil {
		if meta.StartTime > 1e11 && meta.EndTime >= meta.StartTime && meta.EndTime-meta.StartTime < 1e9 {
			t = time.UnixMilli(meta.StartTime)
			a.DurationMs = meta.EndTime - meta.StartTime
		}
		if meta.ExitCode != nil && *meta.ExitCode != 0 {
			ok = false
			if strings.TrimSpace(content) == "" {
				content = fmt.Sprintf("exit code %d", *meta.ExitCode)
			}
		}
	}
	a.Success = &ok
	if ok {
		a.Output = transcript.Clip(content, maxOutput)
		a.OutputSize = int64(len(d.Content))
	} else {
		a.Error = transcript.Clip(content, maxError)
	}
	ev := p.newEvent(o, event.KindAction, id, t)
	ev.Action = a
	return ev
}

// finish returns what an assistant message's finish part tells: an error or an abort, and the
// step's usage in the builds that record it.
func (p *Parser) finish(o owner, m msgRow, f *finishData, t time.Time) []event.Event {
	var out []event.Event
	var typ event.ActionType
	switch f.Reason {
	case "error", "content_filter":
		typ = event.ActionAPIError
	case "canceled", "permission_denied":
		typ = event.ActionTurnAborted
	}
	if typ != "" {
		msg := f.Reason
		if f.Message != "" {
			msg += ": " + f.Message
		}
		if f.Details != "" {
			msg += ": " + f.Details
		}
		no := false
		a := &event.Action{Type: typ, Tool: f.Reason, Success: &no, Error: transcript.Clip(msg, maxError), MessageID: m.id,
			Model: m.model, AgentID: o.agent, Transcript: p.src.Path}
		ev := p.newEvent(o, event.KindAction, event.ID(Client, "finish", m.id), t)
		ev.Action = a
		out = append(out, ev)
	}
	in, outTok := transcript.Count(f.PromptTokens), transcript.Count(f.CompletionTokens)
	if in+outTok > 0 && in < 1e12 && outTok < 1e12 {
		tok := event.Tokens{Input: in, Output: outTok}
		u := &event.TokenUsage{Tokens: tok, MessageID: m.id, Model: m.model, AgentID: o.agent, Origin: "transcript"}
		u.CostUSD, u.Reliability = p.cost(m.model, tok, f.Cost, t)
		ev := p.newEvent(o, event.KindTokenUsage, event.ID(Client, "usage", m.id), t)
		ev.TokenUsage = u
		out = append(out, ev)
	}
	return out
}

// cost prices a step: Crush's own cost (it priced the cache apart), else observer's table, else
// unknown.
func (p *Parser) cost(model string, tok event.Tokens, own float64, t time.Time) (float64, event.Reliability) {
	if own > 0 && own < 1e6 {
		return own, event.ReliabilityApproximate
	}
	if model != "" {
		if usd, known := p.a.prices().CostAt(model, tok, t); known {
			return usd, event.ReliabilityApproximate
		}
	}
	return 0, event.ReliabilityUnknown
}
