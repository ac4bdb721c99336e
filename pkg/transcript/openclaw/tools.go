package openclaw

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
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
func ToolType(name string) event.ActionType {
	n := strings.ToLower(strings.TrimSpace(name))
	if t, ok := toolTypes[n]; ok {
		return t
	}
	if strings.HasPrefix(n, "mcp_") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// wrapperTool is Tool Search's tool_call, which runs the catalog tool its id names with its args.
const wrapperTool = "tool_call"

// unwrap returns the tool a call really runs and its arguments: for tool_call {id, args}, the
// catalog tool id names (a search result id "<...>:<name>" is cut to the name) and args; else the
// call itself.
func unwrap(name string, raw []byte) (string, []byte) {
	if !strings.EqualFold(strings.TrimSpace(name), wrapperTool) {
		return name, raw
	}
	a := readArgs(raw)
	inner := a.str("id", "name", "tool")
	if inner == "" {
		return name, raw
	}
	if i := strings.LastIndexByte(inner, ':'); i >= 0 && i < len(inner)-1 {
		inner = inner[i+1:]
	}
	return inner, a["args"]
}

// args are the top-level members of a tool call's arguments, raw.
type args map[string][]byte

func readArgs(raw []byte) args {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	a := args{}
	_ = jsonscan.Members(raw, func(k, v []byte) bool {
		a[string(k[1:len(k)-1])] = v
		return true
	})
	return a
}

// str returns the first of the named members that holds a non-empty string.
func (a args) str(names ...string) string {
	for _, n := range names {
		if s := strings.TrimSpace(jsonscan.Str(a[n])); s != "" {
			return s
		}
	}
	return ""
}

// first returns the arguments of the first element of an array member.
func (a args) first(name string) args {
	var out args
	_ = jsonscan.Elements(a[name], func(v []byte) bool {
		out = readArgs(v)
		return false
	})
	return out
}

// target returns what a tool call acts on (see the package doc).
func (p *Parser) target(s *sess, tool string, raw []byte) string {
	a := readArgs(raw)
	if a == nil {
		return ""
	}
	switch n := strings.ToLower(strings.TrimSpace(tool)); n {
	case "read", "write", "edit", "multiedit", "view_image", "pdf", "file_fetch", "file_write":
		return p.relPath(s, a.str("path", "file_path", "file"))
	case "apply_patch":
		return p.relPath(s, patchFile(a.str("input", "patch")))
	case "exec", "bash", "code_execution":
		return a.str("command", "code", "cmd")
	case "grep", "find", "glob":
		pat := a.str("pattern", "query")
		if dir := a.str("path"); dir != "" {
			return pat + " in " + p.relPath(s, dir)
		}
		return pat
	case "ls", "dir_list":
		if dir := a.str("path"); dir != "" {
			return p.relPath(s, dir)
		}
		return "."
	case "sessions_spawn", "subagent", "task", "agent":
		agent, task := a.str("agentId", "agent", "subagent_type"), a.str("task", "taskName", "description", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case "ask_user", "question":
		if q := a.str("question"); q != "" {
			return q
		}
		return a.first("questions").str("question", "prompt", "header")
	case "web_search", "x_search", "websearch":
		return a.str("query")
	case "web_fetch", "webfetch", "fetch":
		return a.str("url")
	}
	if f := a.str("path", "file_path"); f != "" {
		return p.relPath(s, f)
	}
	return a.str("command", "pattern", "url", "query", "action")
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

// hashInput hashes a tool call's arguments, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
