package goose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits of what an event carries.
const (
	maxTarget = 500
	maxError  = 2 << 10
	maxOutput = 8 << 10
	maxText   = 64 << 10 // of a prompt, before it is cut to a target
)

// session is what the events of one session share.
type session struct {
	id, cwd, model string
	created        time.Time // zero when unknown
}

// reader turns goose's messages into events; the database and file parsers embed it.
type reader struct {
	a     *Adapter
	path  string
	stats transcript.Stats
	roots map[string]string   // project.Root by directory
	calls map[string]callInfo // tool calls read in this pass, by session and call id
	// summary is, per session, the last message read when it was hidden from the user and had
	// text: the compaction's summary when the next message is goose's continuation.
	summary map[string]event.Event
}

// callInfo is what a tool call's result takes from its call.
type callInfo struct {
	typ          event.ActionType
	tool, target string
	at           time.Time
}

func newReader(a *Adapter, path string) reader {
	return reader{a: a, path: path, roots: map[string]string{}, calls: map[string]callInfo{}, summary: map[string]event.Event{}}
}

func (r *reader) project(dir string) string {
	if dir == "" {
		return ""
	}
	if p, ok := r.roots[dir]; ok {
		return p
	}
	p := project.Root(dir)
	r.roots[dir] = p
	return p
}

func (r *reader) newEvent(s *session, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: s.id, Project: r.project(s.cwd), V: event.SchemaVersion}
}

func (r *reader) action(s *session, id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = r.path
	ev := r.newEvent(s, event.KindAction, id, t)
	ev.Action = a
	return ev
}

// secs returns a Unix time in seconds, or the zero time when it is outside 1971..2261.
func secs(n int64) time.Time {
	if n <= 31536000 || n >= 9214646400 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}

// startedEvent is a session's started event.
func (r *reader) startedEvent(s *session) event.Event {
	ev := r.newEvent(s, event.KindSession, event.ID(Client, "session", s.id), s.created)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: s.cwd, TranscriptPath: r.path,
		Model: s.model, StartedAt: s.created}
	return ev
}

// placeholders are the names goose gives a session before it is named (lower case).
var placeholders = map[string]bool{"cli session": true, "new chat": true, "new session": true, "acp session": true}

// titleEvent is a session's title at t; ok is false when name is no title.
func (r *reader) titleEvent(s *session, name string, byUser bool, t time.Time) (event.Event, bool) {
	name = strings.TrimSpace(name)
	if !byUser && placeholders[strings.ToLower(name)] {
		return event.Event{}, false
	}
	title, ok := event.CleanTitle(name)
	if !ok || t.IsZero() {
		return event.Event{}, false
	}
	ev := r.newEvent(s, event.KindSession, event.ID(Client, "session", s.id, "title", title), t)
	ev.Session = &event.Session{Title: title, TitleByUser: byUser, TranscriptPath: r.path}
	return ev, true
}

// figures are a session's token counts as goose keeps them.
type figures struct {
	accIn, accOut, in, out int64
	cost                   float64 // goose's accumulated_cost
}

// tokens are observer's buckets (see the package doc): the accumulated counts, else the last
// request's.
func (f figures) tokens() event.Tokens {
	in, out := clean(f.accIn), clean(f.accOut)
	if in == 0 && out == 0 {
		in, out = clean(f.in), clean(f.out)
	}
	return event.Tokens{Input: in, Output: out}
}

func clean(n int64) int64 {
	if n < 0 || n > 1e12 {
		return 0
	}
	return n
}

// key is the fingerprint of the figures reported.
func (f figures) key() string {
	tok := f.tokens()
	return shortKey(strconv.FormatInt(tok.Input, 10), strconv.FormatInt(tok.Output, 10), strconv.FormatFloat(f.cost, 'g', -1, 64))
}

// usageEvent is a session's token_usage event; ok is false when it counts nothing.
func (r *reader) usageEvent(s *session, f figures) (event.Event, bool) {
	tok := f.tokens()
	if tok.Input+tok.Output == 0 || s.created.IsZero() {
		return event.Event{}, false
	}
	tu := &event.TokenUsage{Tokens: tok, Model: s.model, Origin: "transcript"}
	switch {
	case f.cost > 0 && f.cost < 1e6:
		tu.CostUSD, tu.Reliability = f.cost, event.ReliabilityApproximate
	case s.model != "":
		if usd, known := r.a.prices().CostAt(s.model, tok, s.created); known {
			tu.CostUSD, tu.Reliability = usd, event.ReliabilityApproximate
			break
		}
		tu.Reliability = event.ReliabilityUnknown
	default:
		tu.Reliability = event.ReliabilityUnknown
	}
	ev := r.newEvent(s, event.KindTokenUsage, event.ID(Client, "usage", s.id), s.created)
	ev.TokenUsage = tu
	return ev, true
}

// msg is one message, from a row or a file line.
type msg struct {
	role        string
	created     int64
	content     []byte // the JSON array of items
	userVisible bool
	place       int64 // its place in the session: the row's id, the file's line
}

// metadata is a message's metadata JSON.
type metadata struct {
	UserVisible *bool `json:"userVisible"`
}

// visible reads a metadata object: a message is visible to the user unless it says otherwise.
func visible(raw []byte) bool {
	var m metadata
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil || m.UserVisible == nil {
		return true
	}
	return *m.UserVisible
}

// item is one content item of a message.
type item struct {
	Type       string      `json:"type"`
	Text       string      `json:"text"`
	Thinking   string      `json:"thinking"`
	ID         string      `json:"id"`
	ToolCall   *toolResult `json:"toolCall"`
	ToolResult *toolResult `json:"toolResult"`
	Msg        string      `json:"msg"`
}

// toolResult is goose's serialized ToolResult: {status: success, value} or {status: error, error}.
type toolResult struct {
	Status string          `json:"status"`
	Value  json.RawMessage `json:"value"`
	Error  string          `json:"error"`
}

type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// knownItems are the item types that yield nothing (by role, they are the rest of a message).
var knownItems = map[string]bool{"text": true, "image": true, "thinking": true, "redactedThinking": true,
	"toolConfirmationRequest": true, "actionRequired": true, "systemNotification": true, "toolInputDelta": true}

// messageEvents returns the events of one message of session s.
func (r *reader) messageEvents(s *session, m *msg) ([]event.Event, error) {
	mm := m
	raw := bytes.TrimSpace(m.content)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, transcript.Malformed(Client, "message content is not a JSON array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, transcript.Malformed(Client, "message content: %v", err)
	}
	t := secs(m.created)
	if t.IsZero() {
		t = s.created
	}
	if t.IsZero() {
		return nil, transcript.Malformed(Client, "message without a time in session %s", s.id)
	}
	if m.role != "user" && m.role != "assistant" {
		r.stats.CountUnknown("role " + transcript.CutRunes(m.role, 40))
		return nil, nil
	}
	var out []event.Event
	var texts []string
	var convo []event.Event // the message's own messages, once its visibility is known
	say := func(i int, id string, m event.Message) {
		m.Seq = msgSeq(mm.place, i)
		if m.Role != event.RoleUser && m.Role != event.RoleSummary {
			m.Model = s.model
		}
		ev := r.newEvent(s, event.KindMessage, id, t)
		ev.Message = &m
		convo = append(convo, ev)
	}
	for i, rawItem := range items {
		var it item
		if err := json.Unmarshal(rawItem, &it); err != nil {
			r.stats.CountUnknown("content item (not an object)")
			continue
		}
		switch it.Type {
		case "toolRequest", "frontendToolRequest":
			ev := r.toolRequest(s, &it, i, m.created, t)
			out = append(out, ev)
			if a := ev.Action; a.Tool != "" || a.ToolUseID != "" {
				say(i, event.ID(Client, "message", s.id, callKey(&it, i, m.created)), event.Message{Role: event.RoleToolCall,
					Text: a.Target, Tool: a.Tool, ToolUseID: a.ToolUseID})
			}
		case "toolResponse":
			out = append(out, r.toolResponse(s, &it, i, m.created, t))
		case "conversationCompacted":
			id := event.ID(Client, "compaction", s.id, strconv.FormatInt(m.created, 10), strconv.Itoa(i))
			out = append(out, r.action(s, id, t, &event.Action{Type: event.ActionContextCompacted,
				Tool: it.Type, Target: clipTarget(it.Msg), Model: s.model}))
		case "text":
			if m.role == "user" {
				texts = append(texts, it.Text)
			} else if m.userVisible && strings.TrimSpace(it.Text) != "" {
				say(i, event.ID(Client, "message", s.id, strconv.FormatInt(m.created, 10), strconv.Itoa(i), shortHash(it.Text)),
					event.Message{Role: event.RoleAssistant, Text: clipText(it.Text)})
			} else if !m.userVisible && strings.TrimSpace(it.Text) != "" {
				texts = append(texts, it.Text) // goose's own: a summary, or its continuation after one
			}
		case "thinking", "reasoning":
			text := it.Thinking
			if it.Type == "reasoning" {
				text = it.Text
			}
			if m.role == "assistant" && strings.TrimSpace(text) != "" {
				say(i, event.ID(Client, "message", s.id, strconv.FormatInt(m.created, 10), strconv.Itoa(i), shortHash(text)),
					event.Message{Role: event.RoleThinking, Text: clipText(text)})
			}
		case "image":
			if m.role == "user" {
				texts = append(texts, "[image]")
			}
		default:
			if !knownItems[it.Type] {
				r.stats.CountUnknown("content " + transcript.CutRunes(it.Type, 40))
			}
		}
	}
	hidden := strings.TrimSpace(strings.Join(texts, "\n"))
	if m.role == "user" && m.userVisible {
		text := hidden
		if text != "" {
			text = transcript.CutBytes(text, maxText)
			id := event.ID(Client, "prompt", s.id, strconv.FormatInt(m.created, 10), shortHash(text))
			out = append(out, r.action(s, id, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text)}))
			say(0, event.ID(Client, "message", s.id, strconv.FormatInt(m.created, 10), "user", shortHash(text)),
				event.Message{Role: event.RoleUser, Text: clipText(text)})
		}
	}
	// A compaction's summary is a message hidden from the user that goose follows with its own
	// continuation, hidden too ("Your context was compacted..."): the one before is the summary.
	prev, had := r.summary[s.id]
	delete(r.summary, s.id)
	if !m.userVisible && hidden != "" {
		if had && m.role == "assistant" && strings.HasPrefix(hidden, continuation) {
			out = append(out, prev)
		} else {
			ev := r.newEvent(s, event.KindMessage, event.ID(Client, "message", s.id, strconv.FormatInt(m.created, 10), "summary", shortHash(hidden)), t)
			ev.Message = &event.Message{Role: event.RoleSummary, Text: clipText(hidden), Seq: msgSeq(mm.place, 0)}
			r.summary[s.id] = ev
		}
	}
	return append(convo, out...), nil
}

// continuation starts the text goose adds, hidden from the user, after a compaction's summary.
const continuation = "Your context was compacted"

// msgSeq is a message's Seq: its place × 64 plus its item's index.
func msgSeq(place int64, i int) int64 { return place*64 + int64(i) }

func clipText(s string) string { return transcript.Clip(s, maxText) }

// callKey names a tool call in a pass: its id, else its place in the message.
func callKey(it *item, i int, created int64) string {
	if it.ID != "" {
		return it.ID
	}
	return "#" + strconv.FormatInt(created, 10) + ":" + strconv.Itoa(i)
}

// toolRequest reads a tool call.
func (r *reader) toolRequest(s *session, it *item, i int, created int64, t time.Time) event.Event {
	key := callKey(it, i, created)
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: it.ID, Model: s.model}
	var c toolCall
	switch {
	case it.ToolCall == nil:
	case it.ToolCall.Status == "error":
		f := false
		a.Success, a.Error = &f, clipError(it.ToolCall.Error)
	case json.Unmarshal(it.ToolCall.Value, &c) == nil:
		args := readArgs(c.Arguments)
		a.Tool = transcript.CutRunes(c.Name, 200)
		a.Type = ToolType(c.Name, args)
		a.Target = clipTarget(r.target(s, c.Name, a.Type, args))
		a.InputHash = hashInput(c.Arguments)
	}
	r.calls[s.id+"\x00"+key] = callInfo{typ: a.Type, tool: a.Tool, target: a.Target, at: t}
	return r.action(s, event.ID(Client, "action", s.id, key), t, a)
}

// callResult is a tool response's value: CallToolResult {content, isError}, or before it a bare
// array of content.
type callResult struct {
	Content []json.RawMessage `json:"content"`
	IsError bool              `json:"isError"`
}

type resultContent struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Resource *struct {
		Text string `json:"text"`
	} `json:"resource"`
}

// toolResponse reads a tool call's result.
func (r *reader) toolResponse(s *session, it *item, i int, created int64, t time.Time) event.Event {
	key := callKey(it, i, created)
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: it.ID, Model: s.model}
	if c, ok := r.calls[s.id+"\x00"+key]; ok {
		a.Type, a.Tool, a.Target = c.typ, c.tool, c.target
		if d := t.Sub(c.at).Milliseconds(); d >= 0 && d < 7*24*3600*1000 {
			a.DurationMs = d
		}
	}
	ok := false
	switch {
	case it.ToolResult == nil:
	case it.ToolResult.Status == "error":
		a.Error = clipError(it.ToolResult.Error)
	default:
		var res callResult
		v := bytes.TrimSpace(it.ToolResult.Value)
		if len(v) > 0 && v[0] == '[' {
			_ = json.Unmarshal(v, &res.Content)
		} else {
			_ = json.Unmarshal(v, &res)
		}
		out, size := resultText(res.Content)
		a.Output, a.OutputSize = clipOutput(out), size
		ok = !res.IsError
		if res.IsError {
			a.Error = clipError(out)
		}
	}
	a.Success = &ok
	return r.action(s, event.ID(Client, "action", s.id, key), t, a)
}

// resultText joins a result's text items (an image is "[image]"), keeping a little more than
// maxOutput (the scrubber's margin), and returns the full size.
func resultText(items []json.RawMessage) (string, int64) {
	var parts []string
	kept, size := 0, int64(0)
	for _, raw := range items {
		var c resultContent
		if json.Unmarshal(raw, &c) != nil {
			continue
		}
		var s string
		switch c.Type {
		case "text":
			s = c.Text
		case "image":
			s = "[image]"
		case "resource":
			if c.Resource != nil {
				s = c.Resource.Text
			}
		}
		if s == "" {
			continue
		}
		size += int64(len(s))
		if kept <= maxOutput+1024 {
			s = transcript.CutBytes(s, maxOutput+1024-kept+1)
			parts = append(parts, s)
			kept += len(s)
		}
	}
	return strings.Join(parts, "\n"), size
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// shortKey is a short hash of parts, for fingerprints kept in State.
func shortKey(parts ...string) string {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
