package devin

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
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxPart    = 63
	maxDepth   = 1 << 16 // parent links followed to find a node's root
)

// state is the parser's State: the watermark.
type state struct {
	Row int64 `json:"row"` // the largest message_nodes.row_id read
}

// Parser reads one database (a transcript.Poller).
type Parser struct {
	a     *Adapter
	src   transcript.Source
	st    state
	stats transcript.Stats
	roots map[string]string // project.Root by working directory, for this parser's passes
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

// State returns the watermark as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// chatMessage is message_nodes.chat_message.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Thinking   string          `json:"thinking"`
	ToolCalls  []toolCall      `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
	Metadata   struct {
		GenerationModel string `json:"generation_model"`
		Metrics         *struct {
			Input         json.RawMessage `json:"input_tokens"`
			Output        json.RawMessage `json:"output_tokens"`
			CacheRead     json.RawMessage `json:"cache_read_tokens"`
			CacheCreation json.RawMessage `json:"cache_creation_tokens"`
		} `json:"metrics"`
	} `json:"metadata"`
}

type toolCall struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
	Input json.RawMessage `json:"input"`
}

// name and args are a call's tool name and its arguments as a JSON object (OpenAI's arguments are
// a JSON string holding the object).
func (c *toolCall) name() string {
	return strings.TrimSpace(transcript.FirstNonEmpty(c.Function.Name, c.Name))
}

func (c *toolCall) args() []byte {
	raw := bytes.TrimSpace(c.Function.Arguments)
	if len(raw) == 0 {
		raw = bytes.TrimSpace(c.Input)
	}
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return []byte(s)
	}
	return raw
}

// owner is who a node's events belong to: the main conversation, or a subagent's or a
// summarizer's tree (agent).
type owner struct {
	agent      string
	summarizer bool
}

// ownerOf follows a node's parent links to its root, remembering the owner of every node on the
// way so that a long conversation costs one walk, not one per node.
func (r *pass) ownerOf(k nodeKey) owner {
	if r.owners == nil {
		r.owners = map[nodeKey]owner{}
	}
	var path []nodeKey
	cur := k
	var o owner
	found := false
	for range maxDepth {
		if known, ok := r.owners[cur]; ok {
			o, found = known, true
			break
		}
		path = append(path, cur)
		l, ok := r.links[cur]
		if !ok || !l.hasParent || l.parent == cur.node {
			break
		}
		cur = nodeKey{cur.session, l.parent}
	}
	if !found {
		switch r.roots[cur] {
		case rootSubagent:
			o = owner{agent: "agent-" + strconv.FormatInt(cur.node, 10)}
		case rootSummarizer:
			o = owner{agent: "summarizer-" + strconv.FormatInt(cur.node, 10), summarizer: true}
		}
	}
	for _, n := range path {
		r.owners[n] = o
	}
	return o
}

// events turns one pass's rows into events: for each touched session its started (and title)
// event, then each node's.
func (p *Parser) events(r *pass) []event.Event {
	var out []event.Event
	calls := map[string]*event.Action{} // this pass's tool calls, by event id
	for _, sid := range r.touched {
		if sid == "" {
			continue
		}
		out = append(out, p.sessionEvents(r.sessions[sid], sid, r)...)
	}
	for i := range r.nodes {
		n := &r.nodes[i]
		p.stats.Lines++
		if n.session == "" {
			p.stats.Malformed++
			continue
		}
		var m chatMessage
		raw := bytes.TrimSpace(n.msg)
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
			p.stats.Malformed++
			continue
		}
		out = append(out, p.node(r, n, &m, calls)...)
	}
	return out
}

func (p *Parser) sessionEvents(s sessionRow, sid string, r *pass) []event.Event {
	cwd := strings.TrimSpace(s.cwd)
	t := unixTime(s.created)
	if t.IsZero() {
		t = unixTime(r.first[sid]) // the session's first node read
	}
	if t.IsZero() {
		return nil
	}
	proj := p.projectOf(cwd)
	ev := p.newEvent(sid, proj, event.KindSession, event.ID(Client, "session", sid, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: cwd, TranscriptPath: p.src.Path, StartedAt: t}
	out := []event.Event{ev}
	if title := strings.TrimSpace(s.title); title != "" {
		tev := p.newEvent(sid, proj, event.KindSession, event.ID(Client, "session", sid, "title", title), t)
		tev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: p.src.Path}
		out = append(out, tev)
	}
	return out
}

func (p *Parser) projectOf(cwd string) string {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return ""
	}
	cwd = filepath.Clean(cwd)
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

// node returns the events of one message node.
func (p *Parser) node(r *pass, n *nodeRow, m *chatMessage, calls map[string]*event.Action) []event.Event {
	s := r.sessions[n.session]
	cwd := filepath.Clean(strings.TrimSpace(s.cwd))
	if strings.TrimSpace(s.cwd) == "" {
		cwd = ""
	}
	c := ctx{p: p, sid: n.session, proj: p.projectOf(cwd), cwd: cwd, o: r.ownerOf(nodeKey{n.session, n.node}),
		t: unixTime(n.created), node: strconv.FormatInt(n.node, 10), row: n.row}
	if c.t.IsZero() {
		c.t = unixTime(s.created)
	}
	if c.t.IsZero() {
		p.stats.Malformed++
		return nil
	}
	var out []event.Event
	switch m.Role {
	case "user":
		text := strings.TrimSpace(contentText(m.Content))
		if text == "" {
			return nil
		}
		if c.o.agent == "" {
			ev := c.event(event.KindAction, event.ID(Client, "prompt", c.sid, c.node))
			ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: c.node, Transcript: p.src.Path}
			out = append(out, ev)
		}
		out = append(out, c.message(0, event.Message{Role: event.RoleUser, Text: text})...)
	case "assistant", "agent":
		model := strings.TrimSpace(transcript.FirstNonEmpty(m.Metadata.GenerationModel, s.model))
		if mt := m.Metadata.Metrics; mt != nil {
			tok := event.Tokens{Input: transcript.Count(mt.Input), Output: transcript.Count(mt.Output),
				CacheRead: transcript.Count(mt.CacheRead), CacheCreation: transcript.Count(mt.CacheCreation)}
			if u := transcript.PricedUsage(p.a.prices(), model, c.node, tok, 0, c.t); u != nil {
				u.AgentID = c.o.agent
				ev := c.event(event.KindTokenUsage, event.ID(Client, "usage", c.sid, c.node))
				ev.TokenUsage = u
				out = append(out, ev)
			}
		}
		out = append(out, c.message(0, event.Message{Role: event.RoleThinking, Text: m.Thinking, Model: model})...)
		role := event.RoleAssistant
		if c.o.summarizer {
			role = event.RoleSummary
		}
		out = append(out, c.message(1, event.Message{Role: role, Text: contentText(m.Content), Model: model})...)
		for i := range m.ToolCalls {
			tc := &m.ToolCalls[i]
			name := tc.name()
			if tc.ID == "" && name == "" {
				continue
			}
			callID := transcript.FirstNonEmpty(tc.ID, c.node+":"+strconv.Itoa(i))
			args := tc.args()
			a := &event.Action{Type: ToolType(name), Tool: name, ToolUseID: tc.ID, MessageID: c.node, Model: model,
				AgentID: c.o.agent, Sidechain: c.o.agent != "", InputHash: transcript.InputHash(args), Transcript: p.src.Path}
			a.Target = transcript.ClipTarget(target(name, args, cwd, c.proj), maxTarget)
			id := event.ID(Client, "action", c.sid, callID)
			cp := *a
			calls[id] = &cp
			ev := c.event(event.KindAction, id)
			ev.Action = a
			out = append(out, ev)
			out = append(out, c.message(2+i, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: name, ToolUseID: tc.ID, Model: model})...)
		}
	case "tool":
		if m.ToolCallID == "" {
			return nil
		}
		id := event.ID(Client, "action", c.sid, m.ToolCallID)
		a := &event.Action{Type: ToolType(m.Name), Tool: m.Name, ToolUseID: m.ToolCallID, AgentID: c.o.agent, Sidechain: c.o.agent != "", Transcript: p.src.Path}
		if call := calls[id]; call != nil {
			a.Type, a.Tool, a.Target, a.InputHash, a.MessageID, a.Model = call.Type, call.Tool, call.Target, call.InputHash, call.MessageID, call.Model
		}
		text := contentText(m.Content)
		a.Output, a.OutputSize = transcript.Clip(text, maxOutput), int64(len(text))
		ev := c.event(event.KindAction, id)
		ev.Action = a
		out = append(out, ev)
	case "system":
	default:
		p.stats.CountUnknown("role " + transcript.CutRunes(m.Role, 40))
	}
	return out
}

// ctx is what the events of one node share.
type ctx struct {
	p         *Parser
	sid, proj string
	cwd       string
	o         owner
	t         time.Time
	node      string
	row       int64
}

func (c *ctx) event(kind event.Kind, id string) event.Event {
	return c.p.newEvent(c.sid, c.proj, kind, id, c.t)
}

// message returns the message event of part `part` of the node, none when it has no text (a tool
// call's message needs only its tool).
func (c *ctx) message(part int, m event.Message) []event.Event {
	m.Text = transcript.Clip(strings.TrimSpace(m.Text), maxMessage)
	if m.Text == "" && m.Role != event.RoleToolCall {
		return nil
	}
	m.Seq = c.row*64 + int64(min(part, maxPart))
	m.MessageID = c.node
	m.AgentID, m.Sidechain = c.o.agent, c.o.agent != ""
	ev := c.event(event.KindMessage, event.ID(Client, "message", c.sid, c.node, strconv.Itoa(part)))
	ev.Message = &m
	return []event.Event{ev}
}

func (p *Parser) newEvent(sid, proj string, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: sid, Project: proj, V: event.SchemaVersion}
}

// contentText reads a message's content: a string, or the text of its [{type: "text", text}]
// parts, joined by newlines.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, pt := range parts {
		if (pt.Type == "text" || pt.Type == "") && strings.TrimSpace(pt.Text) != "" {
			texts = append(texts, pt.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// unixTime reads a Devin timestamp: Unix seconds; 0, negative or absurd values are no time.
func unixTime(v int64) time.Time {
	if v <= 31536000 || v > 9e9 {
		return time.Time{}
	}
	return time.Unix(v, 0).UTC()
}
