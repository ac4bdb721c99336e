// Package windsurf reads the Cascade conversations of Windsurf (Codeium's editor, now
// Cognition's, also shipped as Devin Desktop; client "windsurf") from the one plaintext record
// Windsurf writes of them: the transcripts of its post_cascade_response_with_transcript hook.
// Windsurf does not run here (it needs a Windsurf account): the reader is tested on fixtures
// written here to the format Windsurf's documentation publishes (docs.windsurf.com
// windsurf/cascade/hooks, the hook's section and example), cross-checked with the published
// readers of that file (momhq/mom's transcript watcher, entireio/external-agents' Windsurf agent,
// other tools' hook readers) and with the research on the encrypted store (vshulcz/deja-vu issue
// 308, kenn-io/agentsview internal/parser/windsurf_provider.go, other tools' notes; facts only).
//
// # What Windsurf keeps, and what is read
//
// Windsurf keeps each Cascade conversation (a "trajectory") in ~/.codeium/windsurf/cascade/
// <id>.pb and its memories in ~/.codeium/windsurf/memories. Those files are encrypted at rest
// (AES-GCM over protobuf, by every account published: 8 bits of entropy per byte, random headers,
// `protoc --decode_raw` finds nothing), readable only through the running language server's
// local RPC with its session credentials: they are not read, and no published reader reads them.
// The editor's state.vscdb (User/globalStorage, workspaceStorage/*) is not read either: by the
// accounts published it holds Cascade's data as protobuf blobs of no published schema, and the
// JSON one reader looks for there (agentsview's windsurf provider: the chat panel's
// workbench.panel.aichat...chatdata tabs of bubbles) has no times and no tool calls, and no
// source shows Cascade writing it. What is readable is opt-in: when the user configures the post_cascade_response_with_transcript hook (in
// ~/.codeium/windsurf/hooks.json, a workspace's .windsurf/hooks.json or the system's hooks.json),
// Windsurf writes, after each Cascade response, the whole conversation from its beginning to
// ~/.windsurf/transcripts/<trajectory_id>.jsonl (mode 0600; the directory keeps the 100 newest
// files by modification time), on Linux and macOS alike. Windsurf honours no variable that moves
// it; observer's OBSERVER_WINDSURF_DIRS (a path list) replaces the default directory.
//
// # Files
//
// One file per trajectory, rewritten whole after each response: a Document source (read whole at
// each change). Each line is one step of the conversation, {"type", "status", <type>: {...}}.
// The documentation publishes three step types, and warns that "the exact structure of each step
// may change in future versions": user_input {user_response, rules_applied}, planner_response
// {response}, code_action {path, new_content}. Other steps (the file reads, commands, searches
// and MCP calls the documentation says the transcript holds) have no published structure.
//
// # Token accounting
//
// The transcript keeps no token count, no model and no cost (Windsurf bills in credits, on its
// servers): no token_usage event is emitted, nothing is estimated. Cascade's traffic goes to
// Windsurf's servers through its language server, with no base-URL setting: the proxy does not
// see it.
//
// # Actions and messages
//
// A user_input step is a user_prompt action and a user message (user_response); a
// planner_response step an assistant message (response); a code_action step an edit_file action
// (path, relative to the project; the step writes the file's new content, which may also create
// it), Tool "code_action". Any other step is an action of its type in the taxonomy when its name
// says it (run_command run_command, view_file/read_file/read_code read_file, write_to_file/
// write_code write_file, replace_file_content/edit_file edit_file, grep_search search_text,
// find_by_name/list_dir search_files, search_web web_search, read_url_content web_fetch,
// mcp_tool/mcp_tool_use mcp_call), else unknown, with the step's type in Tool; its target is read
// only from the field names the hooks' own inputs document (command_line, file_path,
// mcp_server_name and mcp_tool_name) and the transcript's documented path. A step's status
// "done" succeeded; "error", "failed", "canceled"/"cancelled" and "rejected" failed; any other
// is no outcome. Ids: event.ID("windsurf", kind, trajectory, step index): the transcript is
// rewritten with the same steps first, so a step keeps its id; a conversation reverted to an
// earlier checkpoint and continued reuses the ids of the steps it dropped.
//
// # Times, sessions and re-reads
//
// Steps carry no time. The parser stamps the steps it reads for the first time with the file's
// modification time at that read (the end of the response that wrote them), and keeps in State
// where each read began, so a step keeps its time on every read (up to 512 reads; later steps
// take the last one's). Read after the fact, every step of a transcript has its last
// modification time. The session is the trajectory id (the file's name); the transcript names
// no workspace: the project is the git working tree (project.Root) of the first absolute path a
// code_action names, when it lies in one, else none. A started session event comes at the first
// step. A document is read whole each time and only new or changed events are emitted
// (transcript.Emitted); one that does not parse (caught mid-rewrite) is ErrMalformed and keeps
// the State. Targets, errors and messages are scrubbed and cut to 500 characters, 2 KB and 64 KB.
package windsurf

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.Windsurf

// EnvDirs replaces the transcripts directory with a path list (observer's variable: Windsurf
// honours none).
const EnvDirs = "OBSERVER_WINDSURF_DIRS"

// Adapter reads Windsurf's hook transcripts.
type Adapter struct {
	// Roots are transcripts directories.
	Roots []string
}

var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given transcripts directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns $OBSERVER_WINDSURF_DIRS's directories, else ~/.windsurf/transcripts (the
// same on macOS).
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".windsurf", "transcripts")}
}

// WatchDirs lists the directories a watcher should watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the transcripts (*.jsonl directly in a root) as Document sources, sorted by
// path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDocuments(Client, a.Roots, func(name string) (string, bool) {
		id, ok := strings.CutSuffix(name, ".jsonl")
		return id, ok && id != "" && !strings.HasPrefix(id, ".")
	})
}

// NewParser returns a parser for one transcript.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state)
}
