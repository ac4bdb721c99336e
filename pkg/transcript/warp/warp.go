// Package warp reads the local record of Warp's AI agent (the Warp terminal's Agent Mode; command
// `warp-terminal` on Linux, Warp.app on macOS; client "warp") into observer events, following the
// transcript contract for Database sources: Warp keeps its state, the agent's conversations among
// it, in one SQLite database.
//
// Sources (facts only; Warp does not run here, so the tests run on databases written here to this
// format): Warp's own client source (warpdotdev/warp crates/persistence/src/schema.rs, the Diesel
// schema of agent_conversations and ai_queries, and the persistence model that serializes
// conversation_data: AgentConversationData, ConversationUsageMetadata, ModelTokenUsage,
// ChargedUsageTotals), cross-checked with agentsview's Warp reader (kenn-io/agentsview
// internal/parser/warp.go and warp_paths.go: the paths and the ai_queries input format).
//
// # Files
//
// warp.sqlite in Warp's state directory: on Linux $XDG_STATE_HOME/warp-terminal, else
// ~/.local/state/warp-terminal (warp-terminal-preview for the Preview channel); on macOS
// ~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable
// (dev.warp.Warp-Preview). Warp honours no environment variable of its own for it (the
// XDG_STATE_HOME reading is the XDG default a Rust dirs lookup makes, not verified on a running
// Warp): OBSERVER_WARP_DIRS (directories holding warp.sqlite, separated by the OS list separator)
// replaces the default list.
//
// Tables read (the rest of warp.sqlite is the terminal's: blocks, tabs, panes...):
// agent_conversations (conversation_id, conversation_data TEXT: JSON, last_modified_at TIMESTAMP)
// and ai_queries (id, exchange_id, conversation_id, start_ts TIMESTAMP, input TEXT: JSON,
// working_directory, output_status, model_id). Timestamps are Diesel's NaiveDateTime text,
// "YYYY-MM-DD HH:MM:SS[.ffffff]", in UTC. One ai_queries row is one exchange (a turn): its input
// is a JSON array whose items are tagged, [{"Query": {"text", "context"}}] for a prompt the user
// typed (other tags, a tool's result sent back, are not prompts). The agent's full messages, tool
// calls and results live in agent_tasks.task, a protobuf blob (warp_multi_agent_api.Task); this
// reader does not decode it, so it sees no tool call (see Actions).
//
// # Reading while Warp writes
//
// As the other database readers (package sqliteread): read-only, one read transaction per pass,
// mode=ro with a busy timeout while a -wal file exists, else immutable with a check that the file
// did not change. The State is two watermarks: the largest ai_queries.id read (exchanges are
// inserted once), and for agent_conversations the latest last_modified_at read with, for the
// rows read at exactly that time, a hash of their conversation_data, so a conversation Warp
// rewrites (it does after every exchange) is read again when it changed. A failed pass leaves the
// State; a conversation_data or input that does not decode is counted in Stats.Malformed.
//
// # Token accounting
//
// Warp keeps no usage per request. conversation_data.conversation_usage_metadata holds the
// conversation's running totals:
//
//	token_usage            [{model_id, warp_tokens, byok_tokens, custom_endpoint_tokens, and the
//	                       same by category}]: tokens per model, each figure a TOTAL with no split
//	                       between prompt, cache and answer
//	total_charged_usage    (newer Warp, when the server sends pricing) {input_tokens,
//	                       output_tokens, input_cache_read_tokens, input_cache_write_tokens and
//	                       their *_cost_in_cents, platform_cost_in_cents, web_search_*}: the same
//	                       conversation split into disjoint buckets (Warp's own total_tokens adds
//	                       the four), summed over every model
//	credits_spent          Warp credits, not dollars (not read)
//
// Only total_charged_usage can be counted: it yields one token_usage event per conversation, id
// event.ID("warp", "usage", conversation), Input = input_tokens, Output = output_tokens (reasoning
// inside, not split), CacheRead = input_cache_read_tokens, CacheCreation =
// input_cache_write_tokens. It is cumulative: each rewrite of the conversation emits it again
// under the same id with the larger figures, which the writer keeps (it replaces a usage whose
// output grew). Its time is the conversation's first exchange (the store keeps the first time it
// saw). Model is the conversation's model when token_usage names exactly one, else empty (a
// conversation that switched models: its figures cannot be told apart). Cost: Warp's own charge,
// the four inference *_cost_in_cents / 100 (platform and web search fees left out); when Warp
// charged nothing (a conversation on the user's own key, "byok"), the pricing table's price of
// the single model; else 0 with Reliability "unknown". Reliability "approximate" otherwise. A
// conversation that has only token_usage (older Warp, or pricing not sent) yields NO token usage:
// its totals have no split to price or to merge as they grow, and observer makes no estimate.
// Warp's requests go to Warp's servers (with the user's key in byok mode too): the proxy does not
// see them.
//
// # Actions and messages
//
// An exchange whose input holds a Query is a user_prompt action (id event.ID("warp", "prompt",
// exchange_id)) and a user message (id event.ID("warp", "message", exchange_id, item index), Seq
// ai_queries.id × 64 + item index), at start_ts. Warp's database holds no reply text and no tool
// call outside the protobuf task blobs, and its per-conversation tool counts
// (tool_usage_metadata.*_stats.count: run_command, read_files, grep, file_glob,
// apply_file_diff, call_mcp_tool, ...) carry no target, time or outcome: no tool action is
// emitted. Warp's tools map (ToolType), for whoever decodes the tasks later, as run_command,
// write_to_long_running_shell_command and read_shell_command_output run_command, read_files
// read_file, apply_file_diff
// edit_file, grep and search_codebase search_text, file_glob search_files, call_mcp_tool and
// read_mcp_resource mcp_call, suggest_plan and suggest_create_plan todo_update, anything else
// unknown.
//
// # Times, sessions and re-reads
//
// The session is the conversation_id. A pass that reads a conversation's exchanges or its row
// emits its started event (at its first exchange's start_ts, cwd that exchange's
// working_directory, parent the conversation_data's parent_conversation_id for an agent an
// orchestrator spawned, the database as transcript path) and a session event per model_id
// named, under the same ids each time, so the writer stores them once. A conversation without any
// exchange yields nothing. The project is project.Root of the working directory.
package warp

import (
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Warp events carry (the integrator moves it to pkg/client).
const Client = client.Warp

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvDirs overrides the directories Discover reads (see the package doc).
const EnvDirs = "OBSERVER_WARP_DIRS"

// DBName is the database's file name.
const DBName = "warp.sqlite"

// Adapter finds and reads Warp's databases.
type Adapter struct {
	// Roots are directories holding warp.sqlite.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns $OBSERVER_WARP_DIRS when set, else Warp's state directories of the
// Stable and Preview channels.
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	if goos == "darwin" {
		group := filepath.Join(home, "Library", "Group Containers", "2BBY89MBSN.dev.warp", "Library", "Application Support")
		return []string{filepath.Join(group, "dev.warp.Warp-Stable"), filepath.Join(group, "dev.warp.Warp-Preview")}
	}
	state := strings.TrimSpace(os.Getenv("XDG_STATE_HOME"))
	if state == "" || !filepath.IsAbs(state) {
		state = filepath.Join(home, ".local", "state")
	}
	return []string{filepath.Join(state, "warp-terminal"), filepath.Join(state, "warp-terminal-preview")}
}

// WatchDirs lists the roots.
func (a *Adapter) WatchDirs() []string {
	return transcript.DedupePaths(append([]string(nil), a.Roots...))
}

// Discover lists the warp.sqlite of every root that has one, as Database sources. A missing
// root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var paths []string
	for _, r := range a.Roots {
		paths = append(paths, filepath.Join(r, DBName))
	}
	return transcript.DatabaseSources(Client, paths), nil
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// NewParser returns the parser of one database, resumed from its State when state is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
