package droid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxPending = 128 // tool calls waiting for their result
	maxModels  = 16
	maxBlock   = 63
)

// sessionState is what a session parser keeps between reads: JSON, small.
type sessionState struct {
	Session string                   `json:"session,omitempty"`
	Cwd     string                   `json:"cwd,omitempty"`
	Project string                   `json:"project,omitempty"`
	Started bool                     `json:"started,omitempty"`
	Title   transcript.Memo          `json:"title,omitempty"` // the title, until the start is told
	Models  []string                 `json:"models,omitempty"`
	Pending transcript.Pending[call] `json:"pending,omitempty"`
	Line    int64                    `json:"line,omitempty"` // lines read: a message's place
	Last    int64                    `json:"last,omitempty"` // unix ms of the last timed line
}

// call is a tool call waiting for its result.
type call struct {
	ID     string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool"`
	Target transcript.Memo  `json:"target,omitempty"` // no text in State: a reference (transcript.Memo)
	Msg    string           `json:"msg,omitempty"`
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"time"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c call) PendingID() string { return c.ID }

// sessionParser reads one session file.
type sessionParser struct {
	src   transcript.Source
	st    sessionState
	stats transcript.Stats
}

func newSessionParser(src transcript.Source, state []byte) (*sessionParser, error) {
	p := &sessionParser{src: src}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &p.st); err != nil {
			return nil, fmt.Errorf("droid parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
	}
	return p, nil
}

func (p *sessionParser) State() []byte           { return transcript.MarshalState(p.st) }
func (p *sessionParser) Stats() transcript.Stats { return p.stats.Clone() }

type line struct {
	Type      string       `json:"type"`
	ID        string       `json:"id"`
	Title     string       `json:"title"`
	Cwd       string       `json:"cwd"`
	Timestamp string       `json:"timestamp"`
	Message   *lineMessage `json:"message"`
	Reason    string       `json:"reason"`
	TurnID    string       `json:"turnId"`
}

type lineMessage struct {
	Role            string  `json:"role"`
	Visibility      string  `json:"visibility"`
	Content         []block `json:"content"`
	OpenAIMessageID string  `json:"openaiMessageId"`
	ModelID         string  `json:"modelId"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// Record reads one line of a session file.
func (p *sessionParser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, transcript.Malformed(Client, "session line: %v", err)
	}
	p.st.Line++
	n := int(p.st.Line)
	t := time.UnixMilli(p.st.Last).UTC()
	if ts, ok := transcript.ParseTime(l.Timestamp); ok {
		t = ts
		p.st.Last = ts.UnixMilli()
	}
	switch l.Type {
	case "session_start":
		transcript.SetCwd(&p.st.Cwd, &p.st.Project, l.Cwd)
		if title := strings.TrimSpace(l.Title); title != "" && !p.st.Started {
			p.st.Title = transcript.Memo(transcript.ClipTarget(title, maxTarget)) // told with the start, which has a time
		}
		return nil, nil
	case "message":
		if l.Message == nil || p.st.Last == 0 {
			return nil, nil
		}
		if !p.st.Started {
			p.st.Started = true
			ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), t)
			ev.Session = &event.Session{State: event.SessionStarted, StartedAt: t, Cwd: p.st.Cwd, TranscriptPath: p.src.Path}
			evs = append(evs, ev)
			if title := string(p.st.Title); title != "" {
				ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), t)
				ev.Session = &event.Session{Title: title, TranscriptPath: p.src.Path}
				evs = append(evs, ev)
				p.st.Title = ""
			}
		}
		return append(evs, p.message(n, &l, t)...), nil
	case "agent_turn_outcome", "compaction_state", "todo_state":
		return nil, nil
	}
	p.stats.CountUnknown(l.Type)
	return nil, nil
}

func (p *sessionParser) message(n int, l *line, t time.Time) []event.Event {
	m := l.Message
	key := transcript.FirstNonEmpty(l.ID, strconv.Itoa(n))
	var evs []event.Event
	switch m.Role {
	case "user":
		if strings.HasPrefix(l.ID, "context-") || m.Visibility == "llm_only" {
			return nil
		}
		var parts []string
		for i := range m.Content {
			b := &m.Content[i]
			switch b.Type {
			case "text":
				if txt := strings.TrimSpace(b.Text); txt != "" && !strings.HasPrefix(txt, "<system-reminder>") {
					parts = append(parts, txt)
				}
			case "tool_result":
				evs = append(evs, p.result(b, t))
			}
		}
		if prompt := strings.Join(parts, "\n"); prompt != "" {
			ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
			ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(prompt, maxTarget), MessageID: key, Transcript: p.src.Path}
			evs = append(evs, ev)
			evs = append(evs, p.text(event.RoleUser, n, 0, t, prompt, key, "")...)
		}
	case "assistant":
		model := strings.TrimSpace(m.ModelID)
		if transcript.NewModel(&p.st.Models, model, maxModels) {
			ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "model\x00"+model), t)
			ev.Session = &event.Session{State: event.SessionActive, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
			evs = append(evs, ev)
		}
		msgID := transcript.FirstNonEmpty(m.OpenAIMessageID, key)
		for j := range m.Content {
			b := &m.Content[j]
			switch b.Type {
			case "text":
				evs = append(evs, p.text(event.RoleAssistant, n, j, t, b.Text, msgID, model)...)
			case "thinking":
				evs = append(evs, p.text(event.RoleThinking, n, j, t, transcript.FirstNonEmpty(b.Thinking, b.Text), msgID, model)...)
			case "tool_use":
				if b.ID == "" {
					continue
				}
				ev := p.call(b, msgID, model, t)
				evs = append(evs, ev, p.msg(n, j, t, event.Message{Role: event.RoleToolCall, Text: ev.Action.Target,
					Tool: b.Name, ToolUseID: b.ID, MessageID: msgID, Model: model}))
			}
		}
	default:
		p.stats.CountUnknown("role " + m.Role)
	}
	return evs
}

func (p *sessionParser) call(b *block, msgID, model string, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := p.toolOf(b.Name, in)
	a := &event.Action{Type: ty, Tool: b.Name, Target: transcript.ClipTarget(target, maxTarget), ToolUseID: b.ID,
		MessageID: msgID, Model: model, InputHash: transcript.InputHash(b.Input), Transcript: p.src.Path}
	p.st.Pending.Renew(call{ID: b.ID, Type: ty, Tool: b.Name, Target: transcript.Memo(a.Target), Msg: msgID, Model: model, Time: t.UnixMilli()}, maxPending)
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, b.ID), t)
	ev.Action = a
	return ev
}

// result is a tool result: its call's action again, with the outcome.
func (p *sessionParser) result(b *block, t time.Time) event.Event {
	a := &event.Action{ToolUseID: b.ToolUseID, Transcript: p.src.Path}
	start := t
	if c, ok := p.st.Pending.Take(b.ToolUseID); ok {
		a.Type, a.Tool, a.Target, a.MessageID, a.Model = c.Type, c.Tool, string(c.Target), c.Msg, c.Model
		start = time.UnixMilli(c.Time).UTC()
		if d := t.Sub(start); d > 0 {
			a.DurationMs = d.Milliseconds()
		}
	} else {
		a.Type = event.ActionUnknown
	}
	out := resultText(b.Content)
	ok := !b.IsError
	a.Success = &ok
	a.Output, a.OutputSize = transcript.Clip(out, maxOutput), int64(len(out))
	if b.IsError {
		a.Error = transcript.Clip(strings.TrimSpace(out), maxError)
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, b.ToolUseID), start)
	ev.Action = a
	return ev
}

// resultText is a tool result's text: a string, or the text blocks of an array.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

// toolOf maps a tool call to its action type and target.
func (p *sessionParser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "Read":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "file_path", "path"))
	case "Create":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "file_path", "path"))
	case "Edit", "MultiEdit":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "file_path", "path"))
	case "ApplyPatch":
		return event.ActionEditFile, p.relPath(patchFile(transcript.Arg(in, "input", "patch")))
	case "Execute":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "LS":
		return event.ActionSearchFiles, p.relPath(transcript.Arg(in, "directory_path", "path"))
	case "Glob":
		target := transcript.Arg(in, "folder")
		if pats, ok := in["patterns"].([]any); ok && len(pats) > 0 {
			if s, ok := pats[0].(string); ok {
				target = s
			}
		}
		return event.ActionSearchFiles, target
	case "Grep":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "FetchUrl":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "WebSearch":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "Task":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "subagent_type", "prompt")
	case "TodoWrite":
		return event.ActionTodoUpdate, ""
	case "AskUser":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	if server, tool, ok := strings.Cut(name, "___"); ok && server != "" && tool != "" {
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

// patchFile is the first file an apply_patch input names.
func patchFile(patch string) string {
	for _, l := range strings.SplitN(patch, "\n", 64) {
		for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
			if f, ok := strings.CutPrefix(strings.TrimSpace(l), pre); ok {
				return strings.TrimSpace(f)
			}
		}
	}
	return ""
}

func (p *sessionParser) msg(record, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, strconv.Itoa(record), strconv.Itoa(blk)), t)
	m.Seq = int64(record)*64 + int64(min(blk, maxBlock))
	ev.Message = &m
	return ev
}

func (p *sessionParser) text(role string, record, blk int, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.msg(record, blk, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

func (p *sessionParser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *sessionParser) relPath(file string) string {
	return transcript.RelPath(file, p.st.Cwd, p.st.Project)
}
