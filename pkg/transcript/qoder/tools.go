package qoder

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// toolOf maps a tool call to its action type and target (see the package doc); rel makes a file
// path relative to the project.
func toolOf(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
	switch name {
	case "Read":
		return event.ActionReadFile, rel(str(in, "file_path", "path", "notebook_path"))
	case "Write":
		return event.ActionWriteFile, rel(str(in, "file_path", "path"))
	case "Edit", "MultiEdit", "NotebookEdit":
		return event.ActionEditFile, rel(str(in, "file_path", "notebook_path", "path"))
	case "Bash", "PowerShell", "run_command":
		return event.ActionRunCommand, str(in, "command", "cmd")
	case "Grep":
		t := str(in, "pattern", "query", "regex")
		if dir := str(in, "path"); dir != "" {
			t += " in " + rel(dir)
		}
		return event.ActionSearchText, t
	case "Glob", "LS":
		if p := str(in, "pattern", "glob", "query"); p != "" {
			return event.ActionSearchFiles, p
		}
		return event.ActionSearchFiles, rel(str(in, "path", "directory"))
	case "WebFetch":
		return event.ActionWebFetch, str(in, "url")
	case "WebSearch":
		return event.ActionWebSearch, str(in, "query")
	case "Task", "Agent":
		t := str(in, "description", "prompt")
		if ty := str(in, "subagent_type"); ty != "" {
			t = ty + ": " + t
		}
		return event.ActionSpawnSubagent, t
	case "TodoWrite":
		return event.ActionTodoUpdate, ""
	case "AskUserQuestion":
		return event.ActionAskUser, str(in, "question")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

// str returns the first of keys in m that holds a non-blank string, trimmed.
func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}
