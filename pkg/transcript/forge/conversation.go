package forge

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser and what its state keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxBlock   = 63
	maxModels  = 16
	maxPending = 256
	maxContext = 256 << 20
)

// contextDoc is a conversation's context, the part the reader uses.
type contextDoc struct {
	Messages []json.RawMessage `json:"messages"`
}

// entry is one message entry: Forge's record wrapper {"message": {...}, "usage": ...}, or the
// message itself (older rows: {"text": ...} or {"tool": ...}) with its usage beside.
type entry struct {
	Message json.RawMessage `json:"message"`
	Text    json.RawMessage `json:"text"`
	Tool    json.RawMessage `json:"tool"`
	Usage   json.RawMessage `json:"usage"`
}

type value struct {
	Text *textMessage `json:"text"`
	Tool *toolResult  `json:"tool"`
}

type textMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	RawContent json.RawMessage `json:"raw_content"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	Model      string          `json:"model"`
	Reasoning  []struct {
		Text string `json:"text"`
	} `json:"reasoning_details"`
	Droppable bool `json:"droppable"`
}

type toolCall struct {
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments json.RawMessage `json:"arguments"`
}

type toolResult struct {
	Name   string `json:"name"`
	CallID string `json:"call_id"`
	Output struct {
		IsError bool              `json:"is_error"`
		Values  []json.RawMessage `json:"values"`
	} `json:"output"`
}

type usage struct {
	Prompt     count    `json:"prompt_tokens"`
	Completion count    `json:"completion_tokens"`
	Cached     count    `json:"cached_tokens"`
	Cost       *float64 `json:"cost"`
}

// count is Forge's TokenCount: {"actual": n} or {"approx": n}.
type count struct {
	Actual *json.RawMessage `json:"actual"`
	Approx *json.RawMessage `json:"approx"`
}

// actual returns the provider's count, and whether there is one (an estimate is none).
func (c count) actual() (int64, bool) {
	if c.Actual == nil || c.Approx != nil {
		return 0, false
	}
	return transcript.Count(*c.Actual), true
}

// msg is one decoded entry.
type msg struct {
	text  *textMessage
	tool  *toolResult
	usage json.RawMessage
}

// conv holds what reading one conversation needs.
type conv struct {
	p        *DBParser
	r        *row
	st       convState
	stats    *transcript.Stats
	created  time.Time
	updated  time.Time
	cwd      string
	project  string
	msgs     []msg
	keys     []string
	models   []string // the model of each message: its own, else the last one before
	evs      []event.Event
	calls    map[string]callAt
	results  map[string]*toolResult
	resultAt map[string]int
	// firstPrompt is the index of the first user entry that is not dropped-in content.
	firstPrompt int
}

type callAt struct{ msg, call int }

// conversation turns one row into events and the conversation's next state. An error means the
// context does not decode: nothing is emitted.
func (p *DBParser) conversation(r *row, prev convState, stats *transcript.Stats) ([]event.Event, convState, error) {
	if len(r.context) > maxContext {
		return nil, prev, transcript.Malformed(Client, "conversation %s: context of %d bytes", r.id, len(r.context))
	}
	var d contextDoc
	if err := transcript.DecodeDocument([]byte(r.context), &d); err != nil {
		return nil, prev, err
	}
	c := &conv{p: p, r: r, st: prev, stats: stats}
	c.st.M = append([]string(nil), prev.M...)
	c.st.Pending = append([]call(nil), prev.Pending...)
	c.created, _ = parseTime(r.created)
	c.updated, _ = parseTime(r.updated)
	if c.created.IsZero() {
		c.created = c.updated
	}
	if c.created.IsZero() {
		stats.CountUnknown("conversation without time")
		return nil, prev, nil
	}
	if c.updated.Before(c.created) {
		c.updated = c.created
	}
	c.decode(&d)
	c.read()
	return c.evs, c.st, nil
}

// decode reads the entries, keys them by content, and indexes the calls and results.
func (c *conv) decode(d *contextDoc) {
	n := len(d.Messages)
	c.msgs, c.keys, c.models = make([]msg, n), make([]string, n), make([]string, n)
	c.calls, c.results, c.resultAt = map[string]callAt{}, map[string]*toolResult{}, map[string]int{}
	seen := map[string]int{}
	model := ""
	c.firstPrompt = -1
	for i, raw := range d.Messages {
		var e entry
		if json.Unmarshal(raw, &e) != nil {
			c.stats.CountUnknown("entry that does not decode")
		}
		m := msg{usage: e.Usage}
		var v value
		body := e.Message
		switch {
		case len(body) > 0:
			_ = json.Unmarshal(body, &v)
		case len(e.Text) > 0:
			body = e.Text
			_ = json.Unmarshal(body, &v.Text)
		case len(e.Tool) > 0:
			body = e.Tool
			_ = json.Unmarshal(body, &v.Tool)
		default:
			body = raw
		}
		m.text, m.tool = v.Text, v.Tool
		c.msgs[i] = m
		h := keyOf(body)
		c.keys[i] = h + "." + strconv.Itoa(seen[h])
		seen[h]++
		if m.text != nil {
			if mm := transcript.CutRunes(strings.TrimSpace(m.text.Model), 200); mm != "" {
				model = mm
			}
			for j, tc := range m.text.ToolCalls {
				if id := strings.TrimSpace(tc.CallID); id != "" {
					c.calls[id] = callAt{i, j}
				}
			}
			if c.cwd == "" {
				transcript.UpdateCwd(&c.cwd, &c.project, cwdOf(m.text.Content))
			}
			if c.firstPrompt < 0 && strings.EqualFold(strings.TrimSpace(m.text.Role), "user") && !m.text.Droppable {
				c.firstPrompt = i
			}
		}
		if m.tool != nil {
			if id := strings.TrimSpace(m.tool.CallID); id != "" {
				c.results[id], c.resultAt[id] = m.tool, i
			}
		}
		c.models[i] = model
	}
	if c.firstPrompt < 0 {
		c.firstPrompt = 0
	}
}

// keyOf hashes an entry's message (not its usage), without its layout: Forge writes a message
// the same way each time it saves the conversation.
func keyOf(raw json.RawMessage) string {
	var buf bytes.Buffer
	data := []byte(raw)
	if json.Compact(&buf, raw) == nil {
		data = buf.Bytes()
	}
	h := sha256.Sum256(data)
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

// cwdOf reads the working directory Forge's system prompt names.
func cwdOf(content string) string {
	const open, end = "<current_working_directory>", "</current_working_directory>"
	i := strings.Index(content, open)
	if i < 0 {
		return ""
	}
	rest := content[i+len(open):]
	j := strings.Index(rest, end)
	if j < 0 || j > 4096 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}

func (c *conv) read() {
	lastModel := ""
	if n := len(c.models); n > 0 {
		lastModel = c.models[n-1]
	}
	if !c.st.S {
		c.st.S = true
		transcript.NewModel(&c.st.M, lastModel, maxModels)
		ev := c.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), c.r.id, "started"), c.created)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: c.cwd, TranscriptPath: c.p.src.Path, Model: lastModel, StartedAt: c.created}
		c.evs = append(c.evs, ev)
	}
	if title := strings.TrimSpace(c.r.title); title != "" {
		if h := transcript.TextHash(title); h != c.st.Ti {
			c.st.Ti = h
			ev := c.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), c.r.id, "title", title), c.updated)
			ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: c.p.src.Path}
			c.evs = append(c.evs, ev)
		}
	}
	from := c.from()
	for i := from; i < len(c.msgs); i++ {
		if m := c.models[i]; transcript.NewModel(&c.st.M, m, maxModels) {
			ev := c.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), c.r.id, "model", m), c.timeOf(i))
			ev.Session = &event.Session{State: event.SessionActive, Cwd: c.cwd, TranscriptPath: c.p.src.Path, Model: m}
			c.evs = append(c.evs, ev)
		}
		c.message(i)
	}
	// Results of calls reported before: the calls again, with their outcome, at their time.
	for i := from; i < len(c.msgs); i++ {
		res := c.msgs[i].tool
		if res == nil {
			continue
		}
		id := strings.TrimSpace(res.CallID)
		at, ok := c.calls[id]
		if !ok || at.msg >= from {
			continue
		}
		t := c.timeOf(i)
		if pc, ok := c.st.Pending.Take(id); ok {
			t = time.Unix(0, pc.T).UTC()
		}
		c.evs = append(c.evs, c.action(&c.msgs[at.msg].text.ToolCalls[at.call], c.models[at.msg], t))
	}
	if len(c.st.Pending) == 0 {
		c.st.Pending = nil
	}
	if len(c.st.M) == 0 {
		c.st.M = nil
	}
	c.st.N = len(c.msgs)
	c.st.LK = ""
	if n := len(c.keys); n > 0 {
		c.st.LK = c.keys[n-1]
	}
}

// from is the first message not reported yet (see the package doc).
func (c *conv) from() int {
	n := c.st.N
	switch {
	case n == 0:
		return 0
	case n <= len(c.keys) && c.keys[n-1] == c.st.LK:
		return n
	}
	for i := len(c.keys) - 1; i >= 0; i-- {
		if c.keys[i] == c.st.LK {
			return i + 1
		}
	}
	return 0
}

// timeOf is the time a message first read now is given: on a conversation's first read, its
// created_at up to its first prompt (the system prompt before it included), else the row's
// updated_at.
func (c *conv) timeOf(i int) time.Time {
	if c.st.N == 0 && i <= c.firstPrompt {
		return c.created
	}
	return c.updated
}

func (c *conv) message(i int) {
	m := &c.msgs[i]
	if m.text == nil {
		return // a tool result (its call carries it), an image
	}
	at, key, model := c.timeOf(i), c.keys[i], c.models[i]
	switch strings.ToLower(strings.TrimSpace(m.text.Role)) {
	case "user":
		if m.text.Droppable {
			return
		}
		text := strings.TrimSpace(transcript.FirstNonEmpty(rawText(m.text.RawContent), m.text.Content))
		if text == "" {
			return
		}
		ev := c.newEvent(event.KindAction, event.ID(Client, "prompt", c.r.id, key), at)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: key,
			Transcript: c.p.src.Path}
		c.evs = append(c.evs, ev)
		c.textMessage(i, 0, at, event.RoleUser, text, key, "")
	case "assistant":
		c.usage(i, at, key, model)
		var thoughts []string
		for _, r := range m.text.Reasoning {
			if t := strings.TrimSpace(r.Text); t != "" {
				thoughts = append(thoughts, t)
			}
		}
		c.textMessage(i, 0, at, event.RoleThinking, strings.Join(thoughts, "\n\n"), key, model)
		c.textMessage(i, 1, at, event.RoleAssistant, m.text.Content, key, model)
		for j := range m.text.ToolCalls {
			tc := &m.text.ToolCalls[j]
			id := strings.TrimSpace(tc.CallID)
			if id == "" && strings.TrimSpace(tc.Name) == "" {
				continue
			}
			act := c.action(tc, model, at)
			if _, done := c.results[id]; !done && id != "" {
				c.st.Pending.Add(call{ID: id, T: at.UnixNano()}, maxPending) // keeps the time it was first given
			}
			c.evs = append(c.evs, act, c.messageEvent(i, 2+j, at, key, event.Message{Role: event.RoleToolCall,
				Text: act.Action.Target, Tool: act.Action.Tool, ToolUseID: act.Action.ToolUseID, MessageID: key, Model: model}))
		}
	case "system":
	default:
		c.stats.CountUnknown("role " + transcript.CutBytes(m.text.Role, 32))
	}
}

// rawText reads raw_content, the user's input before Forge's template: {"text": ...}, {"Text":
// ...} or a string.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	for _, k := range []string{"text", "Text"} {
		if v, ok := o[k]; ok {
			if json.Unmarshal(v, &s) == nil {
				return s
			}
			var inner map[string]json.RawMessage
			if json.Unmarshal(v, &inner) == nil {
				for _, ik := range []string{"text", "Text", "content"} {
					if json.Unmarshal(inner[ik], &s) == nil && s != "" {
						return s
					}
				}
			}
		}
	}
	return ""
}

// usage emits the usage of assistant entry i when its counts are the provider's.
func (c *conv) usage(i int, at time.Time, key, model string) {
	raw := bytes.TrimSpace(c.msgs[i].usage)
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var u usage
	if json.Unmarshal(raw, &u) != nil {
		c.stats.CountUnknown("usage that does not decode")
		return
	}
	prompt, okP := u.Prompt.actual()
	out, okC := u.Completion.actual()
	if !okP || !okC {
		return // absent, or Forge's own estimate
	}
	cached, _ := u.Cached.actual()
	cached = min(cached, prompt)
	tok := event.Tokens{Input: prompt - cached, CacheRead: cached, Output: out}
	clientUSD := 0.0
	if u.Cost != nil {
		clientUSD = *u.Cost
	}
	pu := transcript.PricedUsage(c.p.prices(), model, key, tok, clientUSD, at)
	if pu == nil {
		return
	}
	ev := c.newEvent(event.KindTokenUsage, event.ID(Client, "usage", c.r.id, key), at)
	ev.TokenUsage = pu
	c.evs = append(c.evs, ev)
}

// action is a tool call's action at t, with its result's outcome when the conversation has it.
func (c *conv) action(tc *toolCall, model string, t time.Time) event.Event {
	id := transcript.CutBytes(strings.TrimSpace(tc.CallID), 200)
	name := transcript.CutRunes(strings.TrimSpace(tc.Name), 200)
	args := arguments(tc.Arguments)
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	ty, target := toolOf(name, in, c.relPath)
	a := &event.Action{Type: ty, Tool: name, Target: transcript.ClipTarget(target, maxTarget), ToolUseID: id, Model: model,
		InputHash: transcript.InputHash(args), Transcript: c.p.src.Path}
	if res, ok := c.results[strings.TrimSpace(tc.CallID)]; ok {
		out := outputText(res)
		okay := !res.Output.IsError
		a.Success = &okay
		a.OutputSize = int64(len(out))
		a.Output = transcript.Clip(out, maxOutput)
		if res.Output.IsError {
			a.Error = transcript.Clip(transcript.FirstNonEmpty(out, "tool failed"), maxError)
		}
	}
	ev := c.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), c.r.id, transcript.FirstNonEmpty(id, name)), t)
	ev.Action = a
	return ev
}

// arguments reads a call's arguments: an object, or a string holding one (Forge keeps what the
// model sent when it did not parse).
func arguments(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return json.RawMessage(strings.TrimSpace(s))
	}
	return raw
}

// outputText joins the text of a tool output's values ({"text": ...}; legacy {"markdown":
// ...}).
func outputText(res *toolResult) string {
	var parts []string
	for _, v := range res.Output.Values {
		var o map[string]json.RawMessage
		if json.Unmarshal(v, &o) != nil {
			continue
		}
		for _, k := range []string{"text", "markdown"} {
			var s string
			if json.Unmarshal(o[k], &s) == nil && s != "" {
				parts = append(parts, s)
			}
		}
		if ai, ok := o["ai"]; ok {
			var a struct {
				Value string `json:"value"`
			}
			if json.Unmarshal(ai, &a) == nil && a.Value != "" {
				parts = append(parts, a.Value)
			}
		}
	}
	return strings.Join(parts, "\n")
}

func (c *conv) textMessage(i, j int, at time.Time, role, text, key, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	c.evs = append(c.evs, c.messageEvent(i, j, at, key, event.Message{Role: role, Text: text, MessageID: key, Model: model}))
}

func (c *conv) messageEvent(i, j int, at time.Time, key string, m event.Message) event.Event {
	id := event.ID(Client, string(event.KindMessage), c.r.id, key, strconv.Itoa(j))
	if m.Role == event.RoleToolCall && m.ToolUseID != "" {
		id = event.ID(Client, string(event.KindMessage), "tool_use", c.r.id, m.ToolUseID)
	}
	ev := c.newEvent(event.KindMessage, id, at)
	m.Seq = int64(i)*64 + int64(min(j, maxBlock))
	ev.Message = &m
	return ev
}

func (c *conv) relPath(file string) string { return transcript.RelPath(file, c.cwd, c.project) }

func (c *conv) newEvent(kind event.Kind, id string, at time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: at, Source: Component, Client: Client, SessionID: c.r.id,
		Project: c.project, V: event.SchemaVersion}
}
