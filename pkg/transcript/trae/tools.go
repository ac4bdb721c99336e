package trae

import (
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a trae-agent tool call to its action type and target (see the package doc).
func toolOf(name string, in map[string]any, cwd, root string) (event.ActionType, string) {
	rel := func(p string) string { return transcript.RelPath(p, cwd, root) }
	switch name {
	case "bash":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "str_replace_based_edit_tool":
		path := rel(transcript.Arg(in, "path"))
		switch transcript.Arg(in, "command") {
		case "view":
			return event.ActionReadFile, path
		case "create":
			return event.ActionWriteFile, path
		}
		return event.ActionEditFile, path
	case "json_edit_tool":
		return event.ActionEditFile, rel(transcript.Arg(in, "file_path", "path"))
	case "ckg":
		return event.ActionSearchText, transcript.Arg(in, "identifier", "query")
	case "task_done":
		return event.ActionTaskComplete, ""
	}
	return event.ActionUnknown, ""
}
