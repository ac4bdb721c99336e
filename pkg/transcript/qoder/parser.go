package qoder

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what its state keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxBlock   = 63
	maxModels  = 16
	maxPending = 256
)

// pending is a tool call waiting for its result.
type pending struct {
	ID     string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"`
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t,omitempty"`
}

// state is what a parser keeps between lines: JSON, small, no transcript text but memos.
type state struct {
	Session string    `json:"session,omitempty"`
	Lines   int64     `json:"lines,omitempty"`
	Started bool      `json:"started,omitempty"`
	Cwd     string    `json:"cwd,omitempty"`
	Project string    `json:"project,omitempty"`
	Models  []string  `json:"models,omitempty"`
	Model0  string    `json:"model0,omitempty"` // the model named before the session started
	Title   string    `json:"title,omitempty"`  // TextHash of the title reported
	FirstT  int64     `json:"first_t,omitempty"`
	LastT   int64     `json:"last_t,omitempty"`
	Pending []pending `json:"pending,omitempty"`
}

// Parser reads one transcript.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
}

var _ transcript.Parser = (*Parser)(nil)

func newParser(src transcript.Source, raw []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p.st); err != nil {
			return nil, fmt.Errorf("qoder parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// record is one line, the fields the reader uses.
type record struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	Timestamp        json.RawMessage `json:"timestamp"`
	Cwd              string          `json:"cwd"`
	GitBranch        string          `json:"gitBranch"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Model            string          `json:"model"`
	AITitle          string          `json:"aiTitle"`
	CustomTitle      string          `json:"customTitle"`
	Message          *message        `json:"message"`
}

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *usage          `json:"usage"`
}

type usage struct {
	Input         count `json:"input_tokens"`
	Output        count `json:"output_tokens"`
	CacheRead     count `json:"cache_read_input_tokens"`
	CacheCreation count `json:"cache_creation_input_tokens"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// count reads a token count (transcript.Count: a number or a numeric string, else 0).
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	*c = count(transcript.Count(b))
	return nil
}

// known are the record types that carry nothing this reader reports.
var known = map[string]bool{"summary": true, "system": true, "last-prompt": true, "file-history-snapshot": true,
	"queue-operation": true, "progress": true}

// Record reads one line.
func (p *Parser) Record(_ int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, transcript.Malformed(Client, "line is not UTF-8")
	case line[0] != '{':
		return nil, transcript.Malformed(Client, "line is not a JSON object")
	}
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, transcript.Malformed(Client, "line does not parse: %v", err)
	}
	seq := p.st.Lines
	p.st.Lines++
	t, ok := p.time(r.Timestamp)
	if !ok {
		p.stats.CountUnknown("(no timestamp)")
		return nil, nil
	}
	if p.st.FirstT == 0 {
		p.st.FirstT = t.UnixNano()
	}
	p.setCwd(r.Cwd)
	rd := &reader{p: p, r: &r, line: line, seq: seq, t: t}
	if !p.st.Started && p.src.AgentID == "" && (p.st.Cwd != "" || r.Type == "user" || r.Type == "assistant") {
		// The session starts at its first record; its event waits for the first record that
		// says where it runs (Qoder's runtime-config line does not).
		p.st.Started = true
		first := time.Unix(0, p.st.FirstT).UTC()
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), first)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, GitBranch: transcript.CutRunes(strings.TrimSpace(r.GitBranch), 200),
			TranscriptPath: p.src.Path, StartedAt: first}
		if transcript.NewModel(&p.st.Models, p.st.Model0, maxModels) {
			ev.Session.Model = p.st.Model0
		}
		p.st.Model0 = ""
		rd.evs = append(rd.evs, ev)
	}
	switch r.Type {
	case "user":
		rd.user()
	case "assistant":
		rd.assistant()
	case "runtime-config":
		rd.model(r.Model)
	case "ai-title":
		rd.title(r.AITitle)
	case "custom-title":
		rd.title(r.CustomTitle)
	default:
		if !known[r.Type] {
			p.stats.CountUnknown(transcript.FirstNonEmpty(r.Type, "(no type)"))
		}
	}
	return rd.evs, nil
}

// time reads a record's time (RFC 3339, or unix milliseconds as Qoder's runtime-config line
// writes it), else the last time seen.
func (p *Parser) time(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, ok := transcript.ParseTime(s); ok {
			p.st.LastT = t.UnixNano()
			return t, true
		}
	} else if ms := transcript.Count(raw); ms > 31536000000 && ms < 9e12 {
		t := time.UnixMilli(ms).UTC()
		p.st.LastT = t.UnixNano()
		return t, true
	}
	if p.st.LastT > 0 {
		return time.Unix(0, p.st.LastT).UTC(), true
	}
	return time.Time{}, false
}

// reader holds what reading one record needs.
type reader struct {
	p    *Parser
	r    *record
	line []byte
	seq  int64
	t    time.Time
	evs  []event.Event
}

// key is the record's stable key: its uuid, else a hash of the line.
func (rd *reader) key() string {
	if u := strings.TrimSpace(rd.r.UUID); u != "" {
		return transcript.CutBytes(u, 200)
	}
	h := sha256.Sum256(rd.line)
	return "#" + base64.RawURLEncoding.EncodeToString(h[:12])
}

func (rd *reader) blocks() (text string, blocks []block) {
	if rd.r.Message == nil {
		return "", nil
	}
	raw := bytes.TrimSpace(rd.r.Message.Content)
	if len(raw) > 0 && raw[0] == '"' {
		_ = json.Unmarshal(raw, &text)
		return text, nil
	}
	_ = json.Unmarshal(raw, &blocks)
	return "", blocks
}

// injected reports text a client injects into a user record, not typed by the user.
func injected(s string) bool {
	for _, p := range []string{"<command-", "<local-command-", "<system-reminder>", "Caveat:", "<user-memory-input>", "[Request interrupted"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (rd *reader) user() {
	text, blocks := rd.blocks()
	var parts []string
	images := 0
	if t := strings.TrimSpace(text); t != "" {
		parts = append(parts, t)
	}
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				parts = append(parts, t)
			}
		case "image":
			images++
		case "tool_result":
			rd.result(b)
		}
	}
	prompt := strings.TrimSpace(strings.Join(parts, "\n"))
	if prompt == "" && images > 0 && len(parts) == 0 && !hasResults(blocks) {
		prompt = "[image]"
	}
	key := rd.key()
	switch {
	case rd.r.IsCompactSummary:
		ev := rd.p.newEvent(event.KindAction, event.ID(Client, "compaction", key), rd.t)
		ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: rd.p.src.AgentID, Transcript: rd.p.src.Path}
		rd.evs = append(rd.evs, ev)
		rd.textMessage(0, event.RoleSummary, prompt, key, "")
		return
	case prompt == "" || rd.r.IsMeta || injected(prompt):
		return
	}
	if rd.p.src.AgentID == "" && !rd.r.IsSidechain {
		ev := rd.p.newEvent(event.KindAction, event.ID(Client, "prompt", key), rd.t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: rd.p.src.Path}
		rd.evs = append(rd.evs, ev)
	}
	rd.textMessage(0, event.RoleUser, prompt, key, "")
}

func hasResults(blocks []block) bool {
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return true
		}
	}
	return false
}

func (rd *reader) assistant() {
	m := rd.r.Message
	if m == nil {
		return
	}
	model := transcript.CutRunes(strings.TrimSpace(m.Model), 200)
	rd.model(model)
	msgID := transcript.FirstNonEmpty(transcript.CutBytes(m.ID, 200), rd.key())
	if m.Usage != nil {
		tok := event.Tokens{Input: int64(m.Usage.Input), Output: int64(m.Usage.Output),
			CacheRead: int64(m.Usage.CacheRead), CacheCreation: int64(m.Usage.CacheCreation)}
		if u := transcript.PricedUsage(rd.p.prices(), model, msgID, tok, 0, rd.t); u != nil {
			u.AgentID = rd.p.src.AgentID
			ev := rd.p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", msgID), rd.t)
			ev.TokenUsage = u
			rd.evs = append(rd.evs, ev)
		}
	}
	_, blocks := rd.blocks()
	for j := range blocks {
		b := &blocks[j]
		switch b.Type {
		case "text":
			rd.textMessage(j, event.RoleAssistant, b.Text, msgID, model)
		case "thinking":
			rd.textMessage(j, event.RoleThinking, b.Thinking, msgID, model)
		case "tool_use":
			rd.call(j, b, msgID, model)
		}
	}
}

// call emits a tool_use block's action, without outcome, and waits for its result.
func (rd *reader) call(j int, b *block, msgID, model string) {
	id := transcript.CutBytes(strings.TrimSpace(b.ID), 200)
	name := transcript.CutRunes(strings.TrimSpace(b.Name), 200)
	if id == "" && name == "" {
		return
	}
	if id == "" {
		id = rd.key() + "#" + strconv.Itoa(j)
	}
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := toolOf(name, in, rd.p.relPath)
	target = clipTarget(target)
	a := &event.Action{Type: ty, Tool: name, Target: target, ToolUseID: id, MessageID: msgID, AgentID: rd.p.src.AgentID,
		Sidechain: rd.r.IsSidechain, Model: model, InputHash: transcript.InputHash(b.Input), Transcript: rd.p.src.Path}
	ev := rd.p.newEvent(event.KindAction, rd.p.actionID(id), rd.t)
	ev.Action = a
	rd.evs = append(rd.evs, ev)
	rd.p.addPending(pending{ID: id, Type: ty, Tool: name, Target: transcript.Memo(target), Msg: msgID, Model: model, Time: rd.t.UnixNano()})
	rd.evs = append(rd.evs, rd.message(j, event.Message{Role: event.RoleToolCall, Text: target, Tool: name, ToolUseID: id,
		MessageID: msgID, Model: model}))
}

// result emits the action of a tool_result block with its outcome.
func (rd *reader) result(b *block) {
	id := transcript.CutBytes(strings.TrimSpace(b.ToolUseID), 200)
	if id == "" {
		return
	}
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: id, AgentID: rd.p.src.AgentID, Sidechain: rd.r.IsSidechain,
		Transcript: rd.p.src.Path}
	if pc, ok := rd.p.takePending(id); ok {
		a.Type, a.Tool, a.Target, a.MessageID, a.Model = pc.Type, pc.Tool, string(pc.Target), pc.Msg, pc.Model
		if d := rd.t.UnixNano() - pc.Time; pc.Time > 0 && d >= 0 {
			a.DurationMs = d / int64(time.Millisecond)
		}
	}
	out := resultText(b.Content)
	ok := !b.IsError
	a.Success = &ok
	a.OutputSize = int64(len(out))
	a.Output = transcript.Clip(out, maxOutput)
	if b.IsError {
		a.Error = transcript.Clip(transcript.FirstNonEmpty(out, "tool failed"), maxError)
	}
	ev := rd.p.newEvent(event.KindAction, rd.p.actionID(id), rd.t)
	ev.Action = a
	rd.evs = append(rd.evs, ev)
}

// resultText reads a tool_result's content: a string, or text blocks.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []block
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				parts = append(parts, b.Text)
			case "image":
				parts = append(parts, "[image]")
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func (rd *reader) model(model string) {
	model = transcript.CutRunes(strings.TrimSpace(model), 200)
	if rd.p.src.AgentID != "" || model == "" {
		return
	}
	if !rd.p.st.Started {
		rd.p.st.Model0 = model // reported with the started event
		return
	}
	if !transcript.NewModel(&rd.p.st.Models, model, maxModels) {
		return
	}
	ev := rd.p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), rd.p.st.Session, "model", model), rd.t)
	ev.Session = &event.Session{State: event.SessionActive, Cwd: rd.p.st.Cwd, TranscriptPath: rd.p.src.Path, Model: model}
	rd.evs = append(rd.evs, ev)
}

func (rd *reader) title(title string) {
	title = strings.TrimSpace(title)
	if title == "" || rd.p.src.AgentID != "" {
		return
	}
	h := transcript.TextHash(title)
	if h == rd.p.st.Title {
		return
	}
	rd.p.st.Title = h
	ev := rd.p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), rd.p.st.Session, "title", title), rd.t)
	ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TitleByUser: rd.r.Type == "custom-title",
		TranscriptPath: rd.p.src.Path}
	rd.evs = append(rd.evs, ev)
}

func (rd *reader) textMessage(j int, role, text, msgID, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	rd.evs = append(rd.evs, rd.message(j, event.Message{Role: role, Text: text, MessageID: msgID, Model: model}))
}

// message is the message event of block j; a tool call's is keyed by its tool use id, so that a
// record written again with the same calls yields the same message.
func (rd *reader) message(j int, m event.Message) event.Event {
	id := event.ID(Client, string(event.KindMessage), rd.key(), strconv.Itoa(j))
	if m.Role == event.RoleToolCall && m.ToolUseID != "" {
		id = event.ID(Client, string(event.KindMessage), "tool_use", rd.p.st.Session, m.ToolUseID)
	}
	ev := rd.p.newEvent(event.KindMessage, id, rd.t)
	m.Seq = rd.seq*64 + int64(min(j, maxBlock))
	m.AgentID = rd.p.src.AgentID
	m.Sidechain = rd.r.IsSidechain
	ev.Message = &m
	return ev
}

// ---------------------------------------------------------------------------------------------
// Sessions, pending calls, helpers

func (p *Parser) actionID(toolUseID string) string {
	return event.ID(Client, string(event.KindAction), p.st.Session, toolUseID)
}

func (p *Parser) addPending(pc pending) {
	for i := range p.st.Pending {
		if p.st.Pending[i].ID == pc.ID {
			p.st.Pending[i] = pc
			return
		}
	}
	p.st.Pending = append(p.st.Pending, pc)
	if n := len(p.st.Pending); n > maxPending {
		p.st.Pending = append(p.st.Pending[:0:0], p.st.Pending[n-maxPending:]...)
	}
}

// takePending returns a call and forgets it: a call has one result.
func (p *Parser) takePending(id string) (pending, bool) {
	for i := range p.st.Pending {
		if p.st.Pending[i].ID == id {
			pc := p.st.Pending[i]
			p.st.Pending = append(p.st.Pending[:i], p.st.Pending[i+1:]...)
			return pc, true
		}
	}
	return pending{}, false
}

func (p *Parser) setCwd(cwd string) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" || p.st.Cwd != "" {
		return
	}
	p.st.Cwd = transcript.CutBytes(filepath.Clean(cwd), 4096)
	if filepath.IsAbs(p.st.Cwd) {
		p.st.Project = project.Root(p.st.Cwd)
	}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }
