package trae

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a trae-agent tool call to its action type and target (see the package doc).
func toolOf(name string, in map[string]any, cwd, root string) (event.ActionType, string) {
	rel := func(p string) string { return transcript.RelPath(p, cwd, root) }
	switch name {
	case "bash":
		return event.ActionRunCommand, str(in, "command")
	case "str_replace_based_edit_tool":
		path := rel(str(in, "path"))
		switch str(in, "command") {
		case "view":
			return event.ActionReadFile, path
		case "create":
			return event.ActionWriteFile, path
		}
		return event.ActionEditFile, path
	case "json_edit_tool":
		return event.ActionEditFile, rel(str(in, "file_path", "path"))
	case "ckg":
		return event.ActionSearchText, str(in, "identifier", "query")
	case "task_done":
		return event.ActionTaskComplete, ""
	}
	return event.ActionUnknown, ""
}

func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}
