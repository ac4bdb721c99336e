package openhands

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// toolOf maps a tool call (its action, or its observation, which repeats the command and path) to
// its action type and target (see the package doc).
func (r *eventReader) toolOf(name string, in map[string]any) (event.ActionType, string) {
	if kind, _ := in["kind"].(string); kind == "MCPToolAction" || kind == "MCPToolObservation" {
		return event.ActionMCPCall, name
	}
	switch name {
	case "terminal", "execute_bash", "bash":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "file_editor", "str_replace_editor", "planning_file_editor":
		path := r.relPath(transcript.Arg(in, "path"))
		switch transcript.Arg(in, "command") {
		case "view":
			return event.ActionReadFile, path
		case "create":
			return event.ActionWriteFile, path
		}
		return event.ActionEditFile, path
	case "apply_patch":
		return event.ActionEditFile, r.relPath(patchFile(transcript.Arg(in, "patch", "input")))
	case "glob":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + r.relPath(dir)
		}
		return event.ActionSearchFiles, t
	case "grep":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + r.relPath(dir)
		} else if inc := transcript.Arg(in, "include"); inc != "" {
			t += " in " + inc
		}
		return event.ActionSearchText, t
	case "browser_navigate":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "task_tracker":
		return event.ActionTodoUpdate, ""
	case "delegate", "task":
		return event.ActionSpawnSubagent, firstTask(in)
	case "finish":
		return event.ActionTaskComplete, transcript.Arg(in, "message")
	}
	return event.ActionUnknown, ""
}

// firstTask is a delegation's first task: a prompt, a description, or the first of its tasks.
func firstTask(in map[string]any) string {
	if s := transcript.Arg(in, "description", "prompt", "task"); s != "" {
		return s
	}
	if tasks, ok := in["tasks"].([]any); ok {
		for _, t := range tasks {
			switch v := t.(type) {
			case string:
				if strings.TrimSpace(v) != "" {
					return strings.TrimSpace(v)
				}
			case map[string]any:
				if s := transcript.Arg(v, "description", "prompt", "task"); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// patchFile is the first file an apply_patch patch names.
func patchFile(patch string) string {
	for _, line := range strings.Split(patch, "\n") {
		for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), pre); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}
