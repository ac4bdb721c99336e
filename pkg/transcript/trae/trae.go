// Package trae reads what ByteDance's Trae agents keep on disk (client "trae") into observer
// events, following the transcript contract. Two formats, unrelated to each other, are read by one
// adapter under one client:
//
//   - TRAE CLI 2.0 (command `traex`; `traecli` in some installs), a closed-source fork of OpenAI's
//     codex-rs that writes Codex rollout files byte for byte: <home>/sessions/YYYY/MM/DD/
//     rollout-<time>-<uuid>.jsonl and <home>/archived_sessions/, home ~/.trae/cli. They are read
//     by package codex's parser (see its doc for formats, token accounting, actions and ids), with
//     every event relabelled client "trae". Sources: agentsview's TraeX provider
//     (kenn-io/agentsview internal/parser/types.go: "TRAE CLI 2.0 is a closed-source fork of
//     codex-rs and writes byte-compatible rollout JSONL"; .trae/cli/sessions and
//     .trae/cli/archived_sessions), cross-checked with two other public readers of ~/.trae/cli
//     that parse those files as Codex rollouts. Event ids are those package codex derives (they
//     hash "codex", the file's session and record keys): stable, and distinct from a Codex
//     session's, whose uuid differs.
//   - trae-agent (github.com/bytedance/trae-agent, command `trae-cli`), the open-source research
//     agent: one JSON trajectory per run, rewritten whole after every step (a Document source),
//     read by this package. Source: trae-agent's own code (trae_agent/utils/trajectory_recorder.py,
//     llm_clients/anthropic_client.py, openai_client.py, openai_compatible_base.py, tools/__init__.py,
//     agent/trae_agent.py, cli.py).
//
// The Trae IDE (a VS Code fork) is not read: its older builds keep the chat as JSON in
// state.vscdb (ItemTable key memento/icube-ai-agent-storage: prompts and replies only, no usage
// and no tool calls), and current builds keep it in ModularData/ai-agent/database.db, which
// agentsview reports encrypted ("modern encrypted transcripts are not readable"); no public
// source establishes a readable current format.
//
// # Files
//
// Roots are directories; each may be a TRAE CLI home (its sessions/ and archived_sessions/ are
// listed as Codex does) and may hold trae-agent trajectories: trajectory_*.json directly in it or
// in its trajectories/ subdirectory. trae-agent writes trajectories/trajectory_<YYYYMMDD_HHMMSS>.json
// relative to the directory `trae-cli run` was started in (or where --trajectory-file says):
// there is no fixed location, so those directories must be named. DefaultRoots is
// $OBSERVER_TRAE_DIRS (directories separated by the OS list separator) when set, else ~/.trae/cli
// (the same on Linux and macOS). No environment variable of TRAE CLI's own is established.
//
// # trae-agent trajectories
//
// {task, start_time, end_time, provider, model, max_steps, llm_interactions: [{timestamp,
// provider, model, input_messages: [{role, content, tool_call, tool_result}], response: {content,
// model, finish_reason, usage: {input_tokens, output_tokens, cache_creation_input_tokens,
// cache_read_input_tokens, reasoning_tokens}, tool_calls: [{call_id, name, arguments, id}]},
// tools_available}], agent_steps: [{step_number, timestamp, state, llm_messages, llm_response,
// tool_calls, tool_results: [{call_id, success, result, error, id}], reflection, error}],
// success, final_result, execution_time}. Times are Python's datetime.now().isoformat(): local
// time without a zone, read in the machine's zone (with a zone, as written).
//
// Token accounting, per llm_interaction (one model request), by the trajectory's provider, as
// trae-agent's clients fill LLMUsage:
//
//	anthropic       input_tokens is the prompt net of the cache, cache_creation_input_tokens and
//	                cache_read_input_tokens the parts written to and read from it
//	openai          (Responses API) input_tokens includes the cached part, cache_read_input_tokens
//	                (input_tokens_details.cached_tokens); reasoning_tokens is inside output_tokens
//	others          (azure, openrouter, doubao, ollama, google, ...: the chat-completions clients)
//	                input_tokens is prompt_tokens, cached part included; no cache figure is kept
//
// so Input = input_tokens − cache_read_input_tokens (except anthropic: input_tokens), CacheRead =
// cache_read_input_tokens, CacheCreation = cache_creation_input_tokens, Output = output_tokens,
// Reasoning = reasoning_tokens. One token_usage event per interaction, id event.ID("trae",
// "usage", session, index), Model the response's model (else the interaction's), priced from the
// pricing table at the interaction's time: Reliability "approximate", or "unknown" at cost 0 for
// a model the table does not price. The proxy sees trae-agent's traffic when its provider's
// base_url (trae_config.yaml, or --model-base-url) points at observer-proxy.
//
// Actions: each response tool call is an action, id event.ID("trae", "action", session,
// call_id), at its interaction's time, with its step's tool result (same call_id): Success the
// result's success, Output its result (8 KB), Error its error (2 KB). Mapping: bash run_command
// (command); str_replace_based_edit_tool by its command, view read_file, create write_file,
// str_replace, insert and undo_edit edit_file (path); json_edit_tool edit_file (file_path); ckg
// search_text (identifier or query); task_done task_complete; sequentialthinking and anything
// else (MCP tools keep their server's names, without a prefix) unknown with the raw name. A step
// with an error is an api_error action (id event.ID("trae", "error", session, step_number)). The
// task is the user_prompt action and a user message; a response's content an assistant message;
// each tool call a tool_call message (ids event.ID("trae", "message", session, interaction,
// part), Seq interaction × 64 + part).
//
// Sessions and re-reads: the session is the file's name without .json and a short hash of its
// start_time and task (trajectory names are seconds only and repeat across directories); its
// directory the "[Project root path]" trae-agent writes into its first user message; the model
// the trajectory's. A document is read whole at each change: only new or changed events are
// emitted (transcript.Emitted in State), under the same ids on every read; a document that does
// not parse (caught mid-write) is ErrMalformed and keeps the State.
package trae

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// Client is the client name Trae events carry (the integrator moves it to pkg/client).
const Client = client.Trae

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvDirs overrides the directories Discover reads (see the package doc).
const EnvDirs = "OBSERVER_TRAE_DIRS"

// Adapter finds and reads TRAE CLI rollouts and trae-agent trajectories.
type Adapter struct {
	// Roots are TRAE CLI homes and directories of trae-agent trajectories.
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

// DefaultRoots returns $OBSERVER_TRAE_DIRS when set, else TRAE CLI's home, ~/.trae/cli.
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".trae", "cli")}
}

// WatchDirs lists each root, its trajectories directory and the TRAE CLI session directories.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, r, filepath.Join(r, "trajectories"), filepath.Join(r, "sessions"), filepath.Join(r, "archived_sessions"))
	}
	return transcript.DedupePaths(out)
}

// codexOf is the Codex adapter that reads the rollouts under a root.
func (a *Adapter) codexOf(home string) *codex.Adapter {
	return &codex.Adapter{Home: home, Prices: a.Prices, CurrentPrices: a.CurrentPrices}
}

// Discover lists, for every root, its TRAE CLI rollouts (oldest first, as package codex lists
// them) and its trajectories (Document sources). A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	for _, r := range a.Roots {
		srcs, err := a.codexOf(r).Discover()
		if err != nil {
			errs = append(errs, err)
		}
		for _, s := range srcs {
			s.Client = Client
			out = append(out, s)
		}
		docs, err := transcript.DiscoverDocuments(Client, []string{r, filepath.Join(r, "trajectories")}, func(name string) (string, bool) {
			base, ok := strings.CutSuffix(name, ".json")
			return "", ok && strings.HasPrefix(base, "trajectory_")
		})
		if err != nil {
			errs = append(errs, err)
		}
		sort.SliceStable(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
		out = append(out, docs...)
	}
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one source: a trajectory's for a Document, else a TRAE CLI
// rollout's.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	if src.Document || strings.HasSuffix(src.Path, ".json") {
		return newTrajectoryParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
	}
	home := ""
	for _, r := range a.Roots {
		for _, sub := range []string{"sessions", "archived_sessions"} {
			dir, err := filepath.Abs(filepath.Join(r, sub))
			if err == nil && strings.HasPrefix(src.Path, dir+string(filepath.Separator)) {
				home = r
			}
		}
	}
	cs := src
	cs.Client = codex.Client
	p, err := a.codexOf(home).NewParser(cs, state)
	if err != nil {
		return nil, err
	}
	return &cliParser{Parser: p}, nil
}
