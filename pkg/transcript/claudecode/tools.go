package claudecode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
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

// decodeInput reads the fields of a tool's input that name its target, and nothing else of it (a
// Write's content, an Edit's strings).
func decodeInput(raw json.RawMessage) (toolInput, bool) {
	var in toolInput
	if len(raw) == 0 || raw[0] != '{' {
		return in, false
	}
	err := jsonscan.MembersValid(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "file_path":
			in.FilePath = jsonscan.Str(v)
		case "notebook_path":
			in.NotebookPath = jsonscan.Str(v)
		case "path":
			in.Path = jsonscan.Str(v)
		case "command":
			in.Command = jsonscan.Str(v)
		case "pattern":
			in.Pattern = jsonscan.Str(v)
		case "url":
			in.URL = jsonscan.Str(v)
		case "query":
			in.Query = jsonscan.Str(v)
		case "subagent_type":
			in.SubagentType = jsonscan.Str(v)
		case "description":
			in.Description = jsonscan.Str(v)
		case "bash_id":
			in.BashID = jsonscan.Str(v)
		case "shell_id":
			in.ShellID = jsonscan.Str(v)
		case "task_id":
			in.TaskID = jsonscan.Str(v)
		case "skill":
			in.Skill = jsonscan.Str(v)
		case "questions":
			in.Questions = v
		}
		return true
	})
	return in, err == nil
}

// target returns what a tool call acts on, before scrubbing and clipping.
func (p *Parser) target(name string, raw json.RawMessage) string {
	in, ok := decodeInput(raw)
	if !ok {
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
func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.project()) }

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
	p.st.Pending.Replace(pending{ID: b.ID, Type: a.Type, Tool: a.Tool, Target: transcript.Memo(a.Target), MessageID: a.MessageID,
		RequestID: a.RequestID, Model: a.Model, Time: t.UnixNano()}, maxPending)
	ev := p.newEvent(event.KindAction, callID(b.ID), t)
	ev.Action = a
	return ev
}

// resultEvent starts the result of a call: the call's fields when the parser still knows it.
func (p *Parser) resultEvent(l *line, toolUseID string, t time.Time) (event.Event, *event.Action, *pending) {
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: toolUseID, AgentID: p.agentID(l), Sidechain: l.IsSidechain,
		Transcript: p.src.Path}
	pc, ok := p.st.Pending.Take(toolUseID)
	if ok {
		a.Type, a.Tool, a.Target = pc.Type, pc.Tool, string(pc.Target)
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

// resultText returns the start of a tool result's text (text blocks joined; an image counts as
// "[image]"), up to resultBudget bytes — enough for the output and the error kept — and the full size
// of the result in bytes (an image's encoded data included), counted without decoding the rest.
func resultText(raw json.RawMessage) (string, int64) {
	if jsonscan.Null(raw) {
		return "", 0
	}
	switch raw[0] {
	case '"':
		if s, size, ok := jsonscan.StringPrefix(raw, resultBudget); ok {
			return s, size
		}
	case '[':
		var text strings.Builder
		var size int64
		n := 0
		add := func(part string, partSize int64) {
			if n > 0 {
				size++
				if text.Len() < resultBudget {
					text.WriteByte('\n')
				}
			}
			n++
			size += partSize
			if text.Len() < resultBudget {
				text.WriteString(part)
			}
		}
		err := jsonscan.ElementsValid(raw, func(it []byte) bool {
			var typ string
			var body, data []byte
			jsonscan.MembersValid(it, func(k, v []byte) bool {
				switch {
				case jsonscan.Key(k, "type"):
					typ = jsonscan.Str(v)
				case jsonscan.Key(k, "text"):
					body = v
				case jsonscan.Key(k, "source"):
					jsonscan.MembersValid(v, func(k, v []byte) bool {
						if jsonscan.Key(k, "data") {
							data = v
						}
						return true
					})
				}
				return true
			})
			switch typ {
			case "text":
				s, sz, _ := jsonscan.StringPrefix(body, max(resultBudget-text.Len(), 0))
				add(s, sz)
			case "image":
				_, sz, _ := jsonscan.StringPrefix(data, 0)
				add("[image]", sz)
			}
			return true
		})
		if err == nil {
			return transcript.CutBytes(text.String(), resultBudget), size
		}
	}
	return transcript.CutBytes(string(raw), resultBudget), int64(len(raw))
}

// resultBudget is how much of a result's text is decoded: the output kept, and the margin Clip
// scrubs beyond it.
const resultBudget = maxOutput + 1024

// metaDuration reads the duration a toolUseResult reports: durationMs (Glob, Grep, WebFetch),
// totalDurationMs (Task) or durationSeconds (WebSearch). It decodes nothing else of the result,
// which can hold whole files.
func metaDuration(meta json.RawMessage) (int64, bool) {
	// Most results (a command's, a file's) report none: a search for the keys' common part is
	// many times quicker than walking the members, which reads every string of the result.
	if len(meta) == 0 || meta[0] != '{' || !bytes.Contains(meta, []byte("uration")) {
		return 0, false
	}
	var ms, total, secs json.RawMessage
	if jsonscan.MembersValid(meta, func(k, v []byte) bool {
		switch {
		case jsonscan.Key(k, "durationMs"):
			ms = v
		case jsonscan.Key(k, "totalDurationMs"):
			total = v
		case jsonscan.Key(k, "durationSeconds"):
			secs = v
		}
		return true
	}) != nil {
		return 0, false
	}
	if ms, ok := jsonInt(ms); ok && ms > 0 {
		return ms, true
	}
	if ms, ok := jsonInt(total); ok && ms > 0 {
		return ms, true
	}
	if s, ok := jsonscan.Float(secs); ok && s > 0 && s < 1e9 {
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
