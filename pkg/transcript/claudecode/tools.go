package claudecode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// toolTypes maps Claude Code's built-in tools to the taxonomy. mcp__* tools are mcp_call; the rest
// are unknown.
var toolTypes = map[string]event.ActionType{
	"Read":            event.ActionReadFile,
	"Write":           event.ActionWriteFile,
	"Edit":            event.ActionEditFile,
	"MultiEdit":       event.ActionEditFile,
	"NotebookEdit":    event.ActionEditFile,
	"Bash":            event.ActionRunCommand,
	"BashOutput":      event.ActionRunCommand,
	"KillShell":       event.ActionRunCommand,
	"KillBash":        event.ActionRunCommand,
	"TaskOutput":      event.ActionRunCommand,
	"TaskStop":        event.ActionRunCommand,
	"Grep":            event.ActionSearchText,
	"Glob":            event.ActionSearchFiles,
	"LS":              event.ActionSearchFiles,
	"WebSearch":       event.ActionWebSearch,
	"WebFetch":        event.ActionWebFetch,
	"Task":            event.ActionSpawnSubagent,
	"Agent":           event.ActionSpawnSubagent,
	"TodoWrite":       event.ActionTodoUpdate,
	"TodoRead":        event.ActionTodoUpdate,
	"TaskCreate":      event.ActionTodoUpdate,
	"TaskUpdate":      event.ActionTodoUpdate,
	"TaskList":        event.ActionTodoUpdate,
	"TaskGet":         event.ActionTodoUpdate,
	"AskUserQuestion": event.ActionAskUser,
	// The API's server-side tools (server_tool_use blocks).
	"web_search": event.ActionWebSearch,
	"web_fetch":  event.ActionWebFetch,
}

// ToolType returns the normalized type of a Claude Code tool name.
func ToolType(name string) event.ActionType {
	if t, ok := toolTypes[name]; ok {
		return t
	}
	if strings.HasPrefix(name, "mcp__") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// toolInput is the part of a tool's input that names its target.
type toolInput struct {
	FilePath     string          `json:"file_path"`
	NotebookPath string          `json:"notebook_path"`
	Path         string          `json:"path"`
	Command      string          `json:"command"`
	Pattern      string          `json:"pattern"`
	URL          string          `json:"url"`
	Query        string          `json:"query"`
	SubagentType string          `json:"subagent_type"`
	Description  string          `json:"description"`
	BashID       string          `json:"bash_id"`
	ShellID      string          `json:"shell_id"`
	TaskID       string          `json:"task_id"`
	Skill        string          `json:"skill"`
	Questions    json.RawMessage `json:"questions"`
}

// target returns what a tool call acts on, before scrubbing and clipping.
func (p *Parser) target(name string, raw json.RawMessage) string {
	var in toolInput
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &in) != nil {
		return ""
	}
	switch name {
	case "Read", "Write", "Edit", "MultiEdit":
		return p.relPath(in.FilePath)
	case "NotebookEdit", "NotebookRead":
		return p.relPath(firstNonEmpty(in.NotebookPath, in.FilePath))
	case "Bash":
		return in.Command
	case "Grep", "Glob":
		if in.Path != "" {
			return in.Pattern + " in " + p.relPath(in.Path)
		}
		return in.Pattern
	case "LS":
		return p.relPath(in.Path)
	case "WebFetch", "web_fetch":
		return in.URL
	case "WebSearch", "web_search":
		return in.Query
	case "Task", "Agent":
		if in.SubagentType != "" && in.Description != "" {
			return in.SubagentType + ": " + in.Description
		}
		return firstNonEmpty(in.SubagentType, in.Description)
	case "BashOutput", "KillShell", "KillBash", "TaskOutput", "TaskStop":
		return firstNonEmpty(in.BashID, in.ShellID, in.TaskID)
	case "Skill":
		return in.Skill
	case "AskUserQuestion":
		var qs []struct {
			Question string `json:"question"`
		}
		if len(in.Questions) > 0 && in.Questions[0] == '[' && json.Unmarshal(in.Questions, &qs) == nil && len(qs) > 0 {
			return qs[0].Question
		}
		return ""
	case "TodoWrite", "TodoRead", "TaskCreate", "TaskUpdate", "TaskList", "TaskGet":
		return ""
	}
	switch {
	case in.FilePath != "":
		return p.relPath(in.FilePath)
	case in.Path != "":
		return p.relPath(in.Path)
	}
	return firstNonEmpty(in.URL, in.Query, in.Command, in.Pattern)
}

// relPath makes a file path relative to the project root when it lies inside it.
func (p *Parser) relPath(file string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if p.st.Cwd == "" || !filepath.IsAbs(p.st.Cwd) {
			return filepath.Clean(file)
		}
		file = filepath.Join(p.st.Cwd, file)
	}
	file = filepath.Clean(file)
	if root := p.project(); root != "" && within(root, file) {
		if rel, err := filepath.Rel(root, file); err == nil {
			return rel
		}
	}
	return file
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func hashInput(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

func callID(toolUseID string) string {
	return event.ID(Client, string(event.KindAction), toolUseID)
}

// toolCall turns a tool_use block into an action and remembers the call until its result.
func (p *Parser) toolCall(l *line, m *message, b *block, t time.Time) event.Event {
	a := &event.Action{Type: ToolType(b.Name), Tool: b.Name, Target: clipTarget(p.target(b.Name, b.Input)),
		ToolUseID: b.ID, MessageID: m.ID, RequestID: l.RequestID, AgentID: p.agentID(l), Sidechain: l.IsSidechain,
		InputHash: hashInput(b.Input), Model: m.Model, Transcript: p.src.Path}
	p.addPending(pending{ID: b.ID, Type: a.Type, Tool: a.Tool, Target: a.Target, MessageID: a.MessageID,
		RequestID: a.RequestID, Model: a.Model, Time: t.UnixNano()})
	ev := p.newEvent(event.KindAction, callID(b.ID), t)
	ev.Action = a
	return ev
}

// resultEvent starts the result of a call: the call's fields when the parser still knows it.
func (p *Parser) resultEvent(l *line, toolUseID string, t time.Time) (event.Event, *event.Action, *pending) {
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: toolUseID, AgentID: p.agentID(l), Sidechain: l.IsSidechain,
		Transcript: p.src.Path}
	pc, ok := p.takePending(toolUseID)
	if ok {
		a.Type, a.Tool, a.Target = pc.Type, pc.Tool, pc.Target
		a.MessageID, a.RequestID, a.Model = pc.MessageID, pc.RequestID, pc.Model
		if d := t.UnixNano() - pc.Time; d >= 0 && pc.Time != 0 {
			a.DurationMs = d / int64(time.Millisecond)
		}
	}
	ev := p.newEvent(event.KindAction, callID(toolUseID), t)
	ev.Action = a
	if !ok {
		return ev, a, nil
	}
	return ev, a, &pc
}

// toolResult turns a tool_result block into the result half of its call's action. meta is the
// line's toolUseResult when the line holds this one result.
func (p *Parser) toolResult(l *line, b *block, meta json.RawMessage, t time.Time) event.Event {
	ev, a, _ := p.resultEvent(l, b.ToolUseID, t)
	text, size := resultText(b.Content)
	ok := b.IsError == nil || !*b.IsError
	a.Success = &ok
	a.OutputSize = size
	if ms, has := metaDuration(meta); has {
		a.DurationMs = ms
	}
	if !ok {
		if text == "" {
			text = metaError(meta)
		}
		a.Error = clipError(stripTag(text, "tool_use_error"))
	}
	a.Output = clipOutput(text)
	return ev
}

// serverResult pairs a web_search_tool_result (or web_fetch_tool_result) with its server_tool_use.
func (p *Parser) serverResult(l *line, b *block, t time.Time) event.Event {
	ev, a, _ := p.resultEvent(l, b.ToolUseID, t)
	content := bytes.TrimSpace(b.Content)
	var failure struct {
		Type      string `json:"type"`
		ErrorCode string `json:"error_code"`
	}
	ok := true
	if len(content) > 0 && content[0] == '{' && json.Unmarshal(content, &failure) == nil &&
		strings.HasSuffix(failure.Type, "_error") {
		ok = false
		a.Error = clipError(firstNonEmpty(failure.ErrorCode, failure.Type))
	}
	a.Success = &ok
	a.OutputSize = int64(len(content))
	return ev
}

// resultText returns a tool result's text (text blocks joined; an image counts as "[image]") and
// the full size of the result in bytes (an image's encoded data included).
func resultText(raw json.RawMessage) (string, int64) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, int64(len(s))
		}
	case '[':
		var items []struct {
			Type   string `json:"type"`
			Text   string `json:"text"`
			Source *struct {
				Data string `json:"data"`
			} `json:"source"`
		}
		if json.Unmarshal(raw, &items) == nil {
			var parts []string
			var size int64
			for _, it := range items {
				switch it.Type {
				case "text":
					parts = append(parts, it.Text)
					size += int64(len(it.Text))
				case "image":
					parts = append(parts, "[image]")
					if it.Source != nil {
						size += int64(len(it.Source.Data))
					}
				}
			}
			if len(parts) > 1 {
				size += int64(len(parts) - 1)
			}
			return strings.Join(parts, "\n"), size
		}
	}
	return string(raw), int64(len(raw))
}

// metaDuration reads the duration a toolUseResult reports: durationMs (Glob, Grep, WebFetch),
// totalDurationMs (Task) or durationSeconds (WebSearch).
func metaDuration(meta json.RawMessage) (int64, bool) {
	meta = bytes.TrimSpace(meta)
	if len(meta) == 0 || meta[0] != '{' {
		return 0, false
	}
	var m struct {
		DurationMs      json.RawMessage `json:"durationMs"`
		TotalDurationMs json.RawMessage `json:"totalDurationMs"`
		DurationSeconds json.RawMessage `json:"durationSeconds"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return 0, false
	}
	if ms, ok := jsonInt(m.DurationMs); ok && ms > 0 {
		return ms, true
	}
	if ms, ok := jsonInt(m.TotalDurationMs); ok && ms > 0 {
		return ms, true
	}
	var s float64
	if len(m.DurationSeconds) > 0 && json.Unmarshal(m.DurationSeconds, &s) == nil && s > 0 && s < 1e9 {
		return int64(s*1000 + 0.5), true
	}
	return 0, false
}

// metaError reads an error from a toolUseResult: Claude Code writes a failed call's as a string.
func metaError(meta json.RawMessage) string {
	meta = bytes.TrimSpace(meta)
	if len(meta) == 0 || meta[0] != '"' {
		return ""
	}
	return jsonText(meta)
}

// stripTag removes an enclosing <tag>...</tag> from s.
func stripTag(s, tag string) string {
	t := strings.TrimSpace(s)
	if inner, ok := strings.CutPrefix(t, "<"+tag+">"); ok {
		return strings.TrimSpace(strings.TrimSuffix(inner, "</"+tag+">"))
	}
	return s
}

// ---------------------------------------------------------------------------------------------
// Pending calls

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
