package openclaw

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/pi"
)

// toolTypes maps lower-cased tool names to the taxonomy: OpenClaw's core tools (group:fs,
// group:runtime, group:web, group:sessions, group:agents and the node file tools of 2026.9.6),
// the names pi and Claude Code give the same tools (OpenClaw accepts bash for exec; plugins may
// register others), and the names pi extensions use.
var toolTypes = map[string]event.ActionType{
	"read":           event.ActionReadFile,
	"view_image":     event.ActionReadFile,
	"pdf":            event.ActionReadFile,
	"file_fetch":     event.ActionReadFile,
	"write":          event.ActionWriteFile,
	"file_write":     event.ActionWriteFile,
	"edit":           event.ActionEditFile,
	"multiedit":      event.ActionEditFile,
	"apply_patch":    event.ActionEditFile,
	"exec":           event.ActionRunCommand,
	"bash":           event.ActionRunCommand,
	"code_execution": event.ActionRunCommand,
	"grep":           event.ActionSearchText,
	"find":           event.ActionSearchFiles,
	"glob":           event.ActionSearchFiles,
	"ls":             event.ActionSearchFiles,
	"dir_list":       event.ActionSearchFiles,
	"sessions_spawn": event.ActionSpawnSubagent,
	"subagent":       event.ActionSpawnSubagent,
	"task":           event.ActionSpawnSubagent,
	"agent":          event.ActionSpawnSubagent,
	"progress_card":  event.ActionTodoUpdate,
	"update_plan":    event.ActionTodoUpdate,
	"todo":           event.ActionTodoUpdate,
	"todo_write":     event.ActionTodoUpdate,
	"todowrite":      event.ActionTodoUpdate,
	"ask_user":       event.ActionAskUser,
	"question":       event.ActionAskUser,
	"web_search":     event.ActionWebSearch,
	"x_search":       event.ActionWebSearch,
	"websearch":      event.ActionWebSearch,
	"web_fetch":      event.ActionWebFetch,
	"webfetch":       event.ActionWebFetch,
	"fetch":          event.ActionWebFetch,
	"mcp":            event.ActionMCPCall,
}

// ToolType returns the normalized type of an OpenClaw tool name (see the package doc).
func ToolType(name string) event.ActionType { return tools.Type(name) }

// wrapperTool is Tool Search's tool_call, which runs the catalog tool its id names with its args.
const wrapperTool = "tool_call"

// unwrap returns the tool a call really runs and its arguments: for tool_call {id, args}, the
// catalog tool id names (a search result id "<...>:<name>" is cut to the name) and args; else the
// call itself.
func unwrap(name string, raw []byte) (string, []byte) {
	if !strings.EqualFold(strings.TrimSpace(name), wrapperTool) {
		return name, raw
	}
	a := pi.ReadArgs(raw)
	inner := a.Str("id", "name", "tool")
	if inner == "" {
		return name, raw
	}
	if i := strings.LastIndexByte(inner, ':'); i >= 0 && i < len(inner)-1 {
		inner = inner[i+1:]
	}
	return inner, a["args"]
}

// tools is OpenClaw's mapping of tool calls (see the package doc).
var tools = pi.Tools{Types: toolTypes, Target: target, Unwrap: unwrap}

// target returns what a tool call acts on (see the package doc).
func target(r *pi.Reader, s *pi.Session, tool string, a pi.Args) string {
	switch n := strings.ToLower(strings.TrimSpace(tool)); n {
	case "read", "write", "edit", "multiedit", "view_image", "pdf", "file_fetch", "file_write":
		return r.RelPath(s, a.Str("path", "file_path", "file"))
	case "apply_patch":
		return r.RelPath(s, patchFile(a.Str("input", "patch")))
	case "exec", "bash", "code_execution":
		return a.Str("command", "code", "cmd")
	case "grep", "find", "glob":
		pat := a.Str("pattern", "query")
		if dir := a.Str("path"); dir != "" {
			return pat + " in " + r.RelPath(s, dir)
		}
		return pat
	case "ls", "dir_list":
		if dir := a.Str("path"); dir != "" {
			return r.RelPath(s, dir)
		}
		return "."
	case "sessions_spawn", "subagent", "task", "agent":
		agent, task := a.Str("agentId", "agent", "subagent_type"), a.Str("task", "taskName", "description", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case "ask_user", "question":
		if q := a.Str("question"); q != "" {
			return q
		}
		return a.First("questions").Str("question", "prompt", "header")
	case "web_search", "x_search", "websearch":
		return a.Str("query")
	case "web_fetch", "webfetch", "fetch":
		return a.Str("url")
	}
	if f := a.Str("path", "file_path"); f != "" {
		return r.RelPath(s, f)
	}
	return a.Str("command", "pattern", "url", "query", "action")
}

// patchFile returns the first file an apply_patch input names ("*** Update File: PATH", Add,
// Delete).
func patchFile(patch string) string {
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"*** Update File:", "*** Add File:", "*** Delete File:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}
