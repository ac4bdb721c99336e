// Package auggie reads the local sessions of Augment Code's Auggie CLI (`auggie`, npm
// @augmentcode/auggie; client "auggie") into observer events, following the transcript contract.
// Auggie needs Augment's servers, so it does not run here: the reader is tested on fixtures
// written here to the format of the published package's own code (augment.mjs of
// @augmentcode/auggie 0.36.0: its SessionManager, SessionStore and agent state) and of tokscale's
// reader (crates/tokscale-core/src/sessions/augment.rs); facts only.
//
// # Files
//
// Auggie keeps its cache in ~/.augment (os.homedir(), the same on Linux and macOS), or in the
// directory its --augment-cache-dir flag names; it honours no environment variable for it, so
// observer's OBSERVER_AUGGIE_DIRS (a list separated by the OS path list separator) replaces the
// default: each entry is such a cache directory (its sessions/ is read), or a sessions directory
// itself. A session is one JSON document, sessions/<session id>.json, rewritten whole (written to
// <file>.<ms>.tmp, then renamed) each time it is saved: {sessionId, created, modified (ISO),
// chatHistory: [...], agentState: {modelId, ...}, title, customTitle, workspaceId,
// parentConversationId (a sub-agent's own session), subAgentCostUsd, ...}. <id>-backupN.json
// files are backups and are not read. A chatHistory item is {exchange, completed, sequenceId,
// finishedAt (ISO), isHistorySummary, source}; an exchange is one request to Augment's chat API
// and its answer: {request_id, request_message, response_text, model_id, request_nodes,
// response_nodes}. Request nodes: type 0 text_node {content}, 1 tool_result_node {tool_use_id,
// content, is_error, duration_ms, content_nodes}, 4 ide_state_node {workspace_folders
// [{repository_root, folder_root}], current_terminal {current_working_directory}}; response
// nodes: type 0 text {content}, 5 tool_use {tool_use_id, tool_name, input_json,
// mcp_server_name, mcp_tool_name, started_at_ms, completed_at_ms}, 8 thinking {content,
// summary}, 9 billing_metadata {cost_usd, credits_consumed, usage_unit}, 10 token_usage.
//
// # Token accounting
//
// The type-10 response node of an exchange holds the usage of its request: {input_tokens,
// output_tokens, cache_read_input_tokens, cache_creation_input_tokens}, Anthropic-style disjoint
// buckets (Auggie's own context meter adds the three input figures to get the prompt's size):
//
//	input_tokens                 the prompt net of the cache
//	cache_read_input_tokens      the part read from the cache
//	cache_creation_input_tokens  the part written to the cache
//	output_tokens                the answer, reasoning included
//
// so Input, CacheRead, CacheCreation and Output are those four. An exchange carries one usage
// node; the first that is not all zero is read (a repeated one is not counted twice). One
// token_usage event per exchange with usage (id event.ID(client, "usage", session, request id),
// MessageID and RequestID the request id), priced from the pricing table at the exchange's time
// for its model_id (else agentState.modelId), "approximate"; for a model the table does not price,
// the cost_usd of the exchange's billing nodes where Augment billed in dollars, else "unknown" at
// cost 0. Augment bills its plans in credits, so a priced cost is the list price of the tokens,
// not the user's bill. The LLM calls Augment makes for history summaries are not in
// chatHistory and are not counted. The proxy does not see Auggie's traffic (it goes to the
// tenant's Augment API).
//
// # Actions and messages
//
// A tool_use node is an action (id event.ID(client, "action", session, tool_use_id)) with its
// result, the tool_result_node of a later exchange: is_error failed, else succeeded; the output
// is its content (or its text content nodes); DurationMs its duration_ms, else the call's
// completed_at_ms minus started_at_ms. Mapping: view read_file (path; a directory view
// search_files), view-range-untruncated read_file; save-file write_file; str-replace-editor,
// apply_patch edit_file (path; a patch's first file), remove-files edit_file (the paths);
// launch-process run_command (command), read-process, write-process, kill-process,
// list-processes, read-terminal run_command ("terminal <id>"); grep-search search_text (query
// " in " directory), search-untruncated, codebase-retrieval, git-commit-retrieval,
// conversation-retrieval search_text; web-search web_search (query); web-fetch, open-browser
// web_fetch (url); add_tasks, update_tasks, view_tasklist, reorganize_tasklist todo_update;
// sub-agent and sub-agent-<name> spawn_subagent ("<name>: <instruction>"); ask-user ask_user; a
// tool of an MCP server (mcp_server_name set; Auggie names it <tool>_<server>) mcp_call
// ("<server>/<tool>"); anything else (github-api, linear, jira, diagnostics, ...) unknown with the
// raw name in Tool. An exchange's request_message (else its text nodes) is a user_prompt action
// and a user message; its text nodes (else response_text) assistant messages, its thinking
// thinking messages, each tool_use a tool_call message. Message ids event.ID(client, "message",
// session, request id, node index), Seq the exchange's index × 64 + node index.
//
// # Times, sessions and re-reads
//
// An exchange's time is its finishedAt, else its first response node's timestamp_ms, else the
// time before it, else the session's created. The session is the file name's id (the document's
// sessionId otherwise); a sub-agent's session (parentConversationId set) belongs to its parent:
// its events carry the parent's session id and its own id as AgentID (Sidechain), and it yields
// no session start or title. The directory is the first ide_state_node's workspace folder (or
// terminal directory); the title the customTitle (TitleByUser) else the title. History-summary
// items are Auggie's own bookkeeping and are skipped. A document is read whole each time and
// emits only new or changed events (transcript.Emitted); one that does not parse is ErrMalformed
// and keeps the State. Targets, errors, outputs and messages are scrubbed and cut to 500
// characters, 2 KB, 8 KB and 64 KB.
package auggie

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.Auggie

// EnvDirs is observer's variable for Auggie's cache directories (Auggie itself honours none).
const EnvDirs = "OBSERVER_AUGGIE_DIRS"

// Adapter reads Auggie's sessions.
type Adapter struct {
	// Roots are sessions directories.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the sessions directories of $OBSERVER_AUGGIE_DIRS when it is set (each a
// cache directory, or a sessions directory itself), else ~/.augment/sessions (the same on macOS).
func DefaultRoots() []string {
	if v := strings.TrimSpace(os.Getenv(EnvDirs)); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d == "" {
				continue
			}
			d = filepath.Clean(transcript.ExpandHome(d))
			if filepath.Base(d) != "sessions" {
				d = filepath.Join(d, "sessions")
			}
			out = append(out, d)
		}
		return transcript.DedupePaths(out)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = "."
	}
	return []string{filepath.Join(home, ".augment", "sessions")}
}

// WatchDirs lists the directories a watcher should watch for new records.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// backup matches a backup's name stem: <session id>-backup<N>.
var backup = regexp.MustCompile(`-backup[0-9]+$`)

// Discover lists the sessions (<id>.json, not backups), sorted by path. A missing root is not an
// error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDocuments(Client, a.Roots, func(name string) (string, bool) {
		id, ok := strings.CutSuffix(name, ".json")
		return id, ok && id != "" && !strings.HasPrefix(id, ".") && !backup.MatchString(id)
	})
}

// NewParser returns a parser for one session.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
