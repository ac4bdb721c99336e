package devin

import (
	"encoding/json"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// ToolType maps a Devin tool name to observer's taxonomy (see the package doc).
func ToolType(name string) event.ActionType {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "read_file", "view_file", "read", "view":
		return event.ActionReadFile
	case "write_file", "write_to_file", "create_file", "write":
		return event.ActionWriteFile
	case "edit_file", "edit", "str_replace", "replace_file_content", "multi_replace_file_content", "multi_edit", "apply_patch":
		return event.ActionEditFile
	case "shell_command", "run_command", "shell", "bash", "exec", "exec_command", "terminal":
		return event.ActionRunCommand
	case "grep", "grep_search", "search", "codebase_search", "ripgrep":
		return event.ActionSearchText
	case "glob", "find_by_name", "list_dir", "ls", "find":
		return event.ActionSearchFiles
	case "web_search", "search_web":
		return event.ActionWebSearch
	case "web_fetch", "fetch", "read_url_content":
		return event.ActionWebFetch
	case "task", "subagent", "spawn_subagent", "agent":
		return event.ActionSpawnSubagent
	case "todo_write", "todo_list", "todo":
		return event.ActionTodoUpdate
	}
	if strings.HasPrefix(n, "mcp_") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// target is what a tool call acts on, from its arguments: a path relative to the project, a
// command, a pattern, a URL or a query.
func target(name string, args []byte, cwd, root string) string {
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	rel := func(p string) string { return transcript.RelPath(p, cwd, root) }
	switch ToolType(name) {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		return rel(transcript.Arg(in, "file_path", "path", "filePath", "AbsolutePath", "TargetFile", "file"))
	case event.ActionRunCommand:
		return transcript.Arg(in, "command", "cmd", "CommandLine")
	case event.ActionSearchText:
		t := transcript.Arg(in, "pattern", "query", "Query", "regex")
		if dir := transcript.Arg(in, "path", "SearchPath", "directory"); dir != "" && t != "" {
			t += " in " + rel(dir)
		}
		return t
	case event.ActionSearchFiles:
		if t := transcript.Arg(in, "pattern", "glob", "Pattern"); t != "" {
			return t
		}
		return rel(transcript.Arg(in, "path", "directory", "DirectoryPath", "SearchDirectory"))
	case event.ActionWebSearch:
		return transcript.Arg(in, "query", "Query")
	case event.ActionWebFetch:
		return transcript.Arg(in, "url", "Url", "URL")
	case event.ActionSpawnSubagent:
		return transcript.Arg(in, "description", "prompt", "task")
	case event.ActionMCPCall:
		rest := strings.TrimPrefix(strings.TrimPrefix(name, "mcp__"), "mcp_")
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			return server + "/" + tool
		}
		return rest
	}
	return ""
}
