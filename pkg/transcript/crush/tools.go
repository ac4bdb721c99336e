package crush

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolTypes maps Crush's built-in tool names to the taxonomy (see the package doc).
var toolTypes = map[string]event.ActionType{
	"view":          event.ActionReadFile,
	"write":         event.ActionWriteFile,
	"edit":          event.ActionEditFile,
	"multiedit":     event.ActionEditFile,
	"bash":          event.ActionRunCommand,
	"grep":          event.ActionSearchText,
	"glob":          event.ActionSearchFiles,
	"ls":            event.ActionSearchFiles,
	"fetch":         event.ActionWebFetch,
	"agentic_fetch": event.ActionWebFetch,
	"download":      event.ActionWebFetch,
	"sourcegraph":   event.ActionWebSearch,
	"web_search":    event.ActionWebSearch,
	"agent":         event.ActionSpawnSubagent,
	"todos":         event.ActionTodoUpdate,
}

// ToolType returns the normalized type of a Crush tool name. Crush names an MCP server's tool
// mcp_<server>_<tool>, which no built-in shares.
func ToolType(name string) event.ActionType {
	name = strings.ToLower(strings.TrimSpace(name))
	if t, ok := toolTypes[name]; ok {
		return t
	}
	if strings.HasPrefix(name, "mcp_") && len(name) > len("mcp_") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// target returns what a tool call acts on: a path relative to the project when inside it, the
// command, the pattern (" in <path>" when given), the URL, the query, the sub-agent's prompt.
func (p *Parser) target(tool string, raw []byte) string {
	var in map[string]any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &in) != nil {
		return ""
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
		return ""
	}
	switch strings.ToLower(tool) {
	case "view", "write", "edit", "multiedit":
		return p.relPath(str("file_path", "path"))
	case "bash":
		return str("command")
	case "grep", "glob":
		if d := str("path"); d != "" {
			return str("pattern") + " in " + p.relPath(d)
		}
		return str("pattern")
	case "ls":
		if d := str("path"); d != "" {
			return p.relPath(d)
		}
		return "."
	case "fetch", "agentic_fetch", "download":
		return str("url")
	case "sourcegraph", "web_search":
		return str("query")
	case "agent":
		return str("prompt", "description")
	case "todos":
		if todos, ok := in["todos"].([]any); ok {
			return plural(len(todos), "item")
		}
		return ""
	}
	if s := str("file_path", "path"); s != "" {
		return p.relPath(s)
	}
	return str("command", "pattern", "url", "query", "prompt")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// relPath returns file relative to the project when it lies inside it; a relative path is taken
// from the project's directory (Crush runs its tools there).
func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.dir, p.root) }

// hashInput hashes a tool call's input, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
