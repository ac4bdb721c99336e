package cline

import (
	"fmt"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// toolTypes maps the tool names of the Cline CLI, the extensions' tools (Cline's, Roo's and
// Kilo's, snake_case in their conversation history) and the extensions' ui "tool" messages
// (camelCase) to the taxonomy.
var toolTypes = map[string]event.ActionType{
	// read
	"read_file": event.ActionReadFile, "read_files": event.ActionReadFile, "readfile": event.ActionReadFile,
	"fetch_instructions": event.ActionReadFile, "fetchinstructions": event.ActionReadFile,
	// write
	"write_to_file": event.ActionWriteFile, "newfilecreated": event.ActionWriteFile, "write_file": event.ActionWriteFile,
	// edit
	"replace_in_file": event.ActionEditFile, "apply_diff": event.ActionEditFile, "insert_content": event.ActionEditFile,
	"search_and_replace": event.ActionEditFile, "editor": event.ActionEditFile, "apply_patch": event.ActionEditFile,
	"editedexistingfile": event.ActionEditFile, "applieddiff": event.ActionEditFile, "insertcontent": event.ActionEditFile,
	"searchandreplace": event.ActionEditFile, "edit_file": event.ActionEditFile, "filedeleted": event.ActionEditFile,
	// commands
	"execute_command": event.ActionRunCommand, "run_commands": event.ActionRunCommand, "command": event.ActionRunCommand,
	// search
	"search_files": event.ActionSearchText, "search_codebase": event.ActionSearchText, "codebase_search": event.ActionSearchText,
	"searchfiles": event.ActionSearchText, "codebasesearch": event.ActionSearchText,
	"list_files": event.ActionSearchFiles, "list_code_definition_names": event.ActionSearchFiles,
	"listfilestoplevel": event.ActionSearchFiles, "listfilesrecursive": event.ActionSearchFiles,
	"listcodedefinitionnames": event.ActionSearchFiles,
	// web
	"web_fetch": event.ActionWebFetch, "fetch_web_content": event.ActionWebFetch, "webfetch": event.ActionWebFetch,
	"browser_action_launch": event.ActionWebFetch,
	"web_search":            event.ActionWebSearch, "websearch": event.ActionWebSearch,
	// MCP
	"use_mcp_tool": event.ActionMCPCall, "access_mcp_resource": event.ActionMCPCall, "use_mcp_server": event.ActionMCPCall,
	// agents, plans, questions, completion
	"new_task": event.ActionSpawnSubagent, "spawn_agent": event.ActionSpawnSubagent, "newtask": event.ActionSpawnSubagent,
	"update_todo_list": event.ActionTodoUpdate, "updatetodolist": event.ActionTodoUpdate, "focus_chain": event.ActionTodoUpdate,
	"ask_followup_question": event.ActionAskUser, "ask_question": event.ActionAskUser, "followup": event.ActionAskUser,
	"attempt_completion": event.ActionTaskComplete, "submit_and_exit": event.ActionTaskComplete,
	"completion_result": event.ActionTaskComplete, "finishtask": event.ActionTaskComplete,
}

// toolType returns the action type of a tool name.
func toolType(name string) event.ActionType {
	if t, ok := toolTypes[strings.ToLower(strings.TrimSpace(name))]; ok {
		return t
	}
	return event.ActionUnknown
}

// toolOf returns a call's action type and target from its input.
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	ty := toolType(name)
	path := func() string {
		if s := str(in, "path", "file_path", "absolutePath", "target_file", "filePath"); s != "" {
			return p.relPath(s)
		}
		for _, k := range []string{"files", "batchFiles", "args"} {
			if first := firstItem(in[k]); first != nil {
				if s := str(first, "path", "file_path"); s != "" {
					return p.relPath(s)
				}
			}
		}
		return ""
	}
	var target string
	switch ty {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile, event.ActionSearchFiles:
		target = path()
		if target == "" && ty == event.ActionEditFile {
			target = patchFile(str(in, "input", "patch", "diff"))
		}
		if target == "" {
			target = str(in, "task") // fetch_instructions
		}
	case event.ActionRunCommand:
		target = str(in, "command")
		if target == "" {
			target = strings.Join(strs(in["commands"]), "; ")
		}
	case event.ActionSearchText:
		q := str(in, "regex", "pattern", "query")
		if q == "" {
			q = strings.Join(strs(in["queries"]), " | ")
		}
		if dir := path(); dir != "" && q != "" {
			q += " in " + dir
		}
		target = q
	case event.ActionWebFetch, event.ActionWebSearch:
		target = str(in, "url", "query")
		if target == "" {
			if first := firstItem(in["requests"]); first != nil {
				target = str(first, "url")
			}
		}
	case event.ActionMCPCall:
		server, tool := str(in, "server_name", "serverName"), str(in, "tool_name", "toolName", "uri")
		target = strings.Trim(server+"/"+tool, "/")
	case event.ActionSpawnSubagent:
		target = str(in, "message", "task", "context", "systemPrompt", "prompt", "content")
		if m := str(in, "mode"); m != "" && target != "" {
			target = m + ": " + target
		}
	case event.ActionAskUser:
		target = str(in, "question")
	case event.ActionTaskComplete:
		target = str(in, "result", "command")
	default:
		target = str(in, "path", "command", "url", "action", "mode_slug", "mode", "response")
	}
	return ty, target
}

// patchFile returns the first file an apply_patch input names.
func patchFile(patch string) string {
	for _, line := range strings.Split(patch, "\n") {
		for _, pre := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "+++ b/", "+++ "} {
			if rest, ok := strings.CutPrefix(line, pre); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}

// str returns the first of keys that holds a non-empty string (a number is written out).
func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return v
			}
		case float64:
			return fmt.Sprint(v)
		}
	}
	return ""
}

// strs reads a list of strings (or a single string).
func strs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			switch x := x.(type) {
			case string:
				out = append(out, x)
			case map[string]any:
				if s := str(x, "command", "query", "pattern", "regex"); s != "" {
					out = append(out, s)
				}
			}
		}
		return out
	}
	return nil
}

// firstItem returns the first object of a list, or the value itself when it is an object.
func firstItem(v any) map[string]any {
	switch v := v.(type) {
	case []any:
		if len(v) > 0 {
			m, _ := v[0].(map[string]any)
			return m
		}
	case map[string]any:
		return v
	}
	return nil
}
