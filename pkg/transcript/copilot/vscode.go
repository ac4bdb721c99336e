package copilot

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/transcript"
)

// EnvVSCodeUserDirs lists VS Code User directories (separated by the OS path list separator) that
// replace DefaultVSCodeUserDirs.
const EnvVSCodeUserDirs = "OBSERVER_VSCODE_USER_DIRS"

// VSCodeAdapter finds and reads VS Code's chat session files (see the package doc).
type VSCodeAdapter struct {
	// UserDirs are VS Code User directories: each holds workspaceStorage and globalStorage.
	UserDirs []string
}

var _ transcript.Adapter = (*VSCodeAdapter)(nil)

// NewVSCode returns an adapter reading the chat sessions under the given VS Code User
// directories.
func NewVSCode(userDirs []string) *VSCodeAdapter { return &VSCodeAdapter{UserDirs: userDirs} }

// Client returns "copilot-vscode".
func (a *VSCodeAdapter) Client() string { return ClientVSCode }

// vscodeEditors are the VS Code builds whose User directories are searched.
var vscodeEditors = []string{"Code", "Code - Insiders", "VSCodium"}

// DefaultVSCodeUserDirs returns the VS Code User directories: $OBSERVER_VSCODE_USER_DIRS when
// set, else each editor's on this OS (see the package doc).
func DefaultVSCodeUserDirs() []string {
	if v := strings.TrimSpace(os.Getenv(EnvVSCodeUserDirs)); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, transcript.ExpandHome(d))
			}
		}
		return out
	}
	home, _ := os.UserHomeDir()
	var base string
	switch runtime.GOOS {
	case "darwin":
		base = filepath.Join(home, "Library", "Application Support")
	case "windows":
		base = os.Getenv("APPDATA")
		if base == "" {
			base = filepath.Join(home, "AppData", "Roaming")
		}
	default:
		base = os.Getenv("XDG_CONFIG_HOME")
		if base == "" || !filepath.IsAbs(base) {
			base = filepath.Join(home, ".config")
		}
	}
	var out []string
	for _, e := range vscodeEditors {
		out = append(out, filepath.Join(base, e, "User"))
	}
	return out
}

// WatchDirs lists the directories a watcher should watch for new sessions: each User directory's
// workspaceStorage and globalStorage/emptyWindowChatSessions.
func (a *VSCodeAdapter) WatchDirs() []string {
	var out []string
	for _, u := range a.UserDirs {
		out = append(out, filepath.Join(u, "workspaceStorage"), filepath.Join(u, "globalStorage", "emptyWindowChatSessions"))
	}
	return out
}

// Discover lists the session files of every User directory: workspaceStorage/*/chatSessions and
// globalStorage/emptyWindowChatSessions, *.jsonl and the *.json that have no .jsonl beside them,
// sorted by path. A missing directory is not an error; a User directory's workspaceStorage that
// cannot be read is reported after the others are listed.
func (a *VSCodeAdapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seenUser := map[string]bool{}
	for _, u := range a.UserDirs {
		if real, err := filepath.EvalSymlinks(u); err == nil {
			if seenUser[real] {
				continue
			}
			seenUser[real] = true
		}
		var dirs []string
		ws := filepath.Join(u, "workspaceStorage")
		entries, err := os.ReadDir(ws)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			if p := filepath.Join(ws, e.Name()); transcript.IsDir(e, p) {
				dirs = append(dirs, filepath.Join(p, "chatSessions"))
			}
		}
		dirs = append(dirs, filepath.Join(u, "globalStorage", "emptyWindowChatSessions"))
		for _, d := range dirs {
			out = append(out, sessionFiles(d)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// sessionFiles lists one chatSessions directory's session files.
func sessionFiles(dir string) []transcript.Source {
	entries, _ := os.ReadDir(dir)
	logs := map[string]bool{}
	for _, e := range entries {
		if stem, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			logs[stem] = true
		}
	}
	var out []transcript.Source
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		if strings.HasPrefix(name, ".") || !transcript.IsFile(e, path) {
			continue
		}
		stem, ok := strings.CutSuffix(name, ".jsonl")
		if !ok {
			if stem, ok = strings.CutSuffix(name, ".json"); !ok || logs[stem] {
				continue // not a session, or a .json VS Code no longer reads: its log is beside it
			}
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		out = append(out, transcript.Source{Client: ClientVSCode, Path: abs, SessionID: stem, Document: true})
	}
	return out
}

// NewParser returns a parser for one session file, resumed from state when it is not nil.
func (a *VSCodeAdapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newVSCodeParser(src, state)
}

// workspaceFolder reads the folder of the workspace a chatSessions directory belongs to, from
// workspace.json beside it; "" when there is none (an empty window, a file elsewhere).
func workspaceFolder(sessionFile string) string {
	dir := filepath.Dir(sessionFile)
	if filepath.Base(dir) != "chatSessions" {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "workspace.json"))
	if err != nil || len(data) > 1<<20 {
		return ""
	}
	var w struct {
		Folder    string `json:"folder"`
		Workspace string `json:"workspace"`
	}
	if json.Unmarshal(data, &w) != nil {
		return ""
	}
	if p := uriPath(w.Folder); p != "" {
		return p
	}
	if p := uriPath(w.Workspace); p != "" {
		return filepath.Dir(p) // a .code-workspace file: its folder
	}
	return ""
}

// uriPath returns the file path of a file:// or vscode-remote:// URI, "" for another URI.
func uriPath(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Path == "" {
		return ""
	}
	switch u.Scheme {
	case "file", "vscode-remote", "vscode-userdata", "vscode-vfs":
	default:
		return ""
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' { // /c:/Users/...
		p = p[1:]
	}
	return filepath.Clean(filepath.FromSlash(p))
}
