package goose

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// builtins are the extensions goose ships (crates/goose-mcp and the platform tools): their other
// tools are no MCP calls of the user's.
var builtins = map[string]bool{"developer": true, "computercontroller": true, "memory": true, "platform": true,
	"todo": true, "chatrecall": true, "extensionmanager": true, "dynamic_task": true, "subagent": true,
	"tutorial": true, "autovisualiser": true, "skills": true, "code_execution": true, "apps": true}

// toolTypes maps the tool part of a name (after "<extension>__") to the taxonomy; text_editor
// depends on its command.
var toolTypes = map[string]event.ActionType{
	"shell":        event.ActionRunCommand,
	"file_write":   event.ActionWriteFile,
	"file_edit":    event.ActionEditFile,
	"tree":         event.ActionSearchFiles,
	"todo_write":   event.ActionTodoUpdate,
	"web_search":   event.ActionWebSearch,
	"web_scrape":   event.ActionWebFetch,
	"create_task":  event.ActionSpawnSubagent,
	"execute_task": event.ActionSpawnSubagent,
	"delegate":     event.ActionSpawnSubagent,
}

// splitName splits "<extension>__<tool>"; a name without "__" is all tool.
func splitName(name string) (ext, tool string) {
	name = strings.ToLower(strings.TrimSpace(name))
	if e, t, ok := strings.Cut(name, "__"); ok {
		return e, t
	}
	return "", name
}

// ToolType returns the normalized type of a goose tool call (see the package doc).
func ToolType(name string, args map[string]any) event.ActionType {
	ext, tool := splitName(name)
	if tool == "text_editor" {
		switch strings.ToLower(str(args, "command")) {
		case "view":
			return event.ActionReadFile
		case "write", "create":
			return event.ActionWriteFile
		case "str_replace", "insert", "undo_edit", "edit":
			return event.ActionEditFile
		}
		return event.ActionUnknown
	}
	if t, ok := toolTypes[tool]; ok {
		return t
	}
	if ext != "" && !builtins[ext] {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// readArgs decodes a call's arguments object; nil when it is none.
func readArgs(raw []byte) map[string]any {
	var m map[string]any
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// str returns the first of the named arguments that is a non-empty string.
func str(args map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := args[n].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// target returns what a call acts on: the command, the path relative to the project, the
// directory of tree ("." when none), the query, the URL, the task.
func (r *reader) target(s *session, name string, typ event.ActionType, args map[string]any) string {
	if args == nil {
		return ""
	}
	switch typ {
	case event.ActionRunCommand:
		return str(args, "command", "cmd")
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		return r.relPath(s, str(args, "path", "file_path", "filePath"))
	case event.ActionSearchFiles:
		if p := str(args, "path", "directory"); p != "" {
			return r.relPath(s, p)
		}
		return "."
	case event.ActionWebSearch:
		return str(args, "query")
	case event.ActionWebFetch:
		return str(args, "url")
	case event.ActionSpawnSubagent:
		return str(args, "instructions", "prompt", "task", "description")
	case event.ActionTodoUpdate:
		return ""
	}
	if p := str(args, "path", "file_path"); p != "" {
		return r.relPath(s, p)
	}
	return str(args, "command", "query", "url", "pattern")
}

// relPath returns file relative to the session's project when it lies inside it; a relative path
// is relative to the working directory.
func (r *reader) relPath(s *session, file string) string {
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if s.cwd == "" || !filepath.IsAbs(s.cwd) || strings.HasPrefix(file, "~") {
			return filepath.Clean(file)
		}
		file = filepath.Join(s.cwd, file)
	}
	file = filepath.Clean(file)
	if root := r.project(s.cwd); root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}

// hashInput hashes a call's arguments, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}
