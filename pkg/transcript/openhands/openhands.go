// Package openhands reads the conversations of the OpenHands CLI (the `openhands` command of
// github.com/OpenHands/OpenHands-CLI, built on the OpenHands Software Agent SDK,
// github.com/OpenHands/software-agent-sdk; client "openhands") into observer events.
//
// Sources consulted (no corpus holds an OpenHands conversation; the tests run on a conversation
// written here to these sources' format, facts only): OpenHands/OpenHands-CLI
// openhands_cli/locations.py (~/.openhands/conversations) and its README (the
// OPENHANDS_PERSISTENCE_DIR and OPENHANDS_CONVERSATIONS_DIR overrides, also read by its
// get_conversations_dir); OpenHands/software-agent-sdk openhands-sdk/openhands/sdk:
// conversation/persistence_const.py and event_store.py (the event files), conversation/state.py
// (base_state.json, written whole at each change of the state), conversation/conversation_stats.py
// and llm/utils/metrics.py (the usage kept per response), llm/utils/telemetry.py (how a response's
// usage is recorded), io/local.py (files written in place), event/base.py,
// event/llm_convertible/{message,action,observation}.py (the events), tool/schema.py (observations)
// and tools' actions (openhands-tools); LiteLLM's Anthropic transformation (BerriAI/litellm
// litellm/llms/anthropic/chat/transformation.py: what prompt_tokens includes); cross-checked with
// the OpenHands reader of agentsview (kenn-io/agentsview internal/parser/openhands.go).
//
// # Files
//
// Conversations live in $OPENHANDS_CONVERSATIONS_DIR, else $OPENHANDS_PERSISTENCE_DIR/conversations,
// else ~/.openhands/conversations, on Linux and macOS alike. Each conversation is a directory named
// by its id (32 hex digits) holding base_state.json (the conversation's state without its events:
// id, agent {llm {model}}, workspace {working_dir}, execution_status, stats; the SDK rewrites it
// whole, in place, whenever a field of the state changes) and events/, one JSON file per event,
// event-<index, 5 digits or more>-<event id>.json, written once and never changed: {id, timestamp,
// source (user, agent, environment), kind, ...}. Kinds read: MessageEvent (llm_message {role,
// content [{type text|image}], reasoning_content, thinking_blocks}, llm_response_id, sender,
// extended_content), ActionEvent (thought, reasoning_content, thinking_blocks, tool_name,
// tool_call_id, tool_call {arguments}, action {kind, ...}, llm_response_id), ObservationEvent
// (tool_name, tool_call_id, observation {kind, content, is_error, exit_code, command, path}),
// UserRejectObservation (rejection_reason), AgentErrorEvent (error) and Condensation (summary).
// SystemPromptEvent, state updates, pauses and the other kinds yield nothing.
//
// Discover gives two sources per conversation: its events directory as a Database source (which
// is no SQLite database: its parser lists the directory itself, and the directory's modification
// time changes with every new event file, which is what makes the caller poll it) and its
// base_state.json as a Document source (the usage). WatchDirs lists the roots and every
// conversation's events directory.
//
// # Events
//
// The events parser's State is the index of the next event file to read: a pass reads the files
// from there in index order and stops at the first missing index, unless a later file exists and
// was written a minute ago or more (the SDK writes its files in index order, under a lock: that
// one will not come), in which case it goes on past the gap (counted in Stats.Unknown, "event
// files missing"). The names carry the events' random ids, so a pass cannot look the next file
// up by name: it lists the directory once, unsorted, the names parsed by hand and only those from
// the next index on kept (a pass happens only when the directory changed: one listing per new
// event, whose cost grows with the conversation but stays that of a listing). A file that does
// not parse is left for the next pass when it is the last one (the SDK writes it in place: caught
// mid-write), and counted in Stats.Malformed and passed over when a later one exists. A gap
// written less than a minute ago is waited for until a later pass: the caller polls again only
// when the directory changes, which an active conversation does at every event. Times: an event's
// timestamp is the naive local time of the machine that ran the conversation (Python's
// datetime.now().isoformat()), read in the local zone; an event without one takes the one before.
//
// The first event starts the session (a started event at its time, cwd =
// base_state.json's workspace.working_dir, the model agent.llm.model). A user MessageEvent (source
// user, role user, no sender: another agent's message has one) is a user_prompt action, id
// event.ID("openhands", "prompt", conversation, event id), and a user message (its text items;
// "[image]" for an image; extended_content, the context the SDK adds, is left out). An agent
// MessageEvent's text is an assistant message, its reasoning_content or thinking blocks a thinking
// message. An ActionEvent is an action, id event.ID("openhands", "action", conversation,
// tool_call_id), with its thought as an assistant message, its reasoning as a thinking message and
// a tool_call message. Its result (ObservationEvent, UserRejectObservation, AgentErrorEvent of the
// same tool_call_id) is the same action again, with Success, Error and Output: an observation
// failed when is_error is true, or when a command's exit_code is above 0; a rejection and an agent
// error failed. A Condensation is a context_compacted action, its summary a summary message.
// Message ids event.ID("openhands", "message", conversation, event id, item index), Seq the event
// index × 64 plus the item index.
//
// Mapping (tool_name, and action.kind for MCP): terminal, execute_bash and bash run_command
// (command); file_editor, str_replace_editor and planning_file_editor by command: view read_file,
// create write_file, str_replace, insert, undo_edit and the others edit_file (path); apply_patch
// edit_file (the first file of the patch); glob search_files (pattern " in " path); grep
// search_text (pattern " in " path or include); browser_navigate web_fetch (url); task_tracker
// todo_update; delegate and task spawn_subagent; finish task_complete (message); an action of kind
// MCPToolAction mcp_call (the tool's name: the SDK does not record the server); anything else
// unknown with the raw name. Paths are made relative to the project.
//
// # Token accounting
//
// OpenHands keeps no usage in its events. base_state.json keeps, per LLM of the conversation
// (stats.usage_to_metrics, keyed by usage id: "agent", a condenser's, ...), the list of the usage
// of every response, token_usages [{model, prompt_tokens, completion_tokens, cache_read_tokens,
// cache_write_tokens, reasoning_tokens, response_id}], beside their sum (accumulated_token_usage)
// and LiteLLM's cost. The figures are LiteLLM's, normalized to OpenAI's shape. What includes what:
//
//	prompt_tokens       the whole prompt: cache reads included (OpenAI's prompt_tokens; LiteLLM
//	                    adds Anthropic's cache_read_input_tokens and cache_creation_input_tokens
//	                    to its input_tokens)
//	cache_read_tokens   the part read from the cache (prompt_tokens_details.cached_tokens)
//	cache_write_tokens  the part written to the cache, where the provider reports it (LiteLLM's
//	                    prompt_tokens_details.cache_creation_tokens; 0 for OpenAI, and with LiteLLM
//	                    releases that did not expose it, whose prompt_tokens did not include it
//	                    either: those cache writes are in no figure)
//	completion_tokens   the answer, reasoning included
//	reasoning_tokens    the reasoning part of completion_tokens
//
// so Input = prompt_tokens − cache_read_tokens − cache_write_tokens, CacheRead = cache_read_tokens,
// CacheCreation = cache_write_tokens, Output = completion_tokens, Reasoning = reasoning_tokens.
// When the two cache figures add up to more than prompt_tokens (an ACP agent reports them beside
// the prompt, as the SDK's own cache_hit_rate allows), prompt_tokens is taken as net input. One
// token_usage per response, id event.ID("openhands", "usage", conversation, usage id, response_id)
// (the entry's index when it has no response id), MessageID the response id, model the entry's
// (LiteLLM's model string, provider prefix included), priced from the pricing table ("approximate";
// "unknown" at cost 0 for a model the table does not price). Its time is the time of the event that
// response produced (its llm_response_id), found in the events directory, else the previous
// response's, else the conversation's first event. The times read from the event files are kept on
// the Adapter for the 16 conversations read last, so that the parser of a later change of
// base_state.json reads only the event files added since. The State counts the entries reported per
// usage id, so a re-read reports only the new ones; accumulated_token_usage is not read (it is the
// sum of the list). Traffic goes from the CLI to the provider through LiteLLM: a custom base URL
// (the LLM settings' base_url, or LLM_BASE_URL with --override-with-envs) lets observer-proxy see
// it.
//
// Events carry source observer-watch, client openhands, the conversation's id (its directory's
// name) as session and project.Root of the working directory as project. Targets, errors and
// outputs are scrubbed and cut to 500 characters, 2 KB and 8 KB, message text to 64 KB.
package openhands

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name OpenHands events carry (the integrator moves it to pkg/client).
const Client = client.OpenHands

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// File and directory names of a conversation.
const (
	BaseStateName = "base_state.json"
	EventsDirName = "events"
)

// Adapter finds and reads OpenHands conversations.
type Adapter struct {
	// Roots are conversations directories: each holds one directory per conversation.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table

	scans scanCache // the times read from event files, for the usage parsers
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given conversations directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "openhands".
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the conversations directory of the OpenHands CLI:
// $OPENHANDS_CONVERSATIONS_DIR, else $OPENHANDS_PERSISTENCE_DIR/conversations, else
// ~/.openhands/conversations (the same on macOS).
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv("OPENHANDS_CONVERSATIONS_DIR")); d != "" {
		return []string{transcript.ExpandHome(d)}
	}
	if d := strings.TrimSpace(os.Getenv("OPENHANDS_PERSISTENCE_DIR")); d != "" {
		return []string{filepath.Join(transcript.ExpandHome(d), "conversations")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".openhands", "conversations")}
}

// WatchDirs lists the roots and the events directory of every conversation in them: a new event
// file appears there, below what a watch on the roots sees.
func (a *Adapter) WatchDirs() []string {
	dirs := append([]string(nil), a.Roots...)
	for _, root := range a.Roots {
		ents, _ := transcript.ReadDir(root)
		for _, e := range ents {
			ev := filepath.Join(root, e.Name(), EventsDirName)
			if fi, err := os.Stat(ev); err == nil && fi.IsDir() {
				dirs = append(dirs, ev)
			}
		}
	}
	return dirs
}

// Discover lists, per conversation directory of every root, its events directory (a Database
// source) and its base_state.json (a Document source), sorted by path. A missing root is not an
// error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		ents, err := transcript.ReadDir(abs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			conv := filepath.Join(abs, e.Name())
			if !transcript.IsDir(e, conv) || strings.HasPrefix(e.Name(), ".") || seen[conv] {
				continue
			}
			seen[conv] = true
			if fi, err := os.Stat(filepath.Join(conv, EventsDirName)); err == nil && fi.IsDir() {
				out = append(out, transcript.Source{Client: Client, Path: filepath.Join(conv, EventsDirName), SessionID: e.Name(), Database: true})
			}
			if fi, err := os.Stat(filepath.Join(conv, BaseStateName)); err == nil && fi.Mode().IsRegular() {
				out = append(out, transcript.Source{Client: Client, Path: filepath.Join(conv, BaseStateName), SessionID: e.Name(), Document: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns the parser of a conversation's events directory (a transcript.Poller) or of
// its base_state.json, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	prices := pricing.Source(a.Prices, a.CurrentPrices)
	if src.Database {
		return newEventsParser(src, state), nil
	}
	p := newStateParser(src, state, prices)
	p.scans = &a.scans
	return p, nil
}

// sessionOf is a source's conversation id: its SessionID, else the conversation directory's name.
func sessionOf(src transcript.Source) string {
	if s := strings.TrimSpace(src.SessionID); s != "" {
		return s
	}
	return filepath.Base(filepath.Dir(src.Path))
}
