package cursoragent

import (
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// toolTypes maps a Cursor tool name, lower case without "_" and "-", to the taxonomy (see the
// package doc).
var toolTypes = map[string]event.ActionType{
	"read": event.ActionReadFile, "readfile": event.ActionReadFile,
	"write": event.ActionWriteFile, "createfile": event.ActionWriteFile,
	"strreplace": event.ActionEditFile, "edit": event.ActionEditFile, "editfile": event.ActionEditFile,
	"multiedit": event.ActionEditFile, "searchreplace": event.ActionEditFile, "applypatch": event.ActionEditFile,
	"editnotebook": event.ActionEditFile, "delete": event.ActionEditFile, "deletefile": event.ActionEditFile,
	"shell": event.ActionRunCommand, "bash": event.ActionRunCommand, "runterminalcmd": event.ActionRunCommand,
	"grep": event.ActionSearchText, "grepsearch": event.ActionSearchText, "ripgrep": event.ActionSearchText,
	"semanticsearch": event.ActionSearchText, "codebasesearch": event.ActionSearchText,
	"glob": event.ActionSearchFiles, "globfilesearch": event.ActionSearchFiles, "filesearch": event.ActionSearchFiles,
	"ls": event.ActionSearchFiles, "listdir": event.ActionSearchFiles,
	"websearch": event.ActionWebSearch,
	"webfetch":  event.ActionWebFetch, "fetch": event.ActionWebFetch,
	"task": event.ActionSpawnSubagent, "subagent": event.ActionSpawnSubagent, "agent": event.ActionSpawnSubagent,
	"todowrite":   event.ActionTodoUpdate,
	"askquestion": event.ActionAskUser, "askuserquestion": event.ActionAskUser,
	"callmcptool": event.ActionMCPCall, "calldynamictool": event.ActionMCPCall, "fetchmcpresource": event.ActionMCPCall,
}

// toolKey is a tool name as toolTypes keys it.
func toolKey(name string) string {
	return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// ToolType returns the normalized type of a Cursor tool name.
func ToolType(name string) event.ActionType {
	if t, ok := toolTypes[toolKey(name)]; ok {
		return t
	}
	if n := strings.ToLower(name); strings.HasPrefix(n, "mcp_") || strings.HasPrefix(n, "mcp__") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// str returns the first of the named inputs that is a non-empty string.
func str(in map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := in[k].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// pathKeys are the inputs Cursor's tools name a file by.
var pathKeys = []string{"path", "file_path", "filePath", "target_file", "targetFile", "target_notebook", "notebook_path"}

// target returns what a call of name (of type typ) with input in acts on.
func (p *Parser) target(name string, typ event.ActionType, in map[string]any) string {
	switch typ {
	case event.ActionRunCommand:
		return str(in, "command", "cmd")
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		f := str(in, pathKeys...)
		if f == "" {
			f = patchFile(str(in, "patch", "input"))
		}
		return p.relPath(f)
	case event.ActionSearchText:
		pat := str(in, "pattern", "query", "regex")
		if d := str(in, "path", "target_directory", "targetDirectory"); d != "" && pat != "" {
			return pat + " in " + p.relPath(d)
		}
		return pat
	case event.ActionSearchFiles:
		pat := str(in, "glob_pattern", "globPattern", "pattern", "query")
		dir := str(in, "target_directory", "targetDirectory", "path", "directory")
		switch {
		case pat != "" && dir != "":
			return pat + " in " + p.relPath(dir)
		case pat != "":
			return pat
		case dir != "":
			return p.relPath(dir)
		}
		return "."
	case event.ActionWebSearch:
		return str(in, "search_term", "searchTerm", "query")
	case event.ActionWebFetch:
		return str(in, "url")
	case event.ActionSpawnSubagent:
		return str(in, "description", "prompt", "task")
	case event.ActionAskUser:
		return str(in, "question", "title", "prompt")
	case event.ActionTodoUpdate:
		return ""
	case event.ActionMCPCall:
		server := str(in, "server", "namespace")
		tool := str(in, "toolName", "tool_name", "uri")
		if server == "" && tool == "" {
			if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
				server, tool, _ = strings.Cut(rest, "__")
			} else if rest, ok := strings.CutPrefix(name, "mcp_"); ok {
				server, tool, _ = strings.Cut(rest, "_")
			}
		}
		if server == "" {
			return tool
		}
		return server + "/" + tool
	}
	if f := str(in, pathKeys...); f != "" {
		return p.relPath(f)
	}
	return str(in, "command", "query", "url", "pattern")
}

// patchFile returns the first file an apply_patch body names ("*** Update File: <path>", Add,
// Delete), "" when it names none.
func patchFile(patch string) string {
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, verb := range []string{"*** Update File:", "*** Add File:", "*** Delete File:"} {
			if f, ok := strings.CutPrefix(line, verb); ok {
				return strings.TrimSpace(f)
			}
		}
	}
	return ""
}

// cwdHint returns an absolute directory a call's input names (where a command ran, a file or
// directory it acts on), for finding the cwd.
func cwdHints(in map[string]any) []string {
	var out []string
	for _, k := range []string{"working_directory", "workingDirectory", "cwd", "target_directory", "path", "file_path", "target_file"} {
		if s, ok := in[k].(string); ok && strings.HasPrefix(s, "/") {
			out = append(out, s)
		}
	}
	return out
}
