// Package forge reads the conversations of Forge (antinomyhq/forge, the forge CLI, "ForgeCode";
// client "forge") into observer events, following the transcript contract for Database sources:
// Forge keeps every conversation in one SQLite database. The format is learned from Forge's own
// source (crates/forge_repo/src/database/schema.rs and migrations/, conversation/
// conversation_record.rs: ContextRecord, ContextMessageRecord, TextMessageRecord,
// ToolResultRecord, UsageRecord, TokenCountRecord; crates/forge_domain/src/context.rs:
// MessageEntry, Context::accumulate_usage; crates/forge_app/src/dto/anthropic/response.rs: how
// a provider's usage becomes Forge's; crates/forge_domain/src/tools/: tool names and
// arguments) and cross-checked with the Forge readers of agentsview
// (kenn-io/agentsview internal/parser/forge.go) and tokentelemetry, facts only. The reader is
// tested on a database written here in Forge's schema.
//
// # Files
//
// One database, <base>/.forge.db, where <base> is $FORGE_CONFIG when set, else ~/forge when
// that directory exists (older releases), else ~/.forge; the same on Linux and macOS. Table
// conversations: conversation_id TEXT PRIMARY KEY (a UUID: the session id), title,
// workspace_id (a hash of the directory Forge ran in, not the path), context TEXT (the whole
// conversation as JSON), created_at and updated_at (UTC, "YYYY-MM-DD HH:MM:SS.ffffff"),
// metrics, todos. A conversation is one row rewritten whole (INSERT ... ON CONFLICT DO UPDATE)
// as it changes: each row is a document.
//
// The context: {conversation_id, messages: [entry], tools, ...}; an entry is {"message":
// {"text": TextMessage} or {"tool": ToolResult} or {"image": ...}, "usage": Usage} (older rows:
// the message's own {"text": ...} without the wrapper). TextMessage: {role ("System", "User",
// "Assistant"), content, raw_content (the user's input before Forge's template), tool_calls
// [{name, call_id, arguments}], model, reasoning_details [{text, ...}], droppable (an attached
// file's content, not typed)}. ToolResult: {name, call_id, output: {is_error, values: [{"text":
// ...}, ...]}}. No message carries a time. The system message holds the working directory in
// <current_working_directory>...</current_working_directory>.
//
// # Reading while Forge writes
//
// A pass opens the database read-only with package sqliteread, in one read transaction, lists
// the conversations (id, updated_at) and reads the context of those whose updated_at changed
// since the last acknowledged pass, one row at a time. The State keeps per conversation the
// updated_at read, how many messages were reported and the key of the last one, the tool calls
// still waiting for a result (id and time), and short keys of the title and models reported; a
// conversation deleted from the table is dropped from it. A row whose context does not decode
// is counted in Stats.Malformed and read again only when it changes.
//
// # Token accounting
//
// Forge keeps, on each assistant entry, the usage of the request that produced it (its
// accumulate_usage adds them up): {prompt_tokens, completion_tokens, total_tokens,
// cached_tokens, cost}, each count {"actual": n} (the provider's) or {"approx": n} (Forge's own
// estimate). What includes what: prompt_tokens is the whole prompt (for Anthropic, Forge adds
// input_tokens, cache_creation_input_tokens and cache_read_input_tokens; OpenAI's prompt_tokens
// already include cached ones), cached_tokens the part read from the cache, completion_tokens
// the answer with any reasoning. So Input = prompt_tokens − cached_tokens (cache writes stay in
// Input, priced as input: Forge does not keep them apart), CacheRead = cached_tokens, Output =
// completion_tokens. A usage whose prompt or completion count is an estimate ("approx") is not
// reported (no estimates); one without figures is none. One token_usage per entry, id
// event.ID("forge", "usage", conversation id, the entry's key), at the entry's time, with the
// entry's model, priced from the pricing table ("approximate"); for a model the table does not
// price, at the cost Forge recorded (the provider's, where it reports one), else "unknown" at
// cost 0. Forge sends its requests to the provider the user set up (forge provider login, or
// OPENAI_URL/ANTHROPIC_URL-style base URLs in its config): the proxy sees them only where that
// base URL points at it.
//
// # Actions and messages
//
// A tool call is an action, id event.ID("forge", "action", conversation id, call_id), with the
// outcome of its tool result (a later "tool" entry): is_error true failed (Error the output's
// text), else succeeded; no result yet, no outcome. Output is the text of the output's values
// (8 KB). Mapping (current names, then the forge_tool_* names of older releases): read,
// read_image read_file (path); write write_file; patch, multi_patch, undo, remove edit_file;
// shell run_command (command); search search_text (regex " in " path) or, without a regex,
// search_files (file_pattern); codebase_search, sem_search search_text (query); fetch web_fetch
// (url); followup ask_user (question); attempt_completion task_complete; todo_write,
// todo_read, plan todo_update; task spawn_subagent; mcp_<server>_tool_<tool> (and
// mcp__<server>__<tool>) mcp_call ("server/tool"); anything else unknown with the raw name in
// Tool. File targets are relative to the project.
//
// A user entry that is not droppable is a user_prompt action and a user message, its text
// raw_content's (what the user typed) else content. An assistant entry's content is an
// assistant message, its reasoning_details a thinking message, each tool call a tool_call
// message. System entries are no messages.
//
// # Times, ids and re-reads
//
// Forge records no time per message. On a conversation's first read, its messages up to its
// first prompt (the system prompt before it included) are at its created_at and the others at
// the row's updated_at; a message first read in a later pass is at the row's updated_at read
// then (live, about when Forge saved the turn); a tool result emits its call again at the time
// the call was given. A message is keyed by a hash of its JSON (as Forge writes it at each save;
// not its usage) and the number of identical messages before it, so the ids stay when Forge
// compacts or drops earlier messages: message ids event.ID("forge", "message", conversation id,
// key, block: 0 thinking, 1 text, 2+ calls), a tool call's event.ID("forge", "message",
// "tool_use", conversation id, call_id), a prompt's event.ID("forge", "prompt", conversation
// id, key); Seq the message's index times 64 plus the block's. A pass emits the messages after
// the last one reported (found again by its key), and re-reads a conversation from its first
// message when that key is gone, under the same ids.
//
// The session is the conversation id; its cwd the system message's working directory; its
// project project.Root of it. A started session event at created_at, a title event when the
// title changes, a model event for each new model; events carry the database's path as
// transcript path. Forge's subagents run conversations of their own (rows of the same table):
// they are sessions of their own. Targets, errors and outputs are scrubbed and cut to 500
// characters, 2 KB and 8 KB, message text to 64 KB.
package forge

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Forge's events carry (the integrator moves it to pkg/client).
const Client = client.Forge

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// DBName is the database's file name in Forge's base directory.
const DBName = ".forge.db"

// Adapter finds and reads Forge's databases.
type Adapter struct {
	// Roots are Forge base directories: each may hold .forge.db.
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

// New returns an adapter reading the given base directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "forge".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// DefaultRoots returns Forge's base directories: $FORGE_CONFIG when set, else ~/forge (older
// releases, still used where it exists) and ~/.forge.
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv("FORGE_CONFIG")); d != "" {
		return []string{transcript.ExpandHome(d)}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, "forge"), filepath.Join(home, ".forge")}
}

// Discover lists the .forge.db of every root as a Database source, once when symbolic links make
// two of them one file (~/forge linked to ~/.forge). A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDatabases(Client, a.Roots, DBName, true)
}

// NewParser returns the parser of a database (a transcript.Poller), resumed from state when it
// is not nil. A state that does not load costs a re-read, never data.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newDBParser(a, src, state), nil
}
