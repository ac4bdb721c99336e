package cursor

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/observerhq/observer/pkg/event"
)

// toolTypes maps Cursor's agent tool names (lower case, spaces as "_") to the taxonomy.
var toolTypes = map[string]event.ActionType{
	"read_file":               event.ActionReadFile,
	"edit_file":               event.ActionEditFile,
	"edit_file_v2":            event.ActionEditFile,
	"search_replace":          event.ActionEditFile,
	"multi_edit":              event.ActionEditFile,
	"apply_patch":             event.ActionEditFile,
	"write":                   event.ActionWriteFile,
	"create_file":             event.ActionWriteFile,
	"run_terminal_cmd":        event.ActionRunCommand,
	"run_terminal_command":    event.ActionRunCommand,
	"run_terminal_command_v2": event.ActionRunCommand,
	"grep":                    event.ActionSearchText,
	"grep_search":             event.ActionSearchText,
	"ripgrep":                 event.ActionSearchText,
	"codebase_search":         event.ActionSearchText,
	"list_dir":                event.ActionSearchFiles,
	"file_search":             event.ActionSearchFiles,
	"glob_file_search":        event.ActionSearchFiles,
	"web_search":              event.ActionWebSearch,
	"fetch":                   event.ActionWebFetch,
	"web_fetch":               event.ActionWebFetch,
	"fetch_url":               event.ActionWebFetch,
	"todo_write":              event.ActionTodoUpdate,
	"task":                    event.ActionSpawnSubagent,
}

// ToolType returns the normalized type of a Cursor tool name (see the package doc).
func ToolType(name string) event.ActionType {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), " ", "_")
	if t, ok := toolTypes[n]; ok {
		return t
	}
	if strings.HasPrefix(n, "mcp_") || strings.HasPrefix(n, "mcp__") {
		return event.ActionMCPCall
	}
	return event.ActionUnknown
}

// readArgs decodes a call's arguments object; nil when it is none.
func readArgs(raw []byte) map[string]any {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// str returns the first of the named arguments that is a non-empty string.
func str(args map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := args[n].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// pathKeys are the argument names Cursor's tools give a file in params (camelCase) and rawArgs
// (snake_case).
var pathKeys = []string{"targetFile", "target_file", "relativeWorkspacePath", "file_path", "filePath", "path"}

// target returns what a call acts on: the command, the file relative to the project, the pattern
// (" in <dir>" when given), the directory, the query, the URL.
func (ps *pass) target(c *chat, typ event.ActionType, args map[string]any) string {
	if args == nil {
		return ""
	}
	rel := func(p string) string { return ps.relPath(c, p) }
	switch typ {
	case event.ActionRunCommand:
		return str(args, "command")
	case event.ActionReadFile, event.ActionEditFile, event.ActionWriteFile:
		return rel(str(args, pathKeys...))
	case event.ActionSearchText:
		pat := str(args, "pattern", "query", "regex")
		if d := str(args, "path", "targetDirectory", "target_directory"); d != "" && pat != "" {
			return pat + " in " + rel(d)
		}
		return pat
	case event.ActionSearchFiles:
		pat := str(args, "globPattern", "glob_pattern", "query", "pattern")
		dir := str(args, "targetDirectory", "target_directory", "directory", "path")
		switch {
		case pat != "" && dir != "":
			return pat + " in " + rel(dir)
		case pat != "":
			return pat
		case dir != "":
			return rel(dir)
		}
		return "."
	case event.ActionWebSearch:
		return str(args, "searchTerm", "search_term", "query")
	case event.ActionWebFetch:
		return str(args, "url")
	case event.ActionSpawnSubagent:
		return str(args, "description", "prompt")
	case event.ActionTodoUpdate:
		return ""
	}
	if p := str(args, pathKeys...); p != "" {
		return rel(p)
	}
	return str(args, "command", "query", "url", "pattern")
}

// relPath returns file relative to the chat's project when it lies inside it.
func (ps *pass) relPath(c *chat, file string) string {
	if file == "" {
		return ""
	}
	dir := ps.dir(c)
	if !filepath.IsAbs(file) {
		if dir == "" || strings.HasPrefix(file, "~") {
			return filepath.Clean(file)
		}
		file = filepath.Join(dir, file)
	}
	file = filepath.Clean(file)
	if root := ps.project(dir); root != "" {
		if r, err := filepath.Rel(root, file); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	return file
}

// cursorClaude is Cursor's naming of Claude models: version before family ("claude-4.5-sonnet",
// "claude-4-opus-high-thinking").
var cursorClaude = regexp.MustCompile(`^claude-(\d+)(?:\.(\d+))?-(sonnet|opus|haiku)(-.*)?$`)

// modelName returns the model a bubble or composer names, "" for Cursor's pseudo-models
// ("default", "auto"), which name no model.
func modelName(s string) string {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "default", "auto":
		return ""
	}
	return s
}

// priceName returns the name observer's price table knows a Cursor model by: Claude's version
// after its family from Claude 4 on ("claude-4.5-sonnet-thinking" is claude-sonnet-4-5), before
// it for Claude 3 ("claude-3.7-sonnet" is claude-3-7-sonnet); other names as they are (the table
// takes "-high" and like variants as their model).
func priceName(model string) string {
	m := cursorClaude.FindStringSubmatch(strings.ToLower(model))
	if m == nil {
		return model
	}
	ver := m[1]
	if m[2] != "" {
		ver += "-" + m[2]
	}
	if major, _ := strconv.Atoi(m[1]); major >= 4 {
		return "claude-" + m[3] + "-" + ver
	}
	return "claude-" + ver + "-" + m[3]
}
