package deepseektui

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a tool call to its action type and target (see the package doc); rel makes a file
// path relative to the project.
func toolOf(name string, in map[string]any, rel func(string) string) (event.ActionType, string) {
	switch name {
	case "read_file":
		return event.ActionReadFile, rel(transcript.Arg(in, "path", "file_path"))
	case "write_file":
		return event.ActionWriteFile, rel(transcript.Arg(in, "path", "file_path"))
	case "edit_file":
		return event.ActionEditFile, rel(transcript.Arg(in, "path", "file_path"))
	case "apply_patch":
		if p := transcript.Arg(in, "path", "file_path"); p != "" {
			return event.ActionEditFile, rel(p)
		}
		return event.ActionEditFile, rel(patchFile(transcript.Arg(in, "patch", "input", "diff")))
	case "exec_shell", "task_shell_start", "task_gate_run":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "run_tests":
		t := "cargo test"
		if args := transcript.Arg(in, "args"); args != "" {
			t += " " + args
		}
		return event.ActionRunCommand, t
	case "grep_files":
		t := transcript.Arg(in, "pattern", "regex", "query")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + rel(dir)
		}
		return event.ActionSearchText, t
	case "list_dir":
		return event.ActionSearchFiles, rel(transcript.Arg(in, "path"))
	case "file_search":
		return event.ActionSearchFiles, transcript.Arg(in, "query", "pattern")
	case "web_search", "web.run":
		return event.ActionWebSearch, transcript.Arg(in, "query", "q")
	case "fetch_url":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "agent_open", "agent_spawn", "spawn_agent", "delegate_to_agent":
		t := transcript.Arg(in, "task", "prompt", "message", "objective")
		if n := transcript.Arg(in, "name", "role", "agent_type"); n != "" {
			t = n + ": " + t
		}
		return event.ActionSpawnSubagent, t
	case "update_plan":
		return event.ActionTodoUpdate, ""
	}
	switch {
	case strings.HasPrefix(name, "checklist_"), strings.HasPrefix(name, "todo_"):
		return event.ActionTodoUpdate, ""
	case strings.HasPrefix(name, "mcp_") && len(name) > len("mcp_"):
		return event.ActionMCPCall, strings.TrimPrefix(name, "mcp_")
	}
	return event.ActionUnknown, ""
}

// patchFile is the first file a patch names ("*** Update File: x", "*** Add File: x", "+++ b/x").
func patchFile(patch string) string {
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/"} {
			if rest, ok := strings.CutPrefix(line, p); ok && strings.TrimSpace(rest) != "" {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}
