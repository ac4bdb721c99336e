package cortex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
	maxSeen    = 1024
	maxBlock   = 63
	maxMeta    = 32 << 20 // the largest document a companion reads for its session's metadata
)

// placeholderTitle starts the title Cortex gives a session before it has one.
const placeholderTitle = "Chat for session:"

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string `json:"session,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	Started bool   `json:"started,omitempty"`
	// Meta is set once a companion read its document's metadata (or found none).
	Meta bool `json:"meta,omitempty"`
	// N counts a companion's messages read; Last is the last time seen (unix ms).
	N    int64 `json:"n,omitempty"`
	Last int64 `json:"last,omitempty"`
	// Seen holds the fingerprints of a document's events emitted lately.
	Seen []string `json:"seen,omitempty"`
}

// Parser reads one session document or one companion file.
type Parser struct {
	src       transcript.Source
	companion bool
	st        state
	emitted   transcript.Emitted
	stats     transcript.Stats
}

func newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src, companion: !src.Document && strings.HasSuffix(src.Path, historySuffix)}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("cortex-code parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// meta is a session document's metadata.
type meta struct {
	SessionID        string `json:"session_id"`
	Title            string `json:"title"`
	WorkingDirectory string `json:"working_directory"`
	GitRoot          string `json:"git_root"`
	GitBranch        string `json:"git_branch"`
	CreatedAt        string `json:"created_at"`
	LastUpdated      string `json:"last_updated"`
}

type document struct {
	meta
	History []message `json:"history"`
}

type message struct {
	Role         string  `json:"role"`
	ID           string  `json:"id"`
	UserSentTime string  `json:"user_sent_time"`
	Content      []block `json:"content"`
}

type block struct {
	Type         string `json:"type"`
	Text         string `json:"text"`
	Thinking     string `json:"thinking"`
	InternalOnly bool   `json:"internalOnly"`
	ToolUse      *struct {
		ID    string          `json:"tool_use_id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"tool_use"`
	ToolResult *toolResult `json:"tool_result"`
}

type toolResult struct {
	ID      string  `json:"tool_use_id"`
	Name    string  `json:"name"`
	Status  string  `json:"status"`
	Content []block `json:"content"`
}

// Record reads the whole document, or one line of a companion file.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	if p.companion {
		return p.line(raw)
	}
	var d document
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.document(&d), &p.st.Seen, maxSeen), nil
}

func (p *Parser) document(d *document) []event.Event {
	p.setSession(d.SessionID)
	transcript.SetCwd(&p.st.Cwd, &p.st.Project, transcript.FirstNonEmpty(d.WorkingDirectory, d.GitRoot))
	start, ok := transcript.ParseTime(d.CreatedAt)
	if !ok {
		start, _ = transcript.ParseTime(d.LastUpdated)
	}
	var evs []event.Event
	if !start.IsZero() {
		evs = append(evs, p.startEvents(start, d.GitBranch)...)
		if title := strings.TrimSpace(d.Title); title != "" && !strings.HasPrefix(title, placeholderTitle) {
			ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), start)
			ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: p.src.Path}
			evs = append(evs, ev)
		}
	}
	results := map[string]*toolResult{}
	for i := range d.History {
		for j := range d.History[i].Content {
			if r := d.History[i].Content[j].ToolResult; r != nil && r.ID != "" {
				results[r.ID] = r
			}
		}
	}
	t := start
	for i := range d.History {
		m := &d.History[i]
		if ts, ok := transcript.ParseTime(m.UserSentTime); ok {
			t = ts
		}
		if t.IsZero() {
			continue // no time for it yet: a document without created_at whose first messages have none
		}
		evs = append(evs, p.message(int64(i), m, t, results)...)
	}
	return evs
}

// line reads one message of a companion file.
func (p *Parser) line(raw []byte) ([]event.Event, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if !utf8.Valid(raw) || raw[0] != '{' {
		return nil, transcript.Malformed(Client, "history line is not a JSON object")
	}
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, transcript.Malformed(Client, "history line does not decode: %v", err)
	}
	var evs []event.Event
	if !p.st.Meta {
		p.st.Meta = true
		evs = append(evs, p.readMeta()...)
	}
	if m.Role != "user" && m.Role != "assistant" {
		p.stats.CountUnknown("role " + m.Role)
		return evs, nil
	}
	i := p.st.N
	p.st.N++
	if ts, ok := transcript.ParseTime(m.UserSentTime); ok {
		p.st.Last = ts.UnixMilli()
	}
	if p.st.Last == 0 {
		p.st.Last = fileTime(p.src.Path).UnixMilli()
	}
	return append(evs, p.message(i, &m, time.UnixMilli(p.st.Last).UTC(), nil)...), nil
}

// readMeta reads a companion's session document once, for the session's start, directory and
// time; a missing or unreadable document gives nothing (the session id is the file name's).
func (p *Parser) readMeta() []event.Event {
	p.setSession("")
	path := strings.TrimSuffix(p.src.Path, historySuffix) + ".json"
	fi, err := os.Stat(path)
	if err != nil || fi.Size() > maxMeta {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m meta
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	p.setSession(m.SessionID)
	transcript.SetCwd(&p.st.Cwd, &p.st.Project, transcript.FirstNonEmpty(m.WorkingDirectory, m.GitRoot))
	start, ok := transcript.ParseTime(m.CreatedAt)
	if !ok {
		if start, ok = transcript.ParseTime(m.LastUpdated); !ok {
			return nil
		}
	}
	if p.st.Last == 0 {
		p.st.Last = start.UnixMilli()
	}
	return p.startEvents(start, m.GitBranch)
}

func fileTime(path string) time.Time {
	if fi, err := os.Stat(path); err == nil {
		return fi.ModTime().UTC()
	}
	return time.Now().UTC()
}

// message reads one message at index i: results pairs a document's calls with their results; a
// companion (results nil) emits each result as it comes, under its call's id.
func (p *Parser) message(i int64, m *message, t time.Time, results map[string]*toolResult) []event.Event {
	key := transcript.FirstNonEmpty(m.ID, strconv.FormatInt(i, 10))
	var evs []event.Event
	switch m.Role {
	case "user":
		var parts []string
		for _, b := range m.Content {
			if b.Type == "text" && !internal(&b) && strings.TrimSpace(b.Text) != "" {
				parts = append(parts, strings.TrimSpace(b.Text))
			}
		}
		if prompt := strings.Join(parts, "\n"); prompt != "" {
			ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
			ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: p.src.Path}
			evs = append(evs, ev)
			evs = append(evs, p.textMessage(event.RoleUser, i, 0, t, prompt, key)...)
		}
		if results == nil {
			for j := range m.Content {
				if r := m.Content[j].ToolResult; m.Content[j].Type == "tool_result" && r != nil && r.ID != "" {
					ev := p.newEvent(event.KindAction, p.actionID(r.ID), t)
					ty, _ := p.toolOf(r.Name, nil)
					ev.Action = &event.Action{Type: ty, Tool: r.Name, ToolUseID: r.ID, Transcript: p.src.Path}
					applyResult(ev.Action, r)
					evs = append(evs, ev)
				}
			}
		}
	case "assistant":
		for j := range m.Content {
			b := &m.Content[j]
			switch b.Type {
			case "text":
				if !internal(b) {
					evs = append(evs, p.textMessage(event.RoleAssistant, i, j, t, b.Text, key)...)
				}
			case "thinking":
				evs = append(evs, p.textMessage(event.RoleThinking, i, j, t, transcript.FirstNonEmpty(b.Thinking, b.Text), key)...)
			case "tool_use":
				if b.ToolUse == nil || b.ToolUse.ID == "" {
					continue
				}
				var in map[string]any
				_ = json.Unmarshal(b.ToolUse.Input, &in)
				ty, target := p.toolOf(b.ToolUse.Name, in)
				a := &event.Action{Type: ty, Tool: b.ToolUse.Name, Target: clipTarget(target), ToolUseID: b.ToolUse.ID,
					MessageID: key, InputHash: transcript.InputHash(b.ToolUse.Input), Transcript: p.src.Path}
				if r := results[b.ToolUse.ID]; r != nil {
					applyResult(a, r)
				}
				ev := p.newEvent(event.KindAction, p.actionID(b.ToolUse.ID), t)
				ev.Action = a
				evs = append(evs, ev, p.newMessage(i, j, t, event.Message{Role: event.RoleToolCall, Text: a.Target,
					Tool: b.ToolUse.Name, ToolUseID: b.ToolUse.ID, MessageID: key}))
			}
		}
	}
	return evs
}

// internal reports a block Cortex injected: internalOnly, or a <system-reminder>.
func internal(b *block) bool {
	return b.InternalOnly || strings.Contains(b.Text, "<system-reminder>")
}

// applyResult sets a call's outcome from its result (see the package doc).
func applyResult(a *event.Action, r *toolResult) {
	var parts []string
	for _, c := range r.Content {
		if s := transcript.FirstNonEmpty(c.Text); s != "" {
			parts = append(parts, c.Text)
		}
	}
	out := strings.Join(parts, "\n")
	var ok bool
	switch strings.ToLower(strings.TrimSpace(r.Status)) {
	case "success", "succeeded", "ok", "completed", "done":
		ok = true
	case "error", "errored", "failed", "failure", "denied", "rejected", "cancelled", "canceled":
		ok = false
	default:
		return
	}
	a.Success = &ok
	if !ok {
		a.Error = clipError(transcript.FirstNonEmpty(out, r.Status))
	}
	a.Output = clipOutput(out)
	a.OutputSize = int64(len(out))
}

// toolOf maps a tool call to its action type and target (see the package doc).
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "read", "read_file", "view":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "file_path", "path", "filePath"))
	case "write", "write_file", "create_file":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "file_path", "path", "filePath"))
	case "edit", "multi_edit", "multiedit", "edit_file", "str_replace":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "file_path", "path", "filePath"))
	case "bash", "shell", "run_command", "execute_command":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "grep", "search":
		return event.ActionSearchText, p.in(transcript.Arg(in, "pattern", "query"), transcript.Arg(in, "path"))
	case "glob", "ls", "list_directory":
		return event.ActionSearchFiles, p.in(transcript.Arg(in, "pattern"), transcript.Arg(in, "path"))
	case "web_fetch", "fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "task", "agent", "subagent":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "prompt")
	case "todo_write", "todowrite", "todo":
		return event.ActionTodoUpdate, ""
	case "ask_user", "ask_user_question", "askuserquestion":
		return event.ActionAskUser, transcript.Arg(in, "question")
	case "snowflake_sql_execute", "execute_sql":
		q, _, _ := strings.Cut(transcript.Arg(in, "query", "sql"), "\n")
		return event.ActionUnknown, q
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

// in is a search's target: the pattern, with " in <path>" when a path is given.
func (p *Parser) in(pattern, dir string) string {
	if dir == "" {
		return pattern
	}
	return pattern + " in " + p.relPath(dir)
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) setSession(doc string) {
	if p.st.Session == "" {
		id, _, _ := sessionOf(filepath.Base(p.src.Path))
		p.st.Session = transcript.FirstNonEmpty(p.src.SessionID, id, doc)
	}
}

func (p *Parser) startEvents(t time.Time, branch string) []event.Event {
	if p.st.Started {
		return nil
	}
	p.st.Started = true
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, TranscriptPath: p.src.Path,
		GitBranch: transcript.ClipTarget(branch, maxTarget), StartedAt: t}
	return []event.Event{ev}
}

func (p *Parser) actionID(toolUseID string) string {
	return event.ID(Client, string(event.KindAction), p.st.Session, toolUseID)
}

func (p *Parser) newMessage(record int64, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, m.MessageID, strconv.Itoa(blk)), t)
	m.Seq = record*64 + int64(min(blk, maxBlock))
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, record int64, blk int, t time.Time, text, key string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.newMessage(record, blk, t, event.Message{Role: role, Text: text, MessageID: key})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
