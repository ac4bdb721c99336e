package qoder

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a tool call to its action type and target (see the package doc); rel makes a file
// path relative to the project.
func toolOf(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
	switch name {
	case "Read":
		return event.ActionReadFile, rel(transcript.Arg(in, "file_path", "path", "notebook_path"))
	case "Write":
		return event.ActionWriteFile, rel(transcript.Arg(in, "file_path", "path"))
	case "Edit", "MultiEdit", "NotebookEdit":
		return event.ActionEditFile, rel(transcript.Arg(in, "file_path", "notebook_path", "path"))
	case "Bash", "PowerShell", "run_command":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "Grep":
		t := transcript.Arg(in, "pattern", "query", "regex")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + rel(dir)
		}
		return event.ActionSearchText, t
	case "Glob", "LS":
		if p := transcript.Arg(in, "pattern", "glob", "query"); p != "" {
			return event.ActionSearchFiles, p
		}
		return event.ActionSearchFiles, rel(transcript.Arg(in, "path", "directory"))
	case "WebFetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "WebSearch":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "Task", "Agent":
		t := transcript.Arg(in, "description", "prompt")
		if ty := transcript.Arg(in, "subagent_type"); ty != "" {
			t = ty + ": " + t
		}
		return event.ActionSpawnSubagent, t
	case "TodoWrite":
		return event.ActionTodoUpdate, ""
	case "AskUserQuestion":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}
