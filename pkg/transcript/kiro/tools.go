package kiro

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a Kiro tool call to its action type and target (see the package doc). The name is
// compared without case, "_", "-" and spaces, so that the CLI's snake_case names (fs_read), its
// v2 aliases (read, write, shell) and the agent's camelCase names (readFile, fsWrite) meet.
func (s *scope) toolOf(name string, in map[string]any) (event.ActionType, string) {
	if server, tool, ok := mcpName(name); ok {
		return event.ActionMCPCall, server + "/" + tool
	}
	switch normTool(name) {
	case "fsread", "read", "readfile", "readfiles", "readmultiplefiles", "fileread", "readcode", "imageread":
		path := s.relPath(firstPath(in))
		switch strings.ToLower(transcript.Arg(in, "mode")) {
		case "directory":
			return event.ActionSearchFiles, path
		case "search":
			return event.ActionSearchText, joinIn(transcript.Arg(in, "pattern"), path)
		}
		if mode, pattern := firstOp(in); mode == "directory" {
			return event.ActionSearchFiles, path
		} else if mode == "search" {
			return event.ActionSearchText, joinIn(pattern, path)
		}
		return event.ActionReadFile, path
	case "fswrite", "write", "filewrite", "writefile", "fsappend", "create", "createfile", "append":
		switch normTool(transcript.Arg(in, "command")) {
		case "strreplace", "insert", "append", "edit":
			return event.ActionEditFile, s.relPath(firstPath(in))
		}
		if normTool(name) == "fsappend" || normTool(name) == "append" {
			return event.ActionEditFile, s.relPath(firstPath(in))
		}
		return event.ActionWriteFile, s.relPath(firstPath(in))
	case "strreplace", "edit", "editfile", "replace", "multiedit", "deletefile", "rm", "remove", "undo", "undoedit":
		return event.ActionEditFile, s.relPath(firstPath(in))
	case "mkdir", "createdirectory":
		return event.ActionWriteFile, s.relPath(firstPath(in))
	case "executebash", "executecmd", "executepwsh", "executecommand", "shell", "bash", "runcommand", "execute":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "useaws":
		return event.ActionRunCommand, strings.TrimSpace("aws " + transcript.Arg(in, "service_name", "serviceName") + " " +
			transcript.Arg(in, "operation_name", "operationName"))
	case "glob", "filesearch", "findfiles", "find", "ls", "listdirectory", "listdir":
		if p := transcript.Arg(in, "pattern", "query", "glob"); p != "" {
			return event.ActionSearchFiles, p
		}
		return event.ActionSearchFiles, s.relPath(firstPath(in))
	case "grep", "grepsearch", "searchtext", "search":
		return event.ActionSearchText, joinIn(transcript.Arg(in, "pattern", "query", "regex"), s.relPath(transcript.Arg(in, "path", "includePattern")))
	case "websearch", "remotewebsearch":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "webfetch", "fetch", "readurl":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "usesubagent", "subagent", "delegate", "invokesubagent", "agentcrew", "task":
		return event.ActionSpawnSubagent, subagentTarget(in)
	case "todolist", "todo", "todowrite", "taskcreate", "taskupdate", "tasklist", "taskget", "taskstatus":
		return event.ActionTodoUpdate, ""
	}
	return event.ActionUnknown, ""
}

// normTool is a tool name without case, "_", "-" and spaces.
func normTool(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r != '_' && r != '-' && r != ' ' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mcpName splits an MCP tool's name: the v1 CLI's "<server>___<tool>" (what the model is shown)
// or an agent configuration's "@<server>/<tool>".
func mcpName(name string) (server, tool string, ok bool) {
	if s, t, found := strings.Cut(name, "___"); found && s != "" && t != "" {
		return s, t, true
	}
	if rest, found := strings.CutPrefix(name, "@"); found {
		if s, t, found := strings.Cut(rest, "/"); found && s != "" && t != "" {
			return s, t, true
		}
	}
	return "", "", false
}

// firstPath is a call's path: path, file_path, filePath, target_file, the first of paths, or the
// first operation's (the v1 fs_read's operations list).
func firstPath(in map[string]any) string {
	if p := transcript.Arg(in, "path", "file_path", "filePath", "target_file", "targetFile", "file"); p != "" {
		return p
	}
	for _, k := range []string{"paths", "filePaths", "files"} {
		if list, ok := in[k].([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
					return strings.TrimSpace(s)
				}
				if m, ok := v.(map[string]any); ok {
					if p := transcript.Arg(m, "path", "file_path", "filePath"); p != "" {
						return p
					}
				}
			}
		}
	}
	if ops, ok := in["operations"].([]any); ok && len(ops) > 0 {
		if m, ok := ops[0].(map[string]any); ok {
			return transcript.Arg(m, "path", "file_path")
		}
	}
	return ""
}

// firstOp is the mode and pattern of a v1 fs_read's first operation.
func firstOp(in map[string]any) (mode, pattern string) {
	if ops, ok := in["operations"].([]any); ok && len(ops) > 0 {
		if m, ok := ops[0].(map[string]any); ok {
			return strings.ToLower(transcript.Arg(m, "mode")), transcript.Arg(m, "pattern")
		}
	}
	return "", ""
}

func joinIn(pattern, where string) string {
	if where == "" {
		return pattern
	}
	if pattern == "" {
		return where
	}
	return pattern + " in " + where
}

func subagentTarget(in map[string]any) string {
	if t := transcript.Arg(in, "task", "prompt", "query", "description", "message", "agent_name", "agentName", "name"); t != "" {
		return t
	}
	// use_subagent's {command: "InvokeSubagents", content: {subagents: [{query, agent_name}]}}.
	if c, ok := in["content"].(map[string]any); ok {
		if list, ok := c["subagents"].([]any); ok && len(list) > 0 {
			if m, ok := list[0].(map[string]any); ok {
				return transcript.Arg(m, "query", "relevant_context", "agent_name")
			}
		}
	}
	return ""
}
