// Package deepseektui reads the saved sessions of DeepSeek TUI (Hmbown/DeepSeek-TUI, crate
// deepseek-tui, binaries deepseek and deepseek-tui; renamed CodeWhale, binaries codewhale and
// codewhale-tui; client "deepseek-tui") into observer events, following the transcript contract.
// The format is learned from the client's own source (crates/tui/src/session_manager.rs:
// SavedSession, SessionMetadata, SessionCostSnapshot, default_sessions_dir, save_session;
// crates/tui/src/models.rs: Message, ContentBlock, Usage; docs/TOOL_SURFACE.md and
// docs/CONFIGURATION.md) and cross-checked with the readers of other tools (agentsview's list of
// sources; Trajectory's and AgentVoice's notes on CodeWhale's sessions), facts only. The reader
// is tested on sessions written here to that format.
//
// # Files
//
// One JSON document per session, <sessions>/<id>.json (id a UUID), rewritten whole after each
// completed turn (a temporary file renamed over it): it is a transcript.Source Document, read
// whole at each change. <sessions> is $CODEWHALE_HOME/sessions when that variable is set, else
// ~/.codewhale/sessions and the legacy ~/.deepseek/sessions (which CodeWhale migrates from and
// DeepSeek TUI releases before the rename write), the same on Linux and macOS. The in-flight
// checkpoints (checkpoints/latest.json, offline_queue.json) are not read: the saved session
// holds the same turns once they complete. The client keeps its 50 most recent sessions.
//
// The document: {schema_version, metadata: {id, title (the first prompt's first 50 characters,
// or "New Session"), created_at, updated_at (RFC 3339), message_count, total_tokens, model,
// workspace (the directory it ran in), mode, cost: {session_cost_usd, subagent_cost_usd,
// ...}}, messages: [{role ("user", "assistant"), content: [blocks]}], system_prompt,
// context_references, goal_state_json, todos_json, artifacts}. Blocks: text {text}, thinking
// {thinking}, tool_use {id, name, input}, tool_result {tool_use_id, content (a string),
// is_error}, and server tool blocks (server_tool_use, tool_search_tool_result,
// code_execution_tool_result). A session keeps at most its last 500 messages, and compaction
// rewrites earlier ones: messages are keyed by their content, not their place (below).
//
// # Token accounting
//
// The client keeps no per-turn usage in the session: its messages carry none, and the metadata
// only a running total_tokens (no split between input, cache and output) and the cost it
// computed (session_cost_usd, subagent_cost_usd). So this reader emits no token_usage at all (no
// estimate, no share of a total); the proxy sees every request when DEEPSEEK_BASE_URL (or the
// config's base_url) points at it, and counts them there.
//
// # Actions and messages
//
// A tool_use block is an action, id event.ID("deepseek-tui", "action", session, tool_use id),
// with the outcome of its tool_result (in a later user message): is_error true failed (Error
// the result's text), else succeeded; no result yet, no outcome. Output is the result's text
// (8 KB). Mapping (docs/TOOL_SURFACE.md): read_file read_file; write_file write_file;
// edit_file, apply_patch edit_file; exec_shell, task_shell_start, task_gate_run, run_tests
// run_command; grep_files search_text; list_dir, file_search search_files; web_search, web.run
// web_search; fetch_url web_fetch; agent_open, agent_spawn, spawn_agent, delegate_to_agent
// spawn_subagent; update_plan, checklist_*, todo_* todo_update; mcp_<server>_<tool> mcp_call;
// anything else (exec_shell_wait, git_status, note, rlm_*, ...) unknown with the raw name in Tool.
// Targets: the path (relative to the project), the command, the pattern (" in " path), the
// query, the URL, the sub-agent's name and task.
//
// A user message's text blocks are a user_prompt action and a user message; a user message of
// tool results only is none. An assistant message's text blocks are assistant messages, its
// thinking blocks thinking messages, each tool_use a tool_call message.
//
// # Times, ids and re-reads
//
// DeepSeek TUI records no time per message. A session's first message is at its created_at;
// a message first read in a later read is at the document's updated_at then (live, the time the
// client saved the turn; for a session read for the first time, every message but the first is
// at its last update). A message is keyed by a hash of its JSON (without the document's
// indentation: the client writes a message the same way at each save) and the number of
// identical messages before it, so that the ids stay the same when the client drops or
// compacts earlier messages: message ids event.ID("deepseek-tui", "message", session, key,
// block index), a tool call's event.ID("deepseek-tui", "message", "tool_use", session, tool
// use id), a prompt's event.ID("deepseek-tui", "prompt", session, key); Seq is the message's
// index times 64 plus the block's. The State keeps how many messages were reported
// and the key of the last one: a read emits the messages after it (found again by its key when
// earlier ones were dropped), a tool call whose result appears later again with its outcome at
// its first time, and the session events when they change. A document that no longer holds the
// last key (rewritten) is read again from its first message, under the same ids. A document
// that does not parse (caught mid-write, damaged) is ErrMalformed and keeps the State.
//
// The session is the metadata's id (the file's name); its cwd the workspace; the project
// project.Root of it. A started session event at created_at carries the model; a model event
// follows each change of the metadata's model, a title event each change of the title (not the
// placeholder "New Session"). Targets, errors and outputs are scrubbed and cut to 500
// characters, 2 KB and 8 KB, message text to 64 KB.
package deepseektui

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.DeepSeekTUI

// Adapter reads DeepSeek TUI's (CodeWhale's) saved sessions.
type Adapter struct {
	// Roots are sessions directories (~/.codewhale/sessions, ~/.deepseek/sessions).
	Roots []string
	// Prices is kept for transcript.Priced: the sessions carry no usage to price.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices.
	CurrentPrices func() *pricing.Table
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "deepseek-tui".
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the sessions directories: $CODEWHALE_HOME/sessions when that is set, else
// ~/.codewhale/sessions and ~/.deepseek/sessions (the same on Linux and macOS).
func DefaultRoots() []string {
	if h := strings.TrimSpace(os.Getenv("CODEWHALE_HOME")); h != "" {
		return []string{filepath.Join(transcript.ExpandHome(h), "sessions")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".codewhale", "sessions"), filepath.Join(home, ".deepseek", "sessions")}
}

// WatchDirs lists the directories a watcher should watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the saved sessions (<id>.json directly in a root, id of letters, digits, "-"
// and "_" as the client names them), sorted by path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDocuments(Client, a.Roots, func(name string) (string, bool) {
		id, ok := strings.CutSuffix(name, ".json")
		return id, ok && validID(id)
	})
}

// validID reports a session id the client could have written (session_manager.rs
// validated_session_path).
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewParser returns a parser for one saved session.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state)
}
