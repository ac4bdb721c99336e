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
func (p *Parser) target(tool string, raw []byte) string {
	a := readArgs(raw)
	if a == nil {
		return ""
	}
	switch n := strings.ToLower(strings.TrimSpace(tool)); n {
	case "read", "write", "edit", "multiedit":
		return p.relPath(a.str("path", "file_path"))
	case "bash":
		return a.str("command")
	case "grep", "find", "glob":
		pat := a.str("pattern")
		if dir := a.str("path"); dir != "" {
			return pat + " in " + p.relPath(dir)
		}
		return pat
	case "ls":
		if dir := a.str("path"); dir != "" {
			return p.relPath(dir)
		}
		return "."
	case "subagent", "task", "agent":
		if a.str("task", "prompt", "description") == "" {
			for _, list := range []string{"tasks", "chain"} {
				if f := a.first(list); f != nil {
					a = f
					break
				}
			}
		}
		agent, task := a.str("agent", "subagent_type"), a.str("task", "description", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case "question", "questionnaire", "ask_user", "askuserquestion":
		if q := a.str("question"); q != "" {
			return q
		}
		return a.first("questions").str("question", "prompt")
	case "web_search", "websearch":
		return a.str("query")
	case "web_fetch", "webfetch", "fetch":
		return a.str("url")
	}
	if s := a.str("path", "file_path"); s != "" {
		return p.relPath(s)
	}
	return a.str("command", "pattern", "url", "query")
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
