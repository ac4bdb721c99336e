package iflow

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/gemini"
)

// toolType maps an iFlow tool to the taxonomy: Gemini CLI's names, which iFlow keeps
// (gemini.ToolType), and iFlow's own.
func toolType(name string) event.ActionType {
	switch name {
	case "task":
		return event.ActionSpawnSubagent
	case "todo_read", "todo_write":
		return event.ActionTodoUpdate
	case "multi_edit":
		return event.ActionEditFile
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok && strings.Contains(rest, "__") {
		return event.ActionMCPCall
	}
	return gemini.ToolType(name)
}

// toolOf maps a tool call to its action type and target (see the package doc); rel makes a file
// path relative to the project.
func toolOf(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
	ty := toolType(name)
	switch ty {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		if p := transcript.Arg(in, "absolute_path", "file_path", "path"); p != "" {
			return ty, rel(p)
		}
		if paths, ok := in["paths"].([]any); ok && len(paths) > 0 {
			if p, ok := paths[0].(string); ok {
				return ty, rel(p)
			}
		}
		return ty, ""
	case event.ActionRunCommand:
		return ty, transcript.Arg(in, "command", "cmd")
	case event.ActionSearchText:
		t := transcript.Arg(in, "pattern", "query")
		if dir := transcript.Arg(in, "path", "dir_path"); dir != "" {
			t += " in " + rel(dir)
		}
		return ty, t
	case event.ActionSearchFiles:
		if p := transcript.Arg(in, "pattern"); p != "" {
			return ty, p
		}
		return ty, rel(transcript.Arg(in, "path", "dir_path"))
	case event.ActionWebSearch:
		return ty, transcript.Arg(in, "query")
	case event.ActionWebFetch:
		return ty, transcript.Arg(in, "url", "prompt")
	case event.ActionSpawnSubagent:
		t := transcript.Arg(in, "description", "prompt", "objective")
		if a := transcript.Arg(in, "subagent_type", "agent_name"); a != "" {
			t = a + ": " + t
		}
		return ty, t
	case event.ActionAskUser:
		return ty, transcript.Arg(in, "question")
	case event.ActionMCPCall:
		if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
			server, tool, _ := strings.Cut(rest, "__")
			return ty, server + "/" + tool
		}
		if server, tool, ok := strings.Cut(name, "__"); ok {
			return ty, server + "/" + tool
		}
		return ty, name
	}
	return ty, ""
}
