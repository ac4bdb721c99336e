// Package devin reads the local sessions of Cognition's Devin CLI (command `devin`; client
// "devin") into observer events, following the transcript contract for Database sources: the CLI
// keeps every session in one SQLite database.
//
// Sources (facts only; Devin's CLI is closed source and does not run here, so the tests run on
// databases written here to the format these readers describe): agentsview's Devin reader
// (wesm/agentsview and kenn-io/agentsview internal/parser/devin.go, devin_test.go,
// devin_subagent.go, types.go), cross-checked with tokscale's (junhoyeo/tokscale
// crates/tokscale-core/src/sessions/devin.rs). Neither publishes Devin's tool set, nor a flag that
// marks a failed tool result: see Actions.
//
// # Files
//
// <data>/cli/sessions.db, where <data> is ~/.local/share/devin on Linux ($XDG_DATA_HOME/devin when
// that is set, as a third-party reader of Devin's credentials resolves it) and, on macOS,
// ~/Library/Application Support/devin as agentsview lists it, besides ~/.local/share/devin that
// other readers use there too. No environment variable of Devin's own is known to move it:
// OBSERVER_DEVIN_DIRS (data directories, separated by the OS list separator) replaces the default
// list. The CLI also writes <data>/cli/transcripts/<session>.json exports; they are not read (they
// repeat the database, and reading both would count twice).
//
// Tables read: sessions (id, title, working_directory, model, created_at in Unix seconds; hidden,
// main_chain_id and others are not used) and message_nodes (row_id INTEGER PRIMARY KEY
// AUTOINCREMENT, session_id, node_id, parent_node_id, chat_message TEXT, created_at in Unix
// seconds). chat_message is an OpenAI-style chat message: {role: user|assistant|system|tool,
// content: a string or [{type: "text", text}], thinking, tool_calls: [{id, type: "function",
// function: {name, arguments (a JSON string)}}], tool_call_id (a tool result), metadata:
// {generation_model, num_tokens, metrics: {input_tokens, output_tokens, cache_read_tokens,
// cache_creation_tokens, total_time_ms}}}. message_nodes is a forest: each node names its parent;
// a retry or an edit branches off an earlier node (sessions.main_chain_id is the leaf of the
// branch the UI shows). A root node whose system prompt says "You are a subagent of Devin" starts
// a subagent's tree, "You are a Summarizer" a summarizer's (both from agentsview).
//
// # Reading while the client writes
//
// As the other database readers (package sqliteread): read-only, one read transaction per pass,
// mode=ro with a busy timeout while a -wal file exists, else immutable with a check that the file
// did not change. The State is the watermark: the largest message_nodes.row_id read. A pass reads
// the rows past it, in row_id order (nodes are inserted once, as the published readers treat
// them; a row changed after it was read is not read again), and, to place them in their trees,
// the parent links of the earlier rows of the sessions it touches. A failed pass leaves the
// watermark; a chat_message that does not decode is counted in Stats.Malformed and passed over.
//
// # Token accounting
//
// Each assistant node carries the usage of the request that produced it, in metadata.metrics.
// What includes what (agentsview: total prompt = input + cache_read + cache_creation):
//
//	input_tokens           the prompt net of the cache
//	cache_read_tokens      the part read from the cache
//	cache_creation_tokens  the part written to the cache
//	output_tokens          the answer, reasoning included (no split is kept)
//
// so Input = input_tokens, CacheRead = cache_read_tokens, CacheCreation = cache_creation_tokens,
// Output = output_tokens (null reads as 0). One token_usage event per assistant node with usage,
// id event.ID("devin", "usage", session, node_id), Model metadata.generation_model (the concrete
// model of the request), else sessions.model (which may be a routing mode such as "adaptive",
// then unpriced), priced from the pricing table at the node's time: Reliability "approximate", or
// "unknown" at cost 0 for a model the table does not price. Every node counts, those of abandoned
// retry branches too (each was a request made; agentsview shows only the main chain), and those
// of subagents' and summarizers' trees (AgentID set). Devin's traffic goes to Cognition's
// servers: the proxy does not see it.
//
// # Actions and messages
//
// A tool call is an action, id event.ID("devin", "action", session, call id), with the raw name
// in Tool, the target from its arguments and an input hash; the tool message with that
// tool_call_id is the same event id carrying its Output (8 KB) and OutputSize. Devin records no
// outcome for a tool result that a published reader decodes, so Success stays unset (no failure
// is inferred from the text). Mapping (tools.go; names as the readers' fixtures show them and the
// usual spellings, Devin's own list is not published): read_file, view_file, read, view
// read_file; write_file, write_to_file, create_file, write write_file; edit_file, edit,
// str_replace, replace_file_content, multi_replace_file_content, multi_edit, apply_patch
// edit_file; shell_command, run_command, shell, bash, exec, exec_command, terminal run_command;
// grep, grep_search, search, codebase_search, ripgrep search_text; glob, find_by_name, list_dir,
// ls, find search_files; web_search, search_web web_search; web_fetch, fetch, read_url_content
// web_fetch; task, subagent, spawn_subagent, agent spawn_subagent; todo_write, todo_list, todo
// todo_update; mcp__<server>__<tool> and mcp_<server>_<tool> mcp_call; anything else unknown
// with the raw name.
//
// A user node's text is a user_prompt action (id event.ID("devin", "prompt", session, node_id))
// and a user message; in a subagent's or summarizer's tree it is their instruction, a message
// with AgentID and Sidechain but no prompt. An assistant node's thinking is a thinking message,
// its text an assistant message (a summary message in a summarizer's tree), each tool call a
// tool_call message. System nodes and tool results are no messages. Message ids
// event.ID("devin", "message", session, node_id, part), Seq row_id × 64 + part.
//
// # Times, sessions and re-reads
//
// A node's time is its created_at. The session is sessions.id; each pass that reads nodes of a
// session emits its started event (at sessions.created_at, cwd working_directory, the database
// as transcript path) and, when it has one, its title, under the same ids each time, so the
// writer stores them once. The project is project.Root of the working directory. A subagent's
// AgentID is "agent-<root node id>", a summarizer's "summarizer-<root node id>".
package devin

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Devin events carry (the integrator moves it to pkg/client).
const Client = client.Devin

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvDirs overrides the data directories Discover reads (see the package doc).
const EnvDirs = "OBSERVER_DEVIN_DIRS"

// DBName is the database's file name inside <data>/cli.
const DBName = "sessions.db"

// Adapter finds and reads Devin CLI databases.
type Adapter struct {
	// Roots are Devin data directories (holding cli/sessions.db).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given data directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns $OBSERVER_DEVIN_DIRS when set, else Devin's data directories: on Linux
// $XDG_DATA_HOME/devin (when absolute) and ~/.local/share/devin, on macOS also
// ~/Library/Application Support/devin.
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	var roots []string
	if goos == "darwin" {
		roots = append(roots, filepath.Join(home, "Library", "Application Support", "devin"))
	}
	if d := strings.TrimSpace(os.Getenv("XDG_DATA_HOME")); d != "" && filepath.IsAbs(d) {
		roots = append(roots, filepath.Join(d, "devin"))
	}
	roots = append(roots, filepath.Join(home, ".local", "share", "devin"))
	return transcript.DedupePaths(roots)
}

// WatchDirs lists the directories holding the databases (<root>/cli).
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, filepath.Join(r, "cli"))
	}
	return transcript.DedupePaths(out)
}

// Discover lists <root>/cli/sessions.db of every root that has one, as Database sources. A
// missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var paths []string
	for _, r := range a.Roots {
		paths = append(paths, filepath.Join(r, "cli", DBName))
	}
	return transcript.DatabaseSources(Client, paths), nil
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// NewParser returns the parser of one database, resumed from its watermark when state is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
