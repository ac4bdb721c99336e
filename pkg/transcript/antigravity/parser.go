package antigravity

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
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what State keeps.
const (
	maxTarget   = 500
	maxError    = 2 << 10
	maxOutput   = 8 << 10
	maxMessage  = 64 << 10
	maxPending  = 64
	maxModels   = 16
	maxBlock    = 63
	maxHistory  = 16 << 20 // bytes of history.jsonl read for a conversation's workspace
	maxHistLine = 4 << 20
	maxModel    = 100 // runes of a model's display name
)

// pending is a tool call waiting for its result step: ids and the tool's name only.
type pending struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	Kind string `json:"kind"` // the step type that carries its result
}

// state is what a parser keeps between lines: JSON, small, no transcript text.
type state struct {
	Session  string    `json:"session,omitempty"`
	Cwd      string    `json:"cwd,omitempty"`
	Project  string    `json:"project,omitempty"`
	Looked   bool      `json:"looked,omitempty"` // history.jsonl was searched for the workspace
	Started  bool      `json:"started,omitempty"`
	LastTime time.Time `json:"last_time,omitzero"`
	Model    string    `json:"model,omitempty"`
	Models   []string  `json:"models,omitempty"`
	Pending  []pending `json:"pending,omitempty"`
}

// Parser reads one brain transcript.
type Parser struct {
	src   transcript.Source
	st    state
	stats transcript.Stats
}

// newParser returns a parser resumed from st; workspace gives a conversation's workspace from
// the prompt log of a data directory.
func newParser(src transcript.Source, st []byte, workspace func(root, conversation string) string) (*Parser, error) {
	p := &Parser{src: src}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("antigravity parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, conversationOf(src.Path))
	}
	if !p.st.Looked && p.st.Session != "" && src.Path != "" {
		p.st.Looked = true
		if root := rootOf(src.Path); root != "" && workspace != nil {
			transcript.SetCwd(&p.st.Cwd, &p.st.Project, fileURI(workspace(root, p.st.Session)))
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// conversationOf is the conversation uuid a transcript path names (brain/<uuid>/.system_generated/
// logs/transcript.jsonl), or "".
func conversationOf(path string) string {
	dir := filepath.Dir(filepath.Dir(filepath.Dir(path)))
	if id := filepath.Base(dir); uuidRe.MatchString(id) {
		return strings.ToLower(id)
	}
	return ""
}

// rootOf is the data directory above brain/, or "".
func rootOf(path string) string {
	brain := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(path))))
	if filepath.Base(brain) != "brain" {
		return ""
	}
	return filepath.Dir(brain)
}

type step struct {
	StepIndex *int64          `json:"step_index"`
	Source    string          `json:"source"`
	Type      string          `json:"type"`
	Status    string          `json:"status"`
	CreatedAt string          `json:"created_at"`
	Content   json.RawMessage `json:"content"`
	Thinking  json.RawMessage `json:"thinking"`
	ToolCalls []toolCall      `json:"tool_calls"`
}

type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Record parses one transcript line.
func (p *Parser) Record(off int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, transcript.Malformed(Client, "line at offset %d is not UTF-8", off)
	case line[0] != '{':
		return nil, transcript.Malformed(Client, "line at offset %d is not a JSON object", off)
	}
	var s step
	if err := json.Unmarshal(line, &s); err != nil {
		return nil, transcript.Malformed(Client, "line at offset %d does not parse: %v", off, err)
	}
	if s.Source == "" && s.Type == "" {
		return nil, transcript.Malformed(Client, "line at offset %d has neither source nor type", off)
	}
	t, ok := transcript.ParseTime(s.CreatedAt)
	if !ok {
		t = p.st.LastTime
	} else if t.After(p.st.LastTime) {
		p.st.LastTime = t
	}
	if t.IsZero() {
		return nil, nil // no time for it yet
	}
	key := "o" + strconv.FormatInt(off, 10)
	seq := off * 64
	if s.StepIndex != nil {
		key = strconv.FormatInt(*s.StepIndex, 10)
		seq = *s.StepIndex * 64
	}
	if !p.st.Started {
		p.st.Started = true
		evs = append(evs, p.sessionEvent(event.SessionStarted, "", t))
	}
	switch s.Source {
	case "USER_EXPLICIT", "USER", "":
	case "MODEL", "SYSTEM":
	default:
		p.stats.CountUnknown("source " + s.Source)
	}
	content := rawText(s.Content)
	switch {
	case s.Type == "USER_INPUT" && s.Source != "MODEL" && s.Source != "SYSTEM":
		model, switched := modelSelection(content)
		if switched {
			p.st.Model = model
			evs = append(evs, p.modelEvent(model, t)...)
		}
		request, wrapped := userRequest(content)
		if switched && !wrapped {
			return evs, nil // a settings change alone
		}
		prompt := strings.TrimSpace(request)
		if prompt == "" {
			return evs, nil
		}
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: p.src.Path}
		evs = append(evs, ev)
		evs = append(evs, p.textMessage(event.RoleUser, key, 0, seq, t, prompt)...)
	case s.Type == "PLANNER_RESPONSE":
		evs = append(evs, p.textMessage(event.RoleThinking, key, 0, seq, t, rawText(s.Thinking))...)
		evs = append(evs, p.textMessage(event.RoleAssistant, key, 1, seq+1, t, content)...)
		for i, c := range s.ToolCalls {
			name := strings.TrimSpace(c.Name)
			if name == "" {
				continue
			}
			id := key + "." + strconv.Itoa(i)
			call := p.call(id, name, c.Args, key, t)
			evs = append(evs, call)
			blk := min(2+i, maxBlock)
			m := p.message(key, blk, seq+int64(blk), t, event.Message{Role: event.RoleToolCall, Text: call.Action.Target,
				Tool: name, ToolUseID: id, MessageID: key, Model: p.st.Model})
			evs = append(evs, m)
			if kind := resultKind(name); kind != "" {
				p.st.Pending = append(p.st.Pending, pending{ID: id, Tool: name, Kind: kind})
				if n := len(p.st.Pending); n > maxPending {
					p.st.Pending = append([]pending(nil), p.st.Pending[n-maxPending:]...)
				}
			}
		}
	case s.Type == "ERROR_MESSAGE":
		if len(p.st.Pending) > 0 {
			c := p.st.Pending[0]
			p.st.Pending = p.st.Pending[1:]
			evs = append(evs, p.result(c, false, true, transcript.FirstNonEmpty(content, "error"), t))
		}
	default:
		if i := p.pendingOf(s.Type); i >= 0 {
			c := p.st.Pending[i]
			p.st.Pending = append(p.st.Pending[:i:i], p.st.Pending[i+1:]...)
			ok, known := outcome(s.Status)
			evs = append(evs, p.result(c, ok, known, content, t))
		}
	}
	return evs, nil
}

// pendingOf is the index of the oldest waiting call whose result a step of type kind carries, or -1.
func (p *Parser) pendingOf(kind string) int {
	for i, c := range p.st.Pending {
		if c.Kind == kind {
			return i
		}
	}
	return -1
}

// outcome reads a step's status: DONE succeeded; an error, failure or cancellation failed; any
// other status (running, waiting) is no outcome yet.
func outcome(status string) (ok, known bool) {
	s := strings.ToUpper(status)
	switch {
	case s == "DONE" || s == "COMPLETED" || s == "SUCCESS":
		return true, true
	case strings.Contains(s, "ERROR"), strings.Contains(s, "FAIL"), strings.Contains(s, "CANCEL"), strings.Contains(s, "REJECT"):
		return false, true
	}
	return false, false
}

// result is a waiting call's action again, under its id, with the outcome of its result step.
func (p *Parser) result(c pending, ok, known bool, out string, t time.Time) event.Event {
	ty, _ := toolOf(c.Tool, nil)
	a := &event.Action{Type: ty, Tool: c.Tool, ToolUseID: c.ID, Transcript: p.src.Path}
	if known {
		a.Success = &ok
		a.OutputSize = int64(len(out))
		a.Output = clipOutput(out)
		if !ok {
			a.Error = clipError(transcript.FirstNonEmpty(out, "failed"))
		}
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, c.ID), t)
	ev.Action = a
	return ev
}

func (p *Parser) call(id, name string, args json.RawMessage, msgID string, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	ty, target := toolOf(name, in)
	if ty == event.ActionReadFile || ty == event.ActionWriteFile || ty == event.ActionEditFile ||
		(ty == event.ActionSearchFiles && name == "list_dir") {
		target = p.relPath(target)
	}
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, id), t)
	ev.Action = &event.Action{Type: ty, Tool: name, Target: clipTarget(target), ToolUseID: id, MessageID: msgID,
		Model: p.st.Model, InputHash: transcript.InputHash(args), Transcript: p.src.Path}
	return ev
}

// resultKind is the step type that carries a tool's result, or "" when the transcript logs none
// this reader knows.
func resultKind(name string) string {
	switch name {
	case "view_file", "view_file_outline", "view_code_item":
		return "VIEW_FILE"
	case "run_command":
		return "RUN_COMMAND"
	case "write_to_file", "replace_file_content", "multi_replace_file_content":
		return "CODE_ACTION"
	case "grep_search":
		return "GREP_SEARCH"
	case "list_dir":
		return "LIST_DIRECTORY"
	}
	return "" // find_by_name, search_web, read_url_content...: no result step the readers document
}

// toolOf maps a tool call to its action type and target.
func toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "view_file", "view_file_outline", "view_code_item":
		return event.ActionReadFile, fileURI(transcript.Arg(in, "AbsolutePath", "AbsolutePathURI", "File", "path"))
	case "write_to_file":
		return event.ActionWriteFile, fileURI(transcript.Arg(in, "TargetFile", "file_path", "path"))
	case "replace_file_content", "multi_replace_file_content":
		return event.ActionEditFile, fileURI(transcript.Arg(in, "TargetFile", "file_path", "path"))
	case "run_command":
		return event.ActionRunCommand, transcript.Arg(in, "CommandLine", "command")
	case "grep_search":
		t := transcript.Arg(in, "Query", "query", "pattern")
		if dir := fileURI(transcript.Arg(in, "SearchPath", "SearchPathURI", "path")); dir != "" && t != "" {
			t += " in " + dir
		}
		return event.ActionSearchText, t
	case "find_by_name":
		return event.ActionSearchFiles, transcript.Arg(in, "Pattern", "pattern", "SearchDirectory")
	case "list_dir":
		return event.ActionSearchFiles, fileURI(transcript.Arg(in, "DirectoryPath", "DirectoryPathURI", "path"))
	case "search_web":
		return event.ActionWebSearch, transcript.Arg(in, "query", "Query")
	case "read_url_content":
		return event.ActionWebFetch, transcript.Arg(in, "Url", "url")
	case "invoke_subagent", "define_subagent":
		return event.ActionSpawnSubagent, transcript.Arg(in, "name", "TypeName", "Prompt", "prompt")
	case "manage_task":
		return event.ActionTodoUpdate, ""
	case "ask_question":
		return event.ActionAskUser, transcript.Arg(in, "toolSummary", "Question", "question")
	}
	if rest, ok := strings.CutPrefix(name, "mcp_"); ok {
		server, tool, _ := strings.Cut(strings.TrimPrefix(rest, "_"), "_")
		return event.ActionMCPCall, server + "/" + tool
	}
	if server, tool, ok := strings.Cut(name, "__"); ok && server != "" && tool != "" {
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

// fileURI turns a file:// URI into its path; anything else is returned as it is.
func fileURI(s string) string {
	if rest, ok := strings.CutPrefix(s, "file://"); ok {
		return rest
	}
	return s
}

// rawText is a JSON string's text, or the JSON itself when it is not a string.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// userRequest is the text inside <USER_REQUEST>...</USER_REQUEST> and true, or the whole text and
// false.
func userRequest(s string) (string, bool) {
	_, rest, ok := strings.Cut(s, "<USER_REQUEST>")
	if !ok {
		return s, false
	}
	inner, _, _ := strings.Cut(rest, "</USER_REQUEST>")
	return inner, true
}

// block is one <NAME>...</NAME> section of a USER_INPUT step's content.
type block struct{ name, text string }

// blocks splits a USER_INPUT step's content into the sections Antigravity writes, <USER_REQUEST>
// (what the user typed), <ADDITIONAL_METADATA>, <USER_SETTINGS_CHANGE>...; whole reports whether
// the content is nothing but such sections (no text outside them).
func blocks(s string) (out []block, whole bool) {
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if s == "" {
			return out, true
		}
		if s[0] != '<' {
			return out, false
		}
		end := strings.IndexByte(s, '>')
		if end < 2 || strings.TrimLeft(s[1:end], "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") != "" {
			return out, false
		}
		name := s[1:end]
		closing := "</" + name + ">"
		inner, rest, ok := strings.Cut(s[end+1:], closing)
		if !ok {
			return out, false
		}
		out = append(out, block{name, inner})
		s = rest
	}
}

// settingPrefix opens the sentence of a <USER_SETTINGS_CHANGE> section that changes the model.
const settingPrefix = "The user changed setting `Model Selection` from "

// modelSelection reads the model a USER_INPUT step selects: a <USER_SETTINGS_CHANGE> section
// "The user changed setting `Model Selection` from X to Y. ..." gives Y (scrubbed, at most
// maxModel runes). Only a content made wholly of Antigravity's sections (at most one
// <USER_REQUEST>, the user's text inside it) is read so: a prompt that merely mentions a model
// selection selects nothing.
func modelSelection(s string) (string, bool) {
	bs, whole := blocks(s)
	if !whole {
		return "", false
	}
	model, requests := "", 0
	for _, b := range bs {
		switch b.name {
		case "USER_REQUEST":
			requests++
		case "USER_SETTINGS_CHANGE":
			if m, ok := selected(b.text); ok {
				model = m
			}
		}
	}
	return model, model != "" && requests <= 1
}

// selected reads Y from a settings change "The user changed setting `Model Selection` from X to
// Y. ...".
func selected(text string) (string, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), settingPrefix)
	if !ok {
		return "", false
	}
	_, to, ok := strings.Cut(rest, " to ")
	if !ok {
		return "", false
	}
	to, _, _ = strings.Cut(to, "\n")
	to = strings.TrimSpace(to)
	// A trailing full stop ends the sentence; a dot between digits is part of the name (3.5).
	for i := 0; i < len(to); i++ {
		if to[i] == '.' && (i+1 == len(to) || to[i+1] < '0' || to[i+1] > '9') {
			to = to[:i]
			break
		}
	}
	to = transcript.ClipTarget(to, maxModel)
	return to, to != ""
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

func (p *Parser) message(key string, blk int, seq int64, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, key, strconv.Itoa(blk)), t)
	m.Seq = seq
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role, key string, blk int, seq int64, t time.Time, text string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	model := ""
	if role != event.RoleUser {
		model = p.st.Model
	}
	return []event.Event{p.message(key, blk, seq, t, event.Message{Role: role, Text: text, MessageID: key, Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
