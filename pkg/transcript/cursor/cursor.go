// Package cursor reads the chats of the Cursor editor (its Composer and Agent panes) from the
// editor's global state database into observer events, following the transcript contract for
// Database sources.
//
// Sources consulted: Cursor is closed source and writes no documented format, so this reader
// follows what public readers of its files found and agree on, and stores only fields they all
// show: michaeldhood/chatrxiv docs/cursor/storage-reference.md (composerData _v 10, bubbles _v 3,
// observed 2025-12), pppp606/cursor-efficiency docs/vscdbRelation.md (Cursor 0.50.5), a "Cursor
// Tool Bubble Data Format" reference of the toolFormerData object (tool ids, name, rawArgs,
// params, result, status, userDecision), AgentOrchestrator/AgentBase docs/CURSOR.md (workspace
// databases link composers to folders), and the usage scanners that sum bubbles' tokenCount. No
// corpus file exists; the tests run on records written by hand to that format.
//
// # Files
//
// Cursor is a VS Code fork and keeps its state in the VS Code layout under its user directory:
// ~/.config/Cursor/User on Linux ($XDG_CONFIG_HOME/Cursor/User when that is set) and
// ~/Library/Application Support/Cursor/User on macOS (DefaultDirs). globalStorage/state.vscdb is a
// SQLite database with two key-value tables, ItemTable and cursorDiskKV (key TEXT UNIQUE ON
// CONFLICT REPLACE, value BLOB). The chats are in cursorDiskKV: composerData:<composerId> is one
// chat (a "composer": createdAt and lastUpdatedAt in Unix ms, name, modelConfig.modelName, and in
// releases before the split storage the bubbles inline in conversation[]) and
// bubbleId:<composerId>:<bubbleId> one message of it (type 1 the user's, 2 the assistant's; text,
// createdAt as ISO 8601, modelInfo.modelName, tokenCount {inputTokens, outputTokens},
// toolFormerData, timingInfo, workspaceProjectDir and workspaceUris). Each
// workspaceStorage/<hash>/state.vscdb names in its ItemTable key composer.composerData the
// composers opened in that workspace, whose folder its workspace.json names; this reader uses
// them to find a chat's project when its bubbles do not say. Discover lists the global database
// as a Database source. The workspace databases' older chat panes (ItemTable
// workbench.panel.aichat.view.aichat.chatdata, before the Composer) carry no ids or times and are
// not read.
//
// Cursor's agent CLI (cursor-agent) keeps each chat in ~/.cursor/chats/<md5 of the folder>/<chat
// id>/store.db, a content-addressed tree of message blobs (a meta table of hex-encoded JSON, a
// blobs table of JSON and protobuf-style linking blobs) with no per-message time and no token
// counts; its format is known only from one reverse-engineered description, so it is not read.
//
// # Reading while Cursor writes
//
// A pass opens the database read-only, in one read transaction. VS Code's storage (microsoft/vscode
// src/vs/base/parts/storage/node/storage.ts) sets no journal mode, so the databases are in
// SQLite's default rollback journal and Cursor writes them in place: such a database (its header
// says so) is opened with mode=ro and a busy timeout, taking SQLite's shared lock, so the pass sees
// only committed data and creates no file; a database in WAL mode is read with package sqliteread,
// as OpenCode's is. The pass reads the cursorDiskKV rows past the watermark in rowid order, a
// bounded batch at a time.
// Cursor rewrites a row by replacing it (ON CONFLICT REPLACE), which deletes the old row and
// inserts the new one under a new, larger rowid: a bubble that grows as the model streams, or a
// tool call whose result arrives, is read again, and yields the same event ids with the final
// figures, which the writer merges. The parser's State is the largest rowid read, and a short
// list of the chats lately reported (their title and model fingerprints and folder), so that an
// unchanged chat is not reported again. A row Cursor deleted and reinserted under a rowid below
// the watermark (after deleting the newest row) is missed. A pass that fails leaves the watermark;
// a value that does not decode is counted in Stats.Malformed and passed over.
//
// # Events
//
// A composer yields a started session event (session id: the composer id; start: createdAt;
// model: modelConfig.modelName; the database as transcript path) the first time it is seen, and
// its name a title session event whenever it changes (Cursor names chats itself, and the user can
// rename them; the records do not tell which, so TitleByUser is false). A user bubble's text is a
// user_prompt, id event.ID("cursor", "prompt", composer id, bubble id). An assistant bubble with
// toolFormerData is an action, id event.ID("cursor", "action", composer id, toolCallId, else the
// bubble id), with the tool's name in Tool, its type, the target and input hash from params (else
// rawArgs), and, once its status is completed, error or cancelled, Success (false for an error, a
// cancellation, a call the user rejected, or a terminal command whose exitCodeV2 is not 0), Error
// and Output (the command's output, the file's contents, else the result JSON; 8 KB). Mapping
// (name lower-cased, spaces as "_"): read_file read_file; edit_file, search_replace, multi_edit,
// apply_patch, edit_file_v2 edit_file; write, create_file write_file; run_terminal_cmd,
// run_terminal_command, run_terminal_command_v2 run_command; grep, grep_search, ripgrep,
// codebase_search search_text; list_dir, file_search, glob_file_search search_files; web_search
// web_search; fetch, web_fetch, fetch_url web_fetch; todo_write todo_update; task spawn_subagent;
// mcp_* mcp_call; anything else unknown. Code blocks yield nothing.
//
// # Messages
//
// The conversation is one event.Message per message, id event.ID("cursor", "message", composer
// id, bubble id, block), at the bubble's time: a user bubble's text (the user_prompt's) a user
// message (block 0); an assistant bubble's thinking.text (else its allThinkingBlocks' text; none
// when empty) a thinking message (block 0), its text an assistant message (block 1), and its tool
// call a tool_call message (block 2: Tool the tool's name, ToolUseID its toolCallId, Text the
// action's target). MessageID is the bubble id, Model the bubble's model as for its usage. Seq is
// the bubble's place in the composer's fullConversationHeadersOnly (or inline conversation),
// counted from 1, × 64 + block; 0 × 64 + block when the composer read does not list it yet (its
// time then orders it). Texts are scrubbed and cut to 64 KB. The records hold no subagent
// conversation and no compaction summary this reader knows of. Caveat: Cursor rewrites an
// assistant bubble as the model streams, and a pass that reads it mid-stream emits the text so
// far under the bubble's message id; the message the store kept first is the one it keeps.
//
// # Token accounting
//
// Some Cursor releases record per bubble tokenCount {inputTokens, outputTokens}; many bubbles
// carry zeros, and what the figures cover (whether inputTokens includes cached context, whether
// they are the request's or an estimate) is documented nowhere. A bubble (of either type) whose
// figures are not both 0 yields one token_usage event, id event.ID("cursor", "usage", composer
// id, bubble id), Input = inputTokens, Output = outputTokens, no cache or reasoning figures; a
// bubble without them yields none (Cursor's server-side usage is not on disk). The model is the
// bubble's modelInfo.modelName, else the composer's modelConfig.modelName; Cursor's pseudo-models
// "default" and "auto" name no model and are left out. The cost is observer's price for the model
// at the bubble's time, looked up under the name the price table knows (Cursor writes Claude's
// version before its family: claude-4.5-sonnet is claude-sonnet-4-5), Reliability
// "approximate"; a usage without a model or with a model the table does not price has cost 0 and
// Reliability "unknown".
//
// # Times and projects
//
// An event's time is its bubble's createdAt, else its timingInfo.clientRpcSendTime or
// clientEndTime, else the composer's lastUpdatedAt or createdAt (readers report that some
// releases leave createdAt empty). The project is project.Root of the bubble's
// workspaceProjectDir (else its first file:// workspaceUris entry), else of the chat's folder
// remembered from an earlier bubble, else of the folder of the workspace whose database lists the
// composer. Events carry source observer-watch and client cursor; targets, errors and outputs are
// scrubbed and cut to 500 characters, 2 KB and 8 KB.
package cursor

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Cursor events carry.
const Client = client.Cursor

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Adapter finds and reads Cursor's state databases.
type Adapter struct {
	// Dirs are Cursor user directories: each holds globalStorage/state.vscdb and workspaceStorage.
	Dirs []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table

	workspaces workspaceCache
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given Cursor user directories.
func New(dirs []string) *Adapter { return &Adapter{Dirs: dirs} }

// DefaultDirs returns Cursor's user directory: ~/Library/Application Support/Cursor/User on
// macOS, $XDG_CONFIG_HOME/Cursor/User (default ~/.config/Cursor/User) elsewhere.
func DefaultDirs() []string {
	home, _ := os.UserHomeDir()
	if runtime.GOOS == "darwin" {
		return []string{filepath.Join(home, "Library", "Application Support", "Cursor", "User")}
	}
	cfg := strings.TrimSpace(os.Getenv("XDG_CONFIG_HOME"))
	if cfg == "" || !filepath.IsAbs(cfg) {
		cfg = filepath.Join(home, ".config")
	}
	return []string{filepath.Join(cfg, "Cursor", "User")}
}

// Client returns "cursor".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: each user directory's globalStorage.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, d := range a.Dirs {
		out = append(out, filepath.Join(d, "globalStorage"))
	}
	return out
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// Discover lists each user directory's globalStorage/state.vscdb. A missing directory is not an
// error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	for _, d := range transcript.DedupePaths(append([]string(nil), a.Dirs...)) {
		path := filepath.Join(transcript.ExpandHome(d), "globalStorage", "state.vscdb")
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		out = append(out, transcript.Source{Client: Client, Path: abs, Database: true})
	}
	return out, nil
}

// NewParser returns the parser of one state database, resumed from its watermark when state is
// not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
