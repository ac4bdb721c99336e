package copilot

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// cliTools maps the Copilot CLI's tool names (lower-cased) to the taxonomy: its built-in tools as
// @github/copilot 1.0.34 defines them.
var cliTools = map[string]event.ActionType{
	"view":               event.ActionReadFile,
	"show_file":          event.ActionReadFile,
	"create":             event.ActionWriteFile,
	"edit":               event.ActionEditFile,
	"str_replace":        event.ActionEditFile,
	"insert":             event.ActionEditFile,
	"apply_patch":        event.ActionEditFile,
	"git_apply_patch":    event.ActionEditFile,
	"bash":               event.ActionRunCommand,
	"powershell":         event.ActionRunCommand,
	"grep":               event.ActionSearchText,
	"rg":                 event.ActionSearchText,
	"search_code":        event.ActionSearchText,
	"glob":               event.ActionSearchFiles,
	"web_fetch":          event.ActionWebFetch,
	"web_search":         event.ActionWebSearch,
	"task":               event.ActionSpawnSubagent,
	"update_todo":        event.ActionTodoUpdate,
	"ask_user":           event.ActionAskUser,
	"task_complete":      event.ActionTaskComplete,
	"str_replace_editor": event.ActionEditFile, // its command argument refines it (cliType)
}

// CLIToolType returns the normalized type of a Copilot CLI tool name; mcp says the call named an
// MCP server (mcpServerName), which makes a tool this package does not know an mcp_call.
func CLIToolType(name string, mcp bool) event.ActionType {
	if t, ok := cliTools[strings.ToLower(strings.TrimSpace(name))]; ok {
		return t
	}
	if mcp {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// cliType is CLIToolType with the arguments: str_replace_editor's command names what it does.
func cliType(name string, mcp bool, a args) event.ActionType {
	if strings.EqualFold(strings.TrimSpace(name), "str_replace_editor") {
		switch a.str("command") {
		case "view":
			return event.ActionReadFile
		case "create":
			return event.ActionWriteFile
		}
	}
	return CLIToolType(name, mcp)
}

// cliTarget returns what a Copilot CLI tool call acts on (see the package doc).
func cliTarget(name string, a args, rel func(string) string) string {
	if a == nil {
		return ""
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "view", "show_file", "create", "edit", "str_replace", "insert", "str_replace_editor":
		return rel(a.str("path", "file_path"))
	case "apply_patch", "git_apply_patch":
		if p := patchFile(a.str("input", "patch")); p != "" {
			return rel(p)
		}
		return ""
	case "bash", "powershell":
		return a.str("command")
	case "grep", "rg", "glob":
		pat := a.str("pattern")
		if dir := a.str("path"); dir != "" {
			return pat + " in " + rel(dir)
		}
		return pat
	case "web_fetch":
		return a.str("url")
	case "web_search":
		return a.str("query")
	case "task":
		agent, task := a.str("agent_type"), a.str("description", "name", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case "ask_user":
		return a.str("question")
	case "task_complete":
		return a.str("summary")
	case "report_intent":
		return a.str("intent")
	case "update_todo":
		return ""
	}
	if s := a.str("path", "file_path", "filePath"); s != "" {
		return rel(s)
	}
	return a.str("command", "pattern", "url", "query")
}

// vscodeTools maps VS Code chat tool ids and the names the model calls them by to the taxonomy,
// keyed by vscodeKey: lower case, without a "copilot_" or "vscode_" prefix, without underscores.
// Sources: vscode-copilot-chat's src/extension/tools/common/toolNames.ts (ToolName, the model's
// names, and ContributedToolName, the tool ids) and VS Code's built-in chat tools.
var vscodeTools = map[string]event.ActionType{
	// read
	"readfile": event.ActionReadFile, "readnotebookcelloutput": event.ActionReadFile,
	// list and find files
	"findfiles": event.ActionSearchFiles, "filesearch": event.ActionSearchFiles,
	"listdirectory": event.ActionSearchFiles, "listdir": event.ActionSearchFiles,
	"findtestfiles": event.ActionSearchFiles, "testsearch": event.ActionSearchFiles,
	// search text
	"findtextinfiles": event.ActionSearchText, "grepsearch": event.ActionSearchText,
	"searchcodebase": event.ActionSearchText, "semanticsearch": event.ActionSearchText,
	"searchworkspacesymbols": event.ActionSearchText, "listcodeusages": event.ActionSearchText,
	"githubrepo": event.ActionSearchText, "getsearchresults": event.ActionSearchText,
	"getsearchviewresults": event.ActionSearchText,
	// write and edit
	"createfile": event.ActionWriteFile, "createnewjupyternotebook": event.ActionWriteFile,
	"insertedit": event.ActionEditFile, "inserteditintofile": event.ActionEditFile,
	"replacestring": event.ActionEditFile, "replacestringinfile": event.ActionEditFile,
	"multireplacestring": event.ActionEditFile, "multireplacestringinfile": event.ActionEditFile,
	"applypatch": event.ActionEditFile, "editnotebook": event.ActionEditFile, "editnotebookfile": event.ActionEditFile,
	"editfiles": event.ActionEditFile,
	// commands
	"runinterminal": event.ActionRunCommand, "runtests": event.ActionRunCommand, "runtests1": event.ActionRunCommand,
	"runtask": event.ActionRunCommand, "createandruntask": event.ActionRunCommand,
	"runnotebookcell": event.ActionRunCommand,
	// web
	"fetchwebpage": event.ActionWebFetch, "fetchwebpageinternal": event.ActionWebFetch,
	// plans, agents, questions
	"managetodolist": event.ActionTodoUpdate, "todolist": event.ActionTodoUpdate,
	"runsubagent": event.ActionSpawnSubagent, "searchsubagent": event.ActionSpawnSubagent,
	"getconfirmation": event.ActionAskUser, "askquestions": event.ActionAskUser,
}

// vscodeKey normalizes a VS Code tool id or name for vscodeTools.
func vscodeKey(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, p := range []string{"copilot_", "vscode_"} {
		n = strings.TrimPrefix(n, p)
	}
	return strings.ReplaceAll(n, "_", "")
}

// VSCodeToolType returns the normalized type of a VS Code chat tool id (copilot_readFile,
// run_in_terminal) or of the name the model called it by (read_file); mcp says the tool came from
// an MCP server (its source, or an id starting "mcp_").
func VSCodeToolType(name string, mcp bool) event.ActionType {
	if mcp || strings.HasPrefix(strings.ToLower(strings.TrimSpace(name)), "mcp_") {
		return event.ActionMCPCall
	}
	if t, ok := vscodeTools[vscodeKey(name)]; ok {
		return t
	}
	return event.ActionUnknown
}

// vscodeArgsTarget returns what a VS Code tool call acts on from its arguments (the model's
// call, or the input VS Code kept).
func vscodeArgsTarget(ty event.ActionType, a args, rel func(string) string) string {
	if a == nil {
		return ""
	}
	file := func() string {
		if s := a.str("filePath", "path", "file_path", "uri"); s != "" {
			return rel(s)
		}
		if f := a.first("replacements"); f != nil {
			return rel(f.str("filePath", "path"))
		}
		if p := patchFile(a.str("input", "patch")); p != "" {
			return rel(p)
		}
		return ""
	}
	switch ty {
	case event.ActionReadFile, event.ActionWriteFile, event.ActionEditFile:
		return file()
	case event.ActionSearchText, event.ActionSearchFiles:
		if q := a.str("query", "pattern", "symbolName"); q != "" {
			return q
		}
		return file()
	case event.ActionRunCommand:
		return a.str("command", "id", "label")
	case event.ActionWebFetch:
		if u := a.str("url"); u != "" {
			return u
		}
		return a.firstStr("urls")
	case event.ActionSpawnSubagent:
		agent, task := a.str("agentName", "agent"), a.str("description", "prompt")
		if agent != "" && task != "" {
			return agent + ": " + task
		}
		return agent + task
	case event.ActionAskUser:
		return a.str("question", "message", "title")
	case event.ActionTodoUpdate:
		return ""
	}
	if s := file(); s != "" {
		return s
	}
	return a.str("command", "query", "url", "pattern")
}

// args are the top-level members of a tool call's arguments.
type args map[string]json.RawMessage

// readArgs decodes an arguments object; it is nil when raw is not one. A JSON string holding an
// object (the form VS Code keeps the model's arguments in) is decoded too.
func readArgs(raw []byte) args {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var a args
	if json.Unmarshal(raw, &a) != nil {
		return nil
	}
	return a
}

// str returns the first of the named members that holds a non-empty string.
func (a args) str(names ...string) string {
	for _, n := range names {
		var s string
		if json.Unmarshal(a[n], &s) == nil {
			if s = strings.TrimSpace(s); s != "" {
				return s
			}
		}
	}
	return ""
}

// first returns the arguments of the first element of an array member.
func (a args) first(name string) args {
	var list []json.RawMessage
	if json.Unmarshal(a[name], &list) != nil || len(list) == 0 {
		return nil
	}
	return readArgs(list[0])
}

// firstStr returns the first string of an array member.
func (a args) firstStr(name string) string {
	var list []string
	if json.Unmarshal(a[name], &list) != nil {
		return ""
	}
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// patchFile returns the first file a patch names: the "*** Update File:", "*** Add File:" or
// "*** Delete File:" line of the apply_patch format, else a unified diff's "+++ b/" line.
func patchFile(patch string) string {
	for line := range strings.SplitSeq(patch, "\n") {
		line = strings.TrimSpace(line)
		for _, p := range []string{"*** Update File:", "*** Add File:", "*** Delete File:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				return strings.TrimSpace(rest)
			}
		}
		if rest, ok := strings.CutPrefix(line, "+++ "); ok && rest != "/dev/null" {
			return strings.TrimPrefix(strings.TrimSpace(rest), "b/")
		}
	}
	return ""
}

// relPath makes a file path relative to root when it lies inside it; a relative path is taken
// from cwd.
func relPath(file, cwd, root string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if cwd == "" || !filepath.IsAbs(cwd) || strings.HasPrefix(file, "~") {
			return filepath.Clean(file)
		}
		file = filepath.Join(cwd, file)
	}
	file = filepath.Clean(file)
	if root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." &&
			!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}

// hashInput hashes a tool call's arguments, so repeated calls can be found.
func hashInput(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:8])
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}
