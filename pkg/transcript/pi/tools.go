package pi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// toolTypes maps lower-cased tool names to the taxonomy: pi's built-in tools (read, bash, edit,
// write, grep, find, ls), the names Claude Code gives the same tools (pi sends those to
// Anthropic when it signs in with a Claude subscription, and maps them back before it logs, but
// an extension may register them), and the names pi's example and community extensions use.
var toolTypes = map[string]event.ActionType{
	"read":            event.ActionReadFile,
	"write":           event.ActionWriteFile,
	"edit":            event.ActionEditFile,
	"multiedit":       event.ActionEditFile,
	"bash":            event.ActionRunCommand,
	"grep":            event.ActionSearchText,
	"find":            event.ActionSearchFiles,
	"glob":            event.ActionSearchFiles,
	"ls":              event.ActionSearchFiles,
	"subagent":        event.ActionSpawnSubagent,
	"task":            event.ActionSpawnSubagent,
	"agent":           event.ActionSpawnSubagent,
	"todo":            event.ActionTodoUpdate,
	"todo_write":      event.ActionTodoUpdate,
	"todowrite":       event.ActionTodoUpdate,
	"question":        event.ActionAskUser,
	"questionnaire":   event.ActionAskUser,
	"ask_user":        event.ActionAskUser,
	"askuserquestion": event.ActionAskUser,
	"web_search":      event.ActionWebSearch,
	"websearch":       event.ActionWebSearch,
	"web_fetch":       event.ActionWebFetch,
	"webfetch":        event.ActionWebFetch,
	"fetch":           event.ActionWebFetch,
	"mcp":             event.ActionMCPCall,
}

// ToolType returns the normalized type of a pi tool name (see the package doc).
func ToolType(name string) event.ActionType { return piTools.Type(name) }

// Tools is how a client's tool calls become actions.
type Tools struct {
	// Types maps lower-cased tool names to the taxonomy.
	Types map[string]event.ActionType
	// Target returns what a call of tool acts on, from its arguments (an object: Reader.Target
	// asks for no other); r.RelPath makes a path relative to the project.
	Target func(r *Reader, s *Session, tool string, a Args) string
	// Unwrap returns the tool a call really runs and that tool's arguments, for a tool that
	// runs another; nil means every call runs the tool it names.
	Unwrap func(name string, args []byte) (tool string, toolArgs []byte)
}

// piTools is pi's mapping (see the package doc).
var piTools = Tools{Types: toolTypes, Target: target}

// Type returns the action type of a tool name, case-insensitive: its entry in Types, else
// mcp_call for a name that starts with mcp_ (an MCP server's tool), else unknown.
func (t Tools) Type(name string) event.ActionType {
	n := strings.ToLower(strings.TrimSpace(name))
	if typ, ok := t.Types[n]; ok {
		return typ
	}
	if strings.HasPrefix(n, "mcp_") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// Target returns what a call of tool with these arguments (raw JSON) acts on, through
// Tools.Target, cut to 500 characters; "" when the arguments are not an object.
func (r *Reader) Target(s *Session, tool string, args []byte) string {
	a := ReadArgs(args)
	if a == nil {
		return ""
	}
	return clipTarget(r.Tools.Target(r, s, tool, a))
}

// Args are the top-level members of a tool call's arguments, raw.
type Args map[string][]byte

// ReadArgs reads a tool call's arguments; nil when they are not an object.
func ReadArgs(raw []byte) Args {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	a := Args{}
	_ = jsonscan.Members(raw, func(k, v []byte) bool {
		a[string(k[1:len(k)-1])] = v
		return true
	})
	return a
}

// Str returns the first of the named members that holds a non-empty string, trimmed.
func (a Args) Str(names ...string) string {
	for _, n := range names {
		if s := strings.TrimSpace(jsonscan.Str(a[n])); s != "" {
			return s
		}
	}
	return ""
}

// First returns the arguments of the first element of an array member.
func (a Args) First(name string) Args {
	var out Args
	_ = jsonscan.Elements(a[name], func(v []byte) bool {
		out = ReadArgs(v)
		return false
	})
	return out
}

// target returns what a pi tool call acts on (see the package doc).
func target(r *Reader, s *Session, tool string, a Args) string {
	switch n := strings.ToLower(strings.TrimSpace(tool)); n {
	case "read", "write", "edit", "multiedit":
		return r.RelPath(s, a.Str("path", "file_path"))
	case "bash":
		return a.Str("command")
	case "grep", "find", "glob":
		pat := a.Str("pattern")
		if dir := a.Str("path"); dir != "" {
			return pat + " in " + r.RelPath(s, dir)
		}
		return pat
	case "ls":
		if dir := a.Str("path"); dir != "" {
			return r.RelPath(s, dir)
		}
		return "."
	case "subagent", "task", "agent":
		if a.Str("task", "prompt", "description") == "" {
			for _, list := range []string{"tasks", "chain"} {
				if f := a.First(list); f != nil {
					a = f
					break
				}
			}
		}
		agent, task := a.Str("agent", "subagent_type"), a.Str("task", "description", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case "question", "questionnaire", "ask_user", "askuserquestion":
		if q := a.Str("question"); q != "" {
			return q
		}
		return a.First("questions").Str("question", "prompt")
	case "web_search", "websearch":
		return a.Str("query")
	case "web_fetch", "webfetch", "fetch":
		return a.Str("url")
	}
	if f := a.Str("path", "file_path"); f != "" {
		return r.RelPath(s, f)
	}
	return a.Str("command", "pattern", "url", "query")
}

// HashInput hashes a tool call's arguments, so repeated calls can be found.
func HashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
