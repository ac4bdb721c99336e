package opencode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// toolTypes maps OpenCode's and Kilo's built-in tool names to the taxonomy (see the package doc).
var toolTypes = map[string]event.ActionType{
	"read":        event.ActionReadFile,
	"write":       event.ActionWriteFile,
	"edit":        event.ActionEditFile,
	"multiedit":   event.ActionEditFile,
	"patch":       event.ActionEditFile,
	"apply_patch": event.ActionEditFile,
	"bash":        event.ActionRunCommand,
	"grep":        event.ActionSearchText,
	"glob":        event.ActionSearchFiles,
	"list":        event.ActionSearchFiles,
	"ls":          event.ActionSearchFiles,
	"webfetch":    event.ActionWebFetch,
	"websearch":   event.ActionWebSearch,
	"codesearch":  event.ActionWebSearch,
	"task":        event.ActionSpawnSubagent,
	"todowrite":   event.ActionTodoUpdate,
	"question":    event.ActionAskUser,
}

// ToolType returns the normalized type of a tool name.
func ToolType(name string) event.ActionType {
	if t, ok := toolTypes[strings.ToLower(strings.TrimSpace(name))]; ok {
		return t
	}
	return event.ActionUnknown
}

// target returns what a tool call acts on: a path relative to the project when inside it, the
// command, the pattern (" in <path>" when given), the URL, the query, "<agent>: <description>".
func (p *Parser) target(tool string, raw json.RawMessage, dir string) string {
	var in map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
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
	rel := func(path string) string { return p.relPath(path, dir) }
	switch strings.ToLower(tool) {
	case "read", "write", "edit", "multiedit":
		return rel(str("filePath", "file_path", "path"))
	case "bash":
		return str("command")
	case "grep", "glob":
		if d := str("path"); d != "" {
			return str("pattern") + " in " + rel(d)
		}
		return str("pattern")
	case "list", "ls":
		if d := str("path"); d != "" {
			return rel(d)
		}
		return "."
	case "webfetch":
		return str("url")
	case "websearch", "codesearch":
		return str("query")
	case "task":
		agent, desc := str("subagent_type", "agent"), str("description", "prompt")
		if agent != "" && desc != "" {
			return agent + ": " + desc
		}
		return agent + desc
	case "patch", "apply_patch":
		for _, line := range strings.Split(str("patchText", "patch"), "\n") {
			for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
				if f, ok := strings.CutPrefix(strings.TrimSpace(line), pre); ok {
					return rel(f)
				}
			}
		}
		return ""
	case "question":
		return str("question")
	}
	if s := str("filePath", "path", "file_path"); s != "" {
		return rel(s)
	}
	return str("command", "pattern", "url", "query")
}

// relPath returns file relative to the project of dir when it lies inside it.
func (p *Parser) relPath(file, dir string) string {
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if dir == "" || !filepath.IsAbs(dir) {
			return filepath.Clean(file)
		}
		file = filepath.Join(dir, file)
	}
	file = filepath.Clean(file)
	if root := p.project(dir); root != "" {
		if r, err := filepath.Rel(root, file); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return file
}

// hashInput hashes a tool call's input, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
