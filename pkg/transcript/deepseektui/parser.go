package deepseektui

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

	"github.com/observerhq/observer/pkg/event"
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

// placeholderTitle is the title the client gives a session before its first prompt.
const placeholderTitle = "New Session"

// call is a tool call reported without its result: its id and the time it was given.
type call struct {
	ID string `json:"id"`
	T  int64  `json:"t"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c call) PendingID() string { return c.ID }

// state is what a parser keeps between reads: JSON, small, no transcript text.
type state struct {
	Session string                   `json:"session,omitempty"`
	Started bool                     `json:"started,omitempty"`
	Title   string                   `json:"title,omitempty"` // TextHash of the title reported
	Models  []string                 `json:"models,omitempty"`
	N       int                      `json:"n,omitempty"`  // messages reported
	LK      string                   `json:"lk,omitempty"` // key of the last message reported
	Pending transcript.Pending[call] `json:"pending,omitempty"`
}

// Parser reads one saved session.
type Parser struct {
	src   transcript.Source
	st    state
	stats transcript.Stats
}

var _ transcript.Parser = (*Parser)(nil)

func newParser(src transcript.Source, raw []byte) (*Parser, error) {
	p := &Parser{src: src}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p.st); err != nil {
			return nil, fmt.Errorf("deepseek-tui parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".json"))
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// doc is a saved session, the fields the reader uses.
type doc struct {
	Metadata struct {
		ID        string `json:"id"`
		Title     string `json:"title"`
		CreatedAt string `json:"created_at"`
		UpdatedAt string `json:"updated_at"`
		Model     string `json:"model"`
		Workspace string `json:"workspace"`
	} `json:"metadata"`
	Messages []json.RawMessage `json:"messages"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
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

// Record reads the whole document.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var d doc
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	created, okC := transcript.ParseTime(strings.TrimSpace(d.Metadata.CreatedAt))
	updated, okU := transcript.ParseTime(strings.TrimSpace(d.Metadata.UpdatedAt))
	switch {
	case !okC && !okU:
		return nil, transcript.Malformed(Client, "session %s has no created_at or updated_at", p.st.Session)
	case !okC:
		created = updated
	case !okU || updated.Before(created):
		updated = created
	}
	next := p.st
	next.Models = append([]string(nil), p.st.Models...)
	next.Pending = append([]call(nil), p.st.Pending...)
	s := &session{p: p, d: &d, st: &next, created: created, updated: updated}
	evs = s.read()
	p.st = next
	return evs, nil
}

// session holds what reading one document needs.
type session struct {
	p        *Parser
	d        *doc
	st       *state
	created  time.Time
	updated  time.Time
	cwd      string
	project  string
	model    string
	msgs     []message
	keys     []string
	evs      []event.Event
	calls    map[string]callAt // tool use id -> where the call is
	results  map[string]*block // tool use id -> its result
	resultAt map[string]int    // tool use id -> message index of its result
}

type callAt struct {
	msg, blk int
}

func (s *session) read() []event.Event {
	d := s.d
	transcript.UpdateCwd(&s.cwd, &s.project, d.Metadata.Workspace)
	s.model = transcript.CutRunes(strings.TrimSpace(d.Metadata.Model), 200)
	if !s.st.Started {
		s.st.Started = true
		transcript.NewModel(&s.st.Models, s.model, maxModels)
		ev := s.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), s.st.Session, "started"), s.created)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: s.cwd, TranscriptPath: s.p.src.Path, Model: s.model, StartedAt: s.created}
		s.evs = append(s.evs, ev)
	} else if transcript.NewModel(&s.st.Models, s.model, maxModels) {
		ev := s.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), s.st.Session, "model", s.model), s.updated)
		ev.Session = &event.Session{State: event.SessionActive, Cwd: s.cwd, TranscriptPath: s.p.src.Path, Model: s.model}
		s.evs = append(s.evs, ev)
	}
	if title := strings.TrimSpace(d.Metadata.Title); title != "" && title != placeholderTitle {
		if h := transcript.TextHash(title); h != s.st.Title {
			s.st.Title = h
			ev := s.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), s.st.Session, "title", title), s.updated)
			ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: s.p.src.Path}
			s.evs = append(s.evs, ev)
		}
	}
	s.decode()
	s.messages()
	return s.evs
}

// decode reads the messages, keys them by content, and indexes the calls and results.
func (s *session) decode() {
	s.msgs = make([]message, len(s.d.Messages))
	s.keys = make([]string, len(s.d.Messages))
	s.calls, s.results, s.resultAt = map[string]callAt{}, map[string]*block{}, map[string]int{}
	seen := map[string]int{}
	for i, raw := range s.d.Messages {
		if err := json.Unmarshal(raw, &s.msgs[i]); err != nil {
			s.p.stats.CountUnknown("message that does not decode")
		}
		h := keyOf(raw)
		s.keys[i] = h + "." + strconv.Itoa(seen[h])
		seen[h]++
		for j := range s.msgs[i].Content {
			b := &s.msgs[i].Content[j]
			switch b.Type {
			case "tool_use", "server_tool_use":
				if id := strings.TrimSpace(b.ID); id != "" {
					s.calls[id] = callAt{i, j}
				}
			case "tool_result":
				if id := strings.TrimSpace(b.ToolUseID); id != "" {
					s.results[id], s.resultAt[id] = b, i
				}
			}
		}
	}
}

// from is the first message not reported yet (see the package doc).
func (s *session) from() int {
	n := s.st.N
	switch {
	case n == 0:
		return 0
	case n <= len(s.keys) && s.keys[n-1] == s.st.LK:
		return n
	}
	for i := len(s.keys) - 1; i >= 0; i-- {
		if s.keys[i] == s.st.LK {
			return i + 1
		}
	}
	return 0
}

// timeOf is the time a message first read now is given.
func (s *session) timeOf(i int) time.Time {
	if s.st.N == 0 && i == 0 {
		return s.created
	}
	return s.updated
}

func (s *session) messages() {
	from := s.from()
	for i := from; i < len(s.msgs); i++ {
		s.message(i)
	}
	// Results of calls reported before: the calls again, with their outcome, at their time.
	for i := from; i < len(s.msgs); i++ {
		for j := range s.msgs[i].Content {
			b := &s.msgs[i].Content[j]
			if b.Type != "tool_result" {
				continue
			}
			id := strings.TrimSpace(b.ToolUseID)
			at, ok := s.calls[id]
			if !ok || at.msg >= from {
				continue
			}
			t := s.timeOf(i)
			if c, ok := s.st.Pending.Take(id); ok {
				t = time.Unix(0, c.T).UTC()
			}
			s.evs = append(s.evs, s.action(&s.msgs[at.msg].Content[at.blk], t))
		}
	}
	s.st.N = len(s.msgs)
	s.st.LK = ""
	if n := len(s.keys); n > 0 {
		s.st.LK = s.keys[n-1]
	}
}

func (s *session) message(i int) {
	m := &s.msgs[i]
	at := s.timeOf(i)
	key := s.keys[i]
	switch m.Role {
	case "user":
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
		text := strings.TrimSpace(strings.Join(parts, "\n"))
		if text == "" {
			return
		}
		ev := s.newEvent(event.KindAction, event.ID(Client, "prompt", s.st.Session, key), at)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), MessageID: key, Transcript: s.p.src.Path}
		s.evs = append(s.evs, ev)
		s.textMessage(i, 0, at, event.RoleUser, text, key, "")
	case "assistant":
		for j := range m.Content {
			b := &m.Content[j]
			switch b.Type {
			case "text":
				s.textMessage(i, j, at, event.RoleAssistant, b.Text, key, s.model)
			case "thinking":
				s.textMessage(i, j, at, event.RoleThinking, b.Thinking, key, s.model)
			case "tool_use", "server_tool_use":
				id := strings.TrimSpace(b.ID)
				if id == "" && strings.TrimSpace(b.Name) == "" {
					continue
				}
				act := s.action(b, at)
				if _, done := s.results[id]; !done && id != "" {
					s.st.Pending.Add(call{ID: id, T: at.UnixNano()}, maxPending) // keeps the time it was first given
				}
				s.evs = append(s.evs, act, s.messageEvent(i, j, at, key, event.Message{Role: event.RoleToolCall,
					Text: act.Action.Target, Tool: act.Action.Tool, ToolUseID: act.Action.ToolUseID, MessageID: key, Model: s.model}))
			}
		}
	case "system":
	default:
		s.p.stats.CountUnknown("role " + transcript.CutBytes(m.Role, 32))
	}
}

// action is a tool call's action at t, with its result's outcome when the document has it.
func (s *session) action(b *block, t time.Time) event.Event {
	id := transcript.CutBytes(strings.TrimSpace(b.ID), 200)
	name := transcript.CutRunes(strings.TrimSpace(b.Name), 200)
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := toolOf(name, in, s.relPath)
	a := &event.Action{Type: ty, Tool: name, Target: clipTarget(target), ToolUseID: id, Model: s.model,
		InputHash: transcript.InputHash(b.Input), Transcript: s.p.src.Path}
	if res, ok := s.results[strings.TrimSpace(b.ID)]; ok {
		out := resultText(res.Content)
		okay := !res.IsError
		a.Success = &okay
		a.OutputSize = int64(len(out))
		a.Output = transcript.Clip(out, maxOutput)
		if res.IsError {
			a.Error = transcript.Clip(transcript.FirstNonEmpty(out, "tool failed"), maxError)
		}
	}
	ev := s.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), s.st.Session, transcript.FirstNonEmpty(id, name)), t)
	ev.Action = a
	return ev
}

// resultText reads a tool_result's content: a string (the client's), else text blocks.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
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
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		return strings.Join(parts, "\n")
	}
	return string(raw)
}

func (s *session) textMessage(i, j int, at time.Time, role, text, key, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	s.evs = append(s.evs, s.messageEvent(i, j, at, key, event.Message{Role: role, Text: text, MessageID: key, Model: model}))
}

func (s *session) messageEvent(i, j int, at time.Time, key string, m event.Message) event.Event {
	id := event.ID(Client, string(event.KindMessage), s.st.Session, key, strconv.Itoa(j))
	if m.Role == event.RoleToolCall && m.ToolUseID != "" {
		id = event.ID(Client, string(event.KindMessage), "tool_use", s.st.Session, m.ToolUseID)
	}
	ev := s.newEvent(event.KindMessage, id, at)
	m.Seq = int64(i)*64 + int64(min(j, maxBlock))
	ev.Message = &m
	return ev
}

func (s *session) relPath(file string) string { return transcript.RelPath(file, s.cwd, s.project) }

func (s *session) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: s.st.Session, Project: s.project, V: event.SchemaVersion}
}

// keyOf hashes a message's JSON without its layout (the client indents it by its depth in the
// document): the client writes a message the same way each time it saves the session.
func keyOf(raw []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		raw = buf.Bytes()
	}
	h := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(h[:12])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }
