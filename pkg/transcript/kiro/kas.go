package kiro

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// KAS store file names: a session is a directory <bucket>/<id>/ holding both.
const (
	kasMessages = "messages.jsonl"
	kasMeta     = "session.json"
)

// maxMetaTries bounds how often a line reader looks for a session's metadata file that is not
// there (yet).
const maxMetaTries = 3

// lineState is what a line reader (the KAS store's messages.jsonl, the v2 log) keeps between
// reads: JSON, small, no text (targets are memos).
type lineState struct {
	Session string `json:"session,omitempty"`
	Agent   string `json:"agent,omitempty"`
	Parent  string `json:"parent,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Meta    int    `json:"meta,omitempty"` // 1: the metadata was read; below 0: tries that found none
	Created int64  `json:"created,omitempty"`
	Model   string `json:"model,omitempty"` // the session's model, from its metadata
	Started bool   `json:"started,omitempty"`
	// Prompted: a prompt was read (a subagent's first is its task, not a prompt).
	Prompted bool                        `json:"prompted,omitempty"`
	Models   []string                    `json:"models,omitempty"`
	Last     int64                       `json:"t,omitempty"` // unix ms of the last time read
	Pending  transcript.Pending[pending] `json:"pending,omitempty"`
}

// lineParser is the part the two line readers share.
type lineParser struct {
	src   transcript.Source
	st    lineState
	stats transcript.Stats
	sc    scope
}

func (p *lineParser) load(raw []byte) error {
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p.st); err != nil {
			return err
		}
	}
	p.sc = scope{path: p.src.Path, session: p.st.Session, agent: p.st.Agent, cwd: p.st.Cwd, project: p.st.Project}
	return nil
}

// State returns the parser's state as JSON.
func (p *lineParser) State() []byte {
	p.st.Session, p.st.Agent, p.st.Cwd, p.st.Project = p.sc.session, p.sc.agent, p.sc.cwd, p.sc.project
	return transcript.MarshalState(p.st)
}

// Stats counts what the parser saw.
func (p *lineParser) Stats() transcript.Stats { return p.stats.Clone() }

// at is a record's time: its own, else the last one read, else the session's creation, else
// false (the record waits for nothing: it is read without events).
func (p *lineParser) at(t time.Time, ok bool) (time.Time, bool) {
	if ok {
		if ms := t.UnixMilli(); ms > p.st.Last {
			p.st.Last = ms
		}
		return t, true
	}
	if p.st.Last > 0 {
		return time.UnixMilli(p.st.Last).UTC(), true
	}
	if p.st.Created > 0 {
		return time.UnixMilli(p.st.Created).UTC(), true
	}
	return time.Time{}, false
}

// begin reports the session's start (and title and model) before its first events.
func (p *lineParser) begin(t time.Time, title string) []event.Event {
	if p.st.Started {
		return nil
	}
	p.st.Started = true
	if p.sc.agent != "" {
		return nil
	}
	start := t
	if p.st.Created > 0 && p.st.Created < t.UnixMilli() {
		start = time.UnixMilli(p.st.Created).UTC()
	}
	evs := []event.Event{p.sc.sessionEvent(event.SessionStarted, "", p.st.Parent, start)}
	if title = strings.TrimSpace(title); title != "" {
		evs = append(evs, p.sc.titleEvent(title, start))
	}
	return append(evs, p.sc.modelEvent(&p.st.Models, p.st.Model, start)...)
}

// decodeLine reads a line as JSON into v: ErrMalformed when it is not UTF-8 or does not parse.
func decodeLine(path string, off int64, line []byte, v any) error {
	if !utf8.Valid(line) {
		return transcript.Malformed(Client, "%s: line at %d is not UTF-8", path, off)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return transcript.Malformed(Client, "%s: line at %d does not parse: %v", path, off, err)
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// The KAS store: <root>/sessions/<bucket>/<id>/messages.jsonl

// kasParser reads a KAS session's messages.jsonl.
type kasParser struct {
	lineParser
	title string // from session.json, read once per parser
}

func newKASParser(src transcript.Source, st []byte) (*kasParser, error) {
	p := &kasParser{lineParser: lineParser{src: src}}
	if err := p.load(st); err != nil {
		return nil, err
	}
	if p.sc.session == "" {
		p.sc.session = transcript.FirstNonEmpty(src.SessionID, filepath.Base(filepath.Dir(src.Path)))
	}
	return p, nil
}

type kasMetaFile struct {
	ID              string          `json:"id"`
	Title           string          `json:"title"`
	WorkspacePaths  []string        `json:"workspacePaths"`
	CreatedAt       json.RawMessage `json:"createdAt"`
	ModelID         string          `json:"modelId"`
	ParentSessionID string          `json:"parentSessionId"`
}

// readMeta reads the session's session.json (a few tries while it is missing, and again by a
// resumed parser until the session's first events, for its title): the id, the parent, the
// workspace, the creation time, the model and the title.
func (p *kasParser) readMeta() {
	if (p.st.Meta > 0 && (p.st.Started || p.title != "")) || p.st.Meta <= -maxMetaTries {
		return
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(p.src.Path), kasMeta))
	var m kasMetaFile
	if err != nil || json.Unmarshal(data, &m) != nil {
		p.st.Meta = min(p.st.Meta, 0) - 1
		return
	}
	p.st.Meta = 1
	if id := strings.TrimSpace(m.ID); id != "" && !p.st.Started && p.sc.agent == "" {
		p.sc.session = id
	}
	if parent := strings.TrimSpace(m.ParentSessionID); parent != "" && parent != p.sc.session && !p.st.Started {
		p.st.Parent, p.sc.agent, p.sc.session = parent, p.sc.session, parent
	}
	if len(m.WorkspacePaths) > 0 {
		p.sc.setCwd(m.WorkspacePaths[0])
	}
	if t, ok := anyTime(m.CreatedAt); ok {
		p.st.Created = t.UnixMilli()
	}
	p.st.Model = strings.TrimSpace(m.ModelID)
	p.title = m.Title
}

type kasLine struct {
	ID        string          `json:"id"`
	Timestamp json.RawMessage `json:"timestamp"`
	Payload   *kasPayload     `json:"payload"`
}

type kasPayload struct {
	Type             string          `json:"type"`
	Content          json.RawMessage `json:"content"`
	MessageID        string          `json:"messageId"`
	OperationType    string          `json:"operationType"`
	ReasoningModelID string          `json:"reasoningModelId"`
	ModelID          string          `json:"modelId"`
	ToolCallID       string          `json:"toolCallId"`
	ToolName         string          `json:"toolName"`
	Args             json.RawMessage `json:"args"`
	Success          *bool           `json:"success"`
	Message          string          `json:"message"`
	Error            json.RawMessage `json:"error"`
}

// kasKnown are the payload types that make no event.
var kasKnown = map[string]bool{"usage_summary": true, "session_metadata": true, "turn_start": true, "turn_end": true,
	"tombstone": true, "system": true, "agent_note": true}

// Record reads one line of messages.jsonl.
func (p *kasParser) Record(off int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	var l kasLine
	if err := decodeLine(p.src.Path, off, line, &l); err != nil {
		return nil, err
	}
	if l.Payload == nil {
		return nil, transcript.Malformed(Client, "%s: line at %d has no payload", p.src.Path, off)
	}
	pl := l.Payload
	if kasKnown[pl.Type] {
		return nil, nil
	}
	p.readMeta()
	lt, ok := anyTime(l.Timestamp)
	t, ok := p.at(lt, ok)
	if !ok {
		p.stats.CountUnknown("no time")
		return nil, nil
	}
	key := keyOf(transcript.FirstNonEmpty(l.ID, pl.MessageID))
	if key == "" {
		key = "@" + itoa(off)
	}
	msgID := keyOf(pl.MessageID)
	seq := off * 64
	model := transcript.FirstNonEmpty(pl.ReasoningModelID, pl.ModelID, p.st.Model)
	switch pl.Type {
	case "session_start", "user":
		text := contentText(pl.Content)
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		evs = p.begin(t, p.title)
		task := p.sc.agent != "" && !p.st.Prompted
		p.st.Prompted = true
		evs = append(evs, p.sc.prompt(key, seq, t, text, msgID, task)...)
	case "assistant":
		evs = p.begin(t, p.title)
		evs = append(evs, p.sc.modelEvent(&p.st.Models, model, t)...)
		role := event.RoleAssistant
		if strings.EqualFold(pl.OperationType, "Reasoning") {
			role = event.RoleThinking
		}
		evs = append(evs, p.sc.textMessage(role, key, 0, seq, t, contentText(pl.Content), msgID, model)...)
	case "tool_call":
		if pl.ToolCallID == "" {
			return nil, transcript.Malformed(Client, "%s: tool_call at %d has no toolCallId", p.src.Path, off)
		}
		evs = p.begin(t, p.title)
		c := &call{ID: pl.ToolCallID, Name: pl.ToolName, Input: pl.Args, Msg: msgID, Model: model}
		ev := p.sc.action(c, t)
		p.st.Pending.Renew(pending{ID: c.ID, Type: ev.Action.Type, Tool: c.Name, Target: transcript.Memo(ev.Action.Target),
			Msg: c.Msg, Model: c.Model}, maxPending)
		evs = append(evs, ev, p.sc.callMessage(c, key, 0, seq, t, ev.Action.Target))
	case "tool_result":
		if pl.ToolCallID == "" {
			return nil, transcript.Malformed(Client, "%s: tool_result at %d has no toolCallId", p.src.Path, off)
		}
		out, failed, stderr := resultText(pl.Content)
		r := &result{Known: true, OK: !failed, Output: out, Size: int64(len(out))}
		if pl.Success != nil && !*pl.Success {
			r.OK = false
		}
		if !r.OK {
			r.Error = transcript.FirstNonEmpty(errText(pl.Error), stderr, out)
		}
		evs = append(evs, p.sc.resultEvent(&p.st.Pending, pl.ToolCallID, pl.ToolName, r, t))
	case "error":
		msg := transcript.FirstNonEmpty(pl.Message, errText(pl.Error), contentText(pl.Content))
		ev := p.sc.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.sc.owner(), "error", key), t)
		ev.Action = &event.Action{Type: event.ActionAPIError, Error: clipError(msg), AgentID: p.sc.agent, Model: model,
			Transcript: p.src.Path}
		evs = append(p.begin(t, p.title), ev)
	default:
		p.stats.CountUnknown("payload " + pl.Type)
	}
	return evs, nil
}

// contentText reads a payload's content: a string, or a list of {type: "text", text} entries,
// or anything else as its JSON.
func contentText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			if p.Text != "" && (p.Type == "" || p.Type == "text") {
				out = append(out, p.Text)
			}
		}
		return strings.Join(out, "\n")
	}
	return string(raw)
}

// errText reads an error written as a string or as {message}.
func errText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Message
}
