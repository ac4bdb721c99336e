package amp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
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
	maxModels  = 16
	maxBlock   = 63
)

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Models  []string `json:"models,omitempty"`
	Seen    []string `json:"seen,omitempty"`
}

// Parser reads one thread.
type Parser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	st      state
	emitted transcript.Emitted
	stats   transcript.Stats
}

func newParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("amp parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

type thread struct {
	ID       string          `json:"id"`
	Created  json.RawMessage `json:"created"`
	Title    string          `json:"title"`
	Messages []message       `json:"messages"`
	Env      struct {
		Initial struct {
			Trees []struct {
				URI string `json:"uri"`
			} `json:"trees"`
		} `json:"initial"`
	} `json:"env"`
	UsageLedger struct {
		Events []ledgerEvent `json:"events"`
	} `json:"usageLedger"`
}

type message struct {
	Role      string          `json:"role"`
	MessageID json.RawMessage `json:"messageId"`
	Content   json.RawMessage `json:"content"`
	Meta      struct {
		SentAt json.RawMessage `json:"sentAt"`
	} `json:"meta"`
	Usage *usage `json:"usage"`
}

type usage struct {
	Model         string  `json:"model"`
	Input         flexInt `json:"inputTokens"`
	Output        flexInt `json:"outputTokens"`
	CacheCreation flexInt `json:"cacheCreationInputTokens"`
	CacheRead     flexInt `json:"cacheReadInputTokens"`
	Timestamp     string  `json:"timestamp"`
}

type ledgerEvent struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Model     string `json:"model"`
	Tokens    struct {
		Input  flexInt `json:"input"`
		Output flexInt `json:"output"`
	} `json:"tokens"`
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"toolUseID"`
	Run       *struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	} `json:"run"`
}

// Record reads the whole document.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var d thread
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.thread(&d), &p.st.Seen, maxSeen), nil
}

func (p *Parser) unknown(kind string) {
	if p.stats.Unknown == nil {
		p.stats.Unknown = map[string]int64{}
	}
	p.stats.Unknown[kind]++
}

func (p *Parser) thread(d *thread) []event.Event {
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(p.src.SessionID, strings.TrimSuffix(filepath.Base(p.src.Path), ".json"), d.ID)
	}
	if len(d.Env.Initial.Trees) > 0 {
		if u, err := url.Parse(d.Env.Initial.Trees[0].URI); err == nil && u.Scheme == "file" {
			transcript.SetCwd(&p.st.Cwd, &p.st.Project, u.Path)
		}
	}
	created, hasCreated := msTime(d.Created)
	var evs []event.Event
	if !p.st.Started && hasCreated {
		p.st.Started = true
		evs = append(evs, p.sessionEvent(event.SessionStarted, "", created))
		if title := strings.TrimSpace(d.Title); title != "" {
			ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, "title", title), created)
			ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: p.src.Path}
			evs = append(evs, ev)
		}
	}
	blocks := make([][]block, len(d.Messages))
	results := map[string]*block{}
	withUsage := false
	for i := range d.Messages {
		_ = json.Unmarshal(d.Messages[i].Content, &blocks[i])
		for j := range blocks[i] {
			if b := &blocks[i][j]; b.Type == "tool_result" && b.ToolUseID != "" {
				results[b.ToolUseID] = b
			}
		}
		withUsage = withUsage || d.Messages[i].Usage != nil
	}
	t := created
	for i := range d.Messages {
		m := &d.Messages[i]
		if ts, ok := m.time(); ok {
			t = ts
		}
		if t.IsZero() {
			continue // no time for it yet: a thread without created, whose first messages have none
		}
		key := transcript.FirstNonEmpty(strings.Trim(string(m.MessageID), `"`), strconv.Itoa(i))
		switch m.Role {
		case "user":
			var parts []string
			for _, b := range blocks[i] {
				if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
					parts = append(parts, b.Text)
				}
			}
			if prompt := strings.TrimSpace(strings.Join(parts, "\n")); prompt != "" {
				ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleUser, i, 0, t, prompt, key, "")...)
			}
		case "assistant":
			model := ""
			if m.Usage != nil {
				model = strings.TrimSpace(m.Usage.Model)
				evs = append(evs, p.modelEvent(model, t)...)
				if ev, ok := p.usage(event.ID(Client, "usage", p.st.Session, key), key, model, m.Usage.tokens(model), t); ok {
					evs = append(evs, ev)
				}
			}
			for j := range blocks[i] {
				b := &blocks[i][j]
				switch b.Type {
				case "text":
					evs = append(evs, p.textMessage(event.RoleAssistant, i, j, t, b.Text, key, model)...)
				case "thinking":
					evs = append(evs, p.textMessage(event.RoleThinking, i, j, t, b.Thinking, key, model)...)
				case "tool_use":
					if b.ID != "" {
						call := p.call(b, results[b.ID], key, model, t)
						evs = append(evs, call, p.message(i, j, t, event.Message{Role: event.RoleToolCall, Text: call.Action.Target,
							Tool: b.Name, ToolUseID: b.ID, MessageID: key, Model: model}))
					}
				}
			}
		case "info":
		default:
			p.unknown("role " + m.Role)
		}
	}
	if !withUsage {
		for _, le := range d.UsageLedger.Events {
			lt, ok := transcript.ParseTime(le.Timestamp)
			if !ok || le.ID == "" {
				continue
			}
			model := strings.TrimSpace(le.Model)
			evs = append(evs, p.modelEvent(model, lt)...)
			tok := event.Tokens{Input: max(int64(le.Tokens.Input), 0), Output: max(int64(le.Tokens.Output), 0)}
			if ev, ok := p.usage(event.ID(Client, "ledger", p.st.Session, le.ID), "", model, tok, lt); ok {
				evs = append(evs, ev)
			}
		}
	}
	return evs
}

// time is a message's own time: its usage's timestamp, else its meta.sentAt.
func (m *message) time() (time.Time, bool) {
	if m.Usage != nil {
		if t, ok := transcript.ParseTime(m.Usage.Timestamp); ok {
			return t, true
		}
	}
	return msTime(m.Meta.SentAt)
}

// tokens are a usage's figures in observer's buckets (see the package doc).
func (u *usage) tokens(model string) event.Tokens {
	tok := event.Tokens{Input: max(int64(u.Input), 0), Output: max(int64(u.Output), 0),
		CacheCreation: max(int64(u.CacheCreation), 0), CacheRead: max(int64(u.CacheRead), 0)}
	if tok.Input == 0 && strings.HasPrefix(strings.ToLower(model), "gpt-") {
		tok.Input, tok.CacheCreation = tok.CacheCreation, 0
	}
	return tok
}

func (p *Parser) call(b *block, res *block, msgID, model string, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := p.toolOf(b.Name, in)
	a := &event.Action{Type: ty, Tool: b.Name, Target: clipTarget(target), ToolUseID: b.ID, MessageID: msgID, Model: model,
		InputHash: transcript.InputHash(b.Input), Transcript: p.src.Path}
	if res != nil && res.Run != nil {
		out, exit := resultText(res.Run.Result)
		if ok, known := outcome(res.Run.Status, exit); known {
			a.Success = &ok
			if !ok {
				msg := ""
				if res.Run.Error != nil {
					msg = res.Run.Error.Message
				}
				a.Error = clipError(transcript.FirstNonEmpty(msg, out, strings.ReplaceAll(res.Run.Status, "-", " ")))
			}
			a.OutputSize = int64(len(out))
			a.Output = clipOutput(out)
		}
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, b.ID), t)
	ev.Action = a
	return ev
}

// outcome reads a tool run's status: done succeeded (unless its command exited non-zero); error,
// cancelled and rejected-by-user failed; any other (in progress) is no outcome yet.
func outcome(status string, exit int64) (ok, known bool) {
	switch status {
	case "done":
		return exit == 0, true
	case "error", "cancelled", "rejected-by-user":
		return false, true
	}
	return false, false
}

// resultText is a tool result's text (a Bash result's output, a Read result's content, a string,
// else the JSON) and a Bash result's exit code.
func resultText(raw json.RawMessage) (string, int64) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, 0
	}
	var r struct {
		Output   *string `json:"output"`
		Content  *string `json:"content"`
		ExitCode flexInt `json:"exitCode"`
	}
	if json.Unmarshal(raw, &r) == nil {
		switch {
		case r.Output != nil:
			return *r.Output, int64(r.ExitCode)
		case r.Content != nil:
			return *r.Content, 0
		}
	}
	return string(raw), 0
}

// toolOf maps a tool call to its action type and target.
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "Bash", "shell_command", "async_shell_command":
		return event.ActionRunCommand, transcript.Arg(in, "cmd", "command")
	case "Read":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "path", "file_path", "filePath"))
	case "create_file":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "path", "file_path", "filePath"))
	case "edit_file", "undo_edit", "format_file":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "path", "file_path", "filePath"))
	case "list_directory":
		return event.ActionSearchFiles, p.relPath(transcript.Arg(in, "path"))
	case "glob":
		return event.ActionSearchFiles, transcript.Arg(in, "filePattern", "pattern")
	case "Grep":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "codebase_search_agent":
		return event.ActionSearchText, transcript.Arg(in, "query")
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "read_web_page":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "Task", "oracle", "librarian", "finder":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "prompt", "task", "query")
	case "todo_write", "todo_read":
		return event.ActionTodoUpdate, ""
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

func (p *Parser) usage(id, msgID, model string, tok event.Tokens, t time.Time) (event.Event, bool) {
	u := transcript.PricedUsage(p.prices(), model, msgID, tok, 0, t)
	if u == nil {
		return event.Event{}, false
	}
	ev := p.newEvent(event.KindTokenUsage, id, t)
	ev.TokenUsage = u
	return ev, true
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) sessionEvent(state, model string, t time.Time) event.Event {
	key := "started"
	if state != event.SessionStarted {
		key = "model\x00" + model
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: state, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	if state == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	return []event.Event{p.sessionEvent(event.SessionActive, model, t)}
}

func (p *Parser) message(record, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, strconv.Itoa(record), strconv.Itoa(blk)), t)
	m.Seq = int64(record)*64 + int64(min(blk, maxBlock))
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, record, blk int, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(record, blk, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

// msTime reads unix milliseconds (a number or a numeric string).
func msTime(raw json.RawMessage) (time.Time, bool) {
	var n flexInt
	if len(raw) == 0 || json.Unmarshal(raw, &n) != nil {
		return time.Time{}, false
	}
	if ms := int64(n); ms > 31536000000 && ms < 9e12 {
		return time.UnixMilli(ms).UTC(), true
	}
	return time.Time{}, false
}

// flexInt reads a count written as a number or a numeric string; anything else is 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(b)), `"`), 64)
	if err != nil || f != f || f > 1e15 || f < -1e15 {
		f = 0
	}
	*n = flexInt(f)
	return nil
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
