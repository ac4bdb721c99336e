package zed

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a Zed tool call to its action type and target (see the package doc).
func (t *threadReader) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "terminal", "sandboxed_terminal":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "read_file":
		return event.ActionReadFile, t.relPath(transcript.Arg(in, "path"))
	case "edit_file", "streaming_edit_file":
		switch transcript.Arg(in, "mode") {
		case "create", "overwrite", "write":
			return event.ActionWriteFile, t.relPath(transcript.Arg(in, "path"))
		}
		return event.ActionEditFile, t.relPath(transcript.Arg(in, "path"))
	case "write_file", "create_file":
		return event.ActionWriteFile, t.relPath(transcript.Arg(in, "path"))
	case "delete_path", "restore_file_from_disk", "save_file":
		return event.ActionEditFile, t.relPath(firstPath(in, "path", "paths"))
	case "move_path":
		return event.ActionEditFile, t.relPath(transcript.Arg(in, "source_path", "path"))
	case "copy_path":
		return event.ActionWriteFile, t.relPath(transcript.Arg(in, "destination_path", "path"))
	case "create_directory":
		return event.ActionWriteFile, t.relPath(transcript.Arg(in, "path"))
	case "grep":
		target := transcript.Arg(in, "regex", "pattern")
		if inc := transcript.Arg(in, "include_pattern"); inc != "" {
			target += " in " + inc
		}
		return event.ActionSearchText, target
	case "find_path":
		return event.ActionSearchFiles, transcript.Arg(in, "glob")
	case "list_directory":
		return event.ActionSearchFiles, t.relPath(transcript.Arg(in, "path"))
	case "fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "spawn_agent", "subagent":
		return event.ActionSpawnSubagent, transcript.Arg(in, "label", "message", "task")
	case "update_plan":
		return event.ActionTodoUpdate, ""
	case "ask_user":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	return event.ActionUnknown, ""
}

// firstPath reads a path argument, or the first of a list of paths.
func firstPath(m map[string]any, key, listKey string) string {
	if s := transcript.Arg(m, key); s != "" {
		return s
	}
	if list, ok := m[listKey].([]any); ok {
		for _, v := range list {
			if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
				return strings.TrimSpace(s)
			}
		}
	}
	return ""
}
