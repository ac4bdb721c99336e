// Package zed reads the threads of Zed's own agent (the Agent Panel's native agent, crates agent
// and acp_thread of github.com/zed-industries/zed; client "zed") into observer events, following
// the transcript contract for Database sources: Zed keeps every thread in one SQLite database.
//
// Sources consulted (no corpus holds a Zed database; the tests run on threads written here to
// these sources' format, facts only): zed-industries/zed crates/agent/src/db.rs (the threads table,
// its columns added by later migrations, DbThread, DataType, save_thread_sync: zstd level 3 of the
// JSON with "version": "0.3.0"), crates/agent/src/thread.rs (Message, UserMessage,
// AgentMessage, AgentMessageContent, update_token_usage and accumulate_token_usage, to_db),
// crates/agent/src/legacy_thread.rs via DbThread::upgrade_from_agent_1 (the format of Zed's first
// agent), crates/language_model_core/src/language_model_core.rs (TokenUsage, LanguageModelToolUse
// and its {"type": "json", "value": ...} input), crates/language_models/src/provider/open_ai.rs
// and anthropic.rs (what the token counts mean), crates/agent/src/tools/*.rs (tool names and
// inputs), crates/paths/src/paths.rs (data_dir); cross-checked with the Zed reader of agentsview
// (kenn-io/agentsview internal/parser/zed.go and zed_helpers.go).
//
// # Files
//
// One database, threads.db, in <data dir>/threads. The data directory is, on Linux,
// $FLATPAK_XDG_DATA_HOME/zed inside Flatpak, else $XDG_DATA_HOME/zed (when absolute), else
// ~/.local/share/zed; on macOS ~/Library/Application Support/Zed. No other environment variable
// moves it: a data directory elsewhere is a root to configure. The path does not depend on Zed's
// release channel (stable, preview, nightly), which share the file.
//
// Table threads: id TEXT PRIMARY KEY (a UUID: the session id), summary (the title), updated_at
// and, since a later migration, created_at (RFC 3339, UTC, from chrono), data_type ("zstd" or
// "json"), data BLOB (the thread's JSON, zstd-compressed), and parent_id (the thread a subagent's
// thread belongs to), folder_paths and folder_paths_order (the workspace folders, one per line).
// A thread is one row rewritten whole (INSERT ... ON CONFLICT DO UPDATE) whenever it changes:
// each row is a document. The JSON (version "0.3.0"): {title, messages, updated_at,
// initial_project_snapshot {worktree_snapshots [{worktree_path, git_state {current_branch}}]},
// cumulative_token_usage, request_token_usage, model {provider, model}, subagent_context, ...}.
// A message is {"User": {id, content}} (content items {"Text": "..."}, {"Mention": {uri,
// content}}, {"Image": ...}), {"Agent": {content, tool_results}} (content items {"Text": "..."},
// {"Thinking": {text, signature}}, {"RedactedThinking": "..."}, {"ToolUse": {id, name, input,
// raw_input, is_input_complete}}; tool_results an object keyed by tool use id of {tool_use_id,
// tool_name, is_error, content, output}), the string "Resume" (Zed asked the model to go on) or,
// in the newest releases, {"Compaction": ...}. No message carries a time. Rows Zed's first agent
// wrote and no release re-saved since hold its older JSON (version "0.1.0" or "0.2.0", or none):
// {summary, messages [{id, role, segments [{type text|thinking|redacted_thinking}], tool_uses
// [{id, name, input}], tool_results [{tool_use_id, is_error, content}], is_hidden}],
// cumulative_token_usage, model}; they are read too.
//
// # Reading while Zed writes
//
// A pass opens the database read-only with package sqliteread, in one read transaction, lists the
// threads (id, updated_at, parent_id, created_at) and reads the data of those whose updated_at
// changed since the last acknowledged pass, one row at a time, oldest first, handing their events
// over in batches as it goes (a transcript.StreamPoller: a pass holds the list, one thread and one
// batch of events, not every changed thread). The State keeps, for the 128 most recently updated
// threads (and any updated less than an hour before the newest one, or whose updated_at does not
// parse), the updated_at read, how many messages were reported, the time they were given, a hash of
// the last one (the only one that can still grow: a streaming reply, its tool results) and one of
// those before it, and short keys of the title, model and usage reported, so a pass reports only
// the new messages, the last one again when it changed, and the figures when they changed. The
// other threads are settled: the State keeps only the newest updated_at among them, and a thread
// absent from the recent ones that was updated at or before it is passed over; one updated since (a
// thread Zed changes is saved with a later updated_at) is read as a thread read for the first time,
// its events again under the ids they had. A thread written with an updated_at at or before the
// watermark that the State does not hold (none that Zed saves as it changes) would not be read; the
// watermark stays an hour behind the newest thread, so that a save committed late is not one. A
// thread deleted from the table is dropped from the State. When a thread has fewer messages than
// reported, or its messages before the last reported one changed (the user edited an earlier
// prompt: Zed truncated the thread there, and it may have grown past its old length since), its
// messages are read again from the first: those that stayed yield the ids and contents they had. A
// row that does not decode is counted in Stats.Malformed and read again only when it changes.
//
// # Token accounting
//
// Zed keeps no usage per model request. It keeps, per thread, cumulative_token_usage and, per
// user message (the turn it started), request_token_usage: the usage of the turn's LAST request
// only (each request of the turn's tool loop replaces the previous one). Current releases add
// every request's final usage to cumulative_token_usage (accumulate_token_usage); the releases of
// the native agent before that left it at zero, and Zed's first agent kept the same running sum.
// So observer reports one token_usage per thread, id event.ID("zed", "usage", thread id), with
// cumulative_token_usage when it counts anything, else the sum of request_token_usage (then an
// undercount: a turn's requests before its last are not kept anywhere). The first agent's
// per-message request_token_usage (a list padded with copies of the previous figures) is not
// read. Each TokenUsage is {input_tokens, output_tokens, cache_creation_input_tokens,
// cache_read_input_tokens}, what includes what:
//
//	input_tokens                 the prompt net of the cache for Anthropic-style providers (their
//	                             own input_tokens) and, in current releases, for OpenAI's (prompt
//	                             minus cached tokens); older releases wrote OpenAI's whole prompt
//	                             here with no cache figures
//	cache_creation_input_tokens  the part written to the cache (Anthropic-style providers)
//	cache_read_input_tokens      the part read from the cache
//	output_tokens                the answer, reasoning and thinking included
//
// so Input = input_tokens, CacheCreation = cache_creation_input_tokens, CacheRead =
// cache_read_input_tokens, Output = output_tokens (no separate reasoning figure). The event is at
// the thread's created_at (a replay gives the same time) with the thread's model (the one it
// uses now: a thread whose user switched models is priced at the last one), its figures growing
// with the thread (the writer keeps those with the largest output), priced from the pricing table
// ("approximate"; "unknown" at cost 0 for a model the table does not price). A subagent's thread
// has its own event, AgentID its thread id.
//
// # Actions and messages
//
// A ToolUse is an action, id event.ID("zed", "action", thread id, tool use id), with the raw
// tool name in Tool and the outcome of its tool result: is_error false succeeded, true failed
// (Error the result's text: a tool's error, "Tool canceled by user", a denied permission); no
// result yet, no outcome. Output is the result's text (8 KB). Mapping: terminal run_command
// (command); read_file read_file (path); edit_file and streaming_edit_file edit_file, or
// write_file with mode create or overwrite (path); write_file and create_file write_file;
// delete_path, move_path, save_file and restore_file_from_disk edit_file; copy_path and
// create_directory write_file; grep search_text (regex, " in " include_pattern); find_path and
// list_directory search_files (glob, path); fetch web_fetch (url); web_search web_search (query);
// spawn_agent and subagent spawn_subagent (label, message); update_plan todo_update; ask_user
// ask_user; anything else unknown with the raw name. Zed gives the model its MCP servers' tools
// under their bare names, which the thread does not tell from a built-in tool: they are unknown
// too. Zed's paths start with the worktree's name ("webapp/src/main.rs"); a path whose first part
// is the thread's folder's name is made relative to it.
//
// A user message's Text items (not its mentions, the context Zed attaches) are a user_prompt
// action, id event.ID("zed", "prompt", thread id, user message id), and a user message; "[image]"
// stands for an image. An agent message's Text items are assistant messages, Thinking items
// thinking messages, ToolUse items tool_call messages (Text the action's target). Message ids
// event.ID("zed", "message", thread id, message index, item index), Seq message index × 64 + item
// index. A Compaction message is a context_compacted action. A subagent's thread (parent_id set)
// belongs to its parent's session: its events carry the root thread's id as session and its own
// id as AgentID, it has no session events of its own, and its first user message (the parent's
// task) is a user message but no prompt.
//
// # Times, sessions and re-reads
//
// Zed records no time per message. A thread's first message is at its created_at; a message
// first read in a pass is at the thread's updated_at read in that pass (live, the time Zed saved
// the turn; for a thread read for the first time, or again once settled, every later message is
// at its last update, a message already stored keeping its first time);
// the last message read again keeps the time it was given. The session is the thread's id (the
// root thread's for a subagent); its working directory the first of folder_paths, else the first
// worktree of initial_project_snapshot; its project project.Root of that; the session events (a
// started event at created_at with the git branch, a title event when the title changes, except
// Zed's placeholder "New Thread", a model event when the model changes) carry the database's path
// as transcript path. Targets, errors and outputs are scrubbed and cut to 500 characters, 2 KB and
// 8 KB, message text to 64 KB.
package zed

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Zed's events carry (the integrator moves it to pkg/client).
const Client = client.Zed

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// DBName is the threads database's file name in a threads directory.
const DBName = "threads.db"

// Adapter finds and reads Zed's threads databases.
type Adapter struct {
	// Roots are threads directories: each may hold threads.db.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given threads directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "zed".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// DefaultRoots returns the threads directory Zed writes to on this system (see the package doc).
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	home, _ := os.UserHomeDir()
	if goos == "darwin" {
		return []string{filepath.Join(home, "Library", "Application Support", "Zed", "threads")}
	}
	var roots []string
	if d := strings.TrimSpace(os.Getenv("FLATPAK_XDG_DATA_HOME")); d != "" && filepath.IsAbs(d) {
		roots = append(roots, filepath.Join(d, "zed", "threads"))
	}
	data := strings.TrimSpace(os.Getenv("XDG_DATA_HOME"))
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(home, ".local", "share")
	}
	roots = append(roots, filepath.Join(data, "zed", "threads"))
	return transcript.DedupePaths(roots)
}

// Discover lists the threads.db of every root as a Database source. A missing root is not an
// error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDatabases(Client, a.Roots, DBName, false)
}

// NewParser returns the parser of a threads database (a transcript.Poller), resumed from state
// when it is not nil. A state that does not load costs a re-read, never data.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newDBParser(a, src, state), nil
}
