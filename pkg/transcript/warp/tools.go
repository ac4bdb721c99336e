package warp

import "github.com/observerhq/observer/pkg/event"

// ToolType maps a Warp agent tool, as conversation_data's tool_usage_metadata names its
// *_stats counters (run_command_stats: "run_command"), to observer's taxonomy. The reader emits
// no tool action (see the package doc); the mapping is kept with the format for a reader of the
// task blobs.
func ToolType(name string) event.ActionType {
	switch name {
	case "run_command", "write_to_long_running_shell_command", "read_shell_command_output":
		return event.ActionRunCommand
	case "read_files":
		return event.ActionReadFile
	case "apply_file_diff":
		return event.ActionEditFile
	case "grep", "search_codebase":
		return event.ActionSearchText
	case "file_glob":
		return event.ActionSearchFiles
	case "call_mcp_tool", "read_mcp_resource":
		return event.ActionMCPCall
	case "suggest_plan", "suggest_create_plan":
		return event.ActionTodoUpdate
	}
	return event.ActionUnknown
}
