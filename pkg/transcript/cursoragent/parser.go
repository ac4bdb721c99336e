package cursoragent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxMessage = 64 << 10
	maxBlock   = 63
)

// state is what a parser keeps between reads: JSON, small, no text of the transcript.
type state struct {
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Started bool   `json:"started,omitempty"`
	Title   string `json:"title,omitempty"` // TextHash of the last title reported
	Time    int64  `json:"time,omitempty"`  // unix ms of the last <timestamp> tag read
}

// Parser reads one transcript.
type Parser struct {
	src      transcript.Source
	st       state
	slug     string
	fileTime time.Time // the file's modification time when the parser was made
	meta     meta      // the CLI chat's meta.json
	stats    transcript.Stats
}

func newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src, slug: slugOf(src.Path)}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("cursor-agent parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session, p.st.Agent = idsOf(src)
	}
	return p, nil
}

// idsOf returns the session and the subagent a source holds: its own, else read from its path
// (<id>.jsonl, <id>/<id>.jsonl, <parent>/subagents/<child>.jsonl).
func idsOf(src transcript.Source) (session, agent string) {
	if src.SessionID != "" {
		return src.SessionID, src.AgentID
	}
	stem := strings.TrimSuffix(filepath.Base(src.Path), filepath.Ext(src.Path))
	if dir := filepath.Dir(src.Path); filepath.Base(dir) == "subagents" {
		return filepath.Base(filepath.Dir(dir)), stem
	}
	return stem, ""
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// line is one record of a transcript.
type line struct {
	Role    string          `json:"role"`
	Type    string          `json:"type"`
	Status  string          `json:"status"`
	Error   json.RawMessage `json:"error"`
	Message *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// block is one content block of a message.
type block struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Thinking string          `json:"thinking"`
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Input    json.RawMessage `json:"input"`
}

// Record reads one line.
func (p *Parser) Record(off int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, nil
	case !utf8.Valid(raw):
		return nil, transcript.Malformed(Client, "line at %d is not UTF-8", off)
	case raw[0] != '{':
		return nil, transcript.Malformed(Client, "line at %d is not a JSON object", off)
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, transcript.Malformed(Client, "line at %d does not decode: %v", off, err)
	}
	switch {
	case l.Role == "user" || l.Role == "assistant":
		blocks, err := contentBlocks(l.Message)
		if err != nil {
			return nil, transcript.Malformed(Client, "%s line at %d: %v", l.Role, off, err)
		}
		if l.Role == "user" {
			return p.user(off, blocks), nil
		}
		return p.assistant(off, blocks), nil
	case l.Role != "":
		p.stats.CountUnknown("role " + l.Role)
	case l.Type == "turn_ended":
		return p.turnEnded(off, &l), nil
	case l.Type == "metadata":
	default:
		p.stats.CountUnknown("type " + l.Type)
	}
	return nil, nil
}

// contentBlocks decodes a message's content: an array of blocks, or a string (one text block).
func contentBlocks(m *struct {
	Content json.RawMessage `json:"content"`
}) ([]block, error) {
	if m == nil {
		return nil, fmt.Errorf("no message")
	}
	c := bytes.TrimSpace(m.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
		return nil, nil
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return nil, err
		}
		return []block{{Type: "text", Text: s}}, nil
	}
	var bs []block
	if err := json.Unmarshal(c, &bs); err != nil {
		return nil, fmt.Errorf("content: %v", err)
	}
	return bs, nil
}

// now returns the time of the line being read (see the package doc), false when there is none.
func (p *Parser) now() (time.Time, bool) {
	if p.st.Time > 0 {
		return time.UnixMilli(p.st.Time).UTC(), true
	}
	if !p.fileTime.IsZero() {
		return p.fileTime, true
	}
	p.stats.CountUnknown("line without a time")
	return time.Time{}, false
}

// begin returns the session events due before a line's own at t: the start, a new title.
func (p *Parser) begin(t time.Time) []event.Event {
	if p.st.Agent != "" {
		return nil // a subagent's file: its parent's file reports the session
	}
	var evs []event.Event
	if !p.st.Started {
		p.st.Started = true
		start := t
		if !p.meta.Created.IsZero() {
			start = p.meta.Created
		}
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), start)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, StartedAt: start}
		evs = append(evs, ev)
	}
	if title, ok := event.CleanTitle(p.meta.Title); ok && title != "New Agent" && transcript.TextHash(title) != p.st.Title {
		p.st.Title = transcript.TextHash(title)
		at := t
		if !p.meta.Updated.IsZero() {
			at = p.meta.Updated
		}
		ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), at)
		ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: p.src.Path}
		evs = append(evs, ev)
	}
	return evs
}

// user reads a user line: the prompt (a subagent's task in a subagent's file).
func (p *Parser) user(off int64, blocks []block) []event.Event {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	query, at, timed := userText(strings.Join(parts, "\n"))
	if timed {
		p.st.Time = at.UnixMilli()
	}
	t, ok := p.now()
	if !ok {
		return nil
	}
	evs := p.begin(t)
	if query == "" {
		return evs // a line of a <timestamp> tag alone, or tool results
	}
	key := strconv.FormatInt(off, 10)
	if p.st.Agent == "" {
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, p.st.Agent, "prompt", key), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(query), Transcript: p.src.Path}
		evs = append(evs, ev)
	}
	return append(evs, p.textMessage(event.RoleUser, off, 0, t, query)...)
}

// assistant reads an assistant line: its text, thinking and tool calls.
func (p *Parser) assistant(off int64, blocks []block) []event.Event {
	calls := make([]map[string]any, len(blocks))
	for j := range blocks {
		if blocks[j].Type == "tool_use" {
			_ = json.Unmarshal(blocks[j].Input, &calls[j])
			if p.st.Cwd == "" {
				for _, h := range cwdHints(calls[j]) {
					if d := hintDir(h, p.slug); d != "" {
						p.setCwd(d)
						break
					}
				}
			}
		}
	}
	t, ok := p.now()
	if !ok {
		return nil
	}
	evs := p.begin(t)
	for j := range blocks {
		b := &blocks[j]
		switch b.Type {
		case "text":
			evs = append(evs, p.textMessage(event.RoleAssistant, off, j, t, b.Text)...)
		case "thinking":
			evs = append(evs, p.textMessage(event.RoleThinking, off, j, t, b.Thinking)...)
		case "tool_use":
			name := strings.TrimSpace(b.Name)
			if name == "" {
				p.stats.CountUnknown("tool_use without a name")
				continue
			}
			ty := ToolType(name)
			a := &event.Action{Type: ty, Tool: name, Target: clipTarget(p.target(name, ty, calls[j])), ToolUseID: b.ID,
				InputHash: transcript.InputHash(b.Input), AgentID: p.st.Agent, Sidechain: p.st.Agent != "", Transcript: p.src.Path}
			ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, p.st.Agent, strconv.FormatInt(off, 10), strconv.Itoa(j)), t)
			ev.Action = a
			evs = append(evs, ev, p.message(off, j, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: name, ToolUseID: b.ID}))
		case "tool_result", "image":
		default:
			p.stats.CountUnknown("block " + b.Type)
		}
	}
	return evs
}

// turnEnded reads a turn_ended line: an error or an abort is an action; success nothing.
func (p *Parser) turnEnded(off int64, l *line) []event.Event {
	var ty event.ActionType
	switch strings.ToLower(l.Status) {
	case "success", "completed", "":
		return nil
	case "error", "failed":
		ty = event.ActionAPIError
	case "aborted", "cancelled", "canceled", "interrupted":
		ty = event.ActionTurnAborted
	default:
		p.stats.CountUnknown("turn_ended " + l.Status)
		return nil
	}
	t, ok := p.now()
	if !ok {
		return nil
	}
	evs := p.begin(t)
	msg := errorText(l.Error)
	if msg == "" && ty == event.ActionAPIError {
		msg = "the turn ended in an error"
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, p.st.Agent, "turn", strconv.FormatInt(off, 10)), t)
	ev.Action = &event.Action{Type: ty, Error: clipError(msg), AgentID: p.st.Agent, Sidechain: p.st.Agent != "", Transcript: p.src.Path}
	if ty == event.ActionAPIError {
		f := false
		ev.Action.Success = &f
	}
	return append(evs, ev)
}

// errorText reads a turn's error: a string, or an object's message.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && strings.TrimSpace(o.Message) != "" {
		return strings.TrimSpace(o.Message)
	}
	return string(raw)
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) setCwd(cwd string) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" || p.st.Cwd != "" || !filepath.IsAbs(cwd) {
		return
	}
	p.st.Cwd = filepath.Clean(cwd)
	p.st.Project = project.Root(p.st.Cwd)
}

func (p *Parser) message(off int64, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, p.st.Agent, strconv.FormatInt(off, 10), strconv.Itoa(blk)), t)
	m.Seq = off*64 + int64(min(blk, maxBlock))
	m.AgentID, m.Sidechain = p.st.Agent, p.st.Agent != ""
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, off int64, blk int, t time.Time, text string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(off, blk, t, event.Message{Role: role, Text: text})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }
