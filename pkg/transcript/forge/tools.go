package forge

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a tool call to its action type and target (see the package doc); rel makes a file
// path relative to the project.
func toolOf(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
	switch strings.TrimPrefix(name, "forge_tool_") {
	case "read", "read_image", "fs_read":
		return event.ActionReadFile, rel(transcript.Arg(in, "path", "file_path"))
	case "write", "fs_create", "fs_write":
		return event.ActionWriteFile, rel(transcript.Arg(in, "path", "file_path"))
	case "patch", "multi_patch", "fs_patch", "undo", "fs_undo", "remove", "fs_remove":
		return event.ActionEditFile, rel(transcript.Arg(in, "path", "file_path"))
	case "shell", "process_shell":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "search", "fs_search":
		if re := transcript.Arg(in, "regex", "pattern"); re != "" {
			if dir := transcript.Arg(in, "path"); dir != "" {
				re += " in " + rel(dir)
			}
			return event.ActionSearchText, re
		}
		if p := transcript.Arg(in, "file_pattern", "glob"); p != "" {
			return event.ActionSearchFiles, p
		}
		return event.ActionSearchFiles, rel(transcript.Arg(in, "path"))
	case "codebase_search", "sem_search":
		return event.ActionSearchText, transcript.Arg(in, "query")
	case "fetch", "net_fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "followup":
		return event.ActionAskUser, transcript.Arg(in, "question")
	case "attempt_completion":
		return event.ActionTaskComplete, ""
	case "todo_write", "todo_read", "plan", "plan_create":
		return event.ActionTodoUpdate, transcript.Arg(in, "plan_name")
	case "task":
		return event.ActionSpawnSubagent, transcript.Arg(in, "agent_id", "agent", "description", "task", "prompt")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	if rest, ok := strings.CutPrefix(name, "mcp_"); ok {
		if server, tool, ok := strings.Cut(rest, "_tool_"); ok {
			return event.ActionMCPCall, server + "/" + tool
		}
		return event.ActionMCPCall, rest
	}
	return event.ActionUnknown, ""
}
