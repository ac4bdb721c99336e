// Package hermes reads the sessions of Nous Research's Hermes Agent (client "hermes", the Python
// `hermes` CLI, its gateway and desktop front ends) into observer events, following the
// transcript contract for Database sources: Hermes keeps its sessions in one SQLite database,
// read here read-only the way the OpenCode and goose readers read theirs (package sqliteread).
//
// Sources (facts only; Hermes does not run here: it needs a model provider, so the reader is tested
// on databases built here with the published schema): NousResearch/hermes-agent hermes_state.py and
// hermes_state_common.py (SCHEMA_SQL, schema version 30: the sessions, messages and
// session_model_usage tables), hermes_state_usage.py (how the token columns are added up:
// update_token_counts, record_auxiliary_usage) and the tests of its dashboard's usage analytics
// (the main loop's remainder of the totals), hermes_state_messages.py (how a message row is
// written), agent/usage_pricing.py (normalize_usage: what the token buckets mean),
// tools/file_tools.py and tools/mcp_tool.py (tool names), hermes_constants.py (HERMES_HOME);
// cross-checked with ccusage's apps/hermes, tokscale's sessions/hermes.rs and agentsview's
// internal/parser/hermes.go.
//
// # Files
//
// Hermes keeps everything under its home, $HERMES_HOME when set, else ~/.hermes (Path.home(), on
// Linux and macOS alike); a profile is a home of its own, ~/.hermes/profiles/<name> (`hermes -p
// <name>` sets HERMES_HOME to it). The sessions are in <home>/state.db (WAL mode). Beside it the
// CLI may keep sessions/*.json and *.jsonl logs of the same conversations without token figures:
// they are copies and are not read. DefaultRoots lists $HERMES_HOME, else ~/.hermes; Discover lists
// <root>/state.db and <root>/profiles/*/state.db as Database sources.
//
// Tables read: sessions (id "YYYYMMDD_HHMMSS_<hex>", source "cli", "telegram", ..., model,
// parent_session_id, started_at and ended_at in Unix seconds (REAL), title, title_source, cwd,
// git_branch, the token columns, estimated_cost_usd, actual_cost_usd), session_model_usage (one row
// per session, model, billing route and task: the same token columns, the costs, first_seen and
// last_seen) and messages (id INTEGER AUTOINCREMENT, session_id, role "user", "assistant", "tool"
// or "system", content (text, or "\x00json:" and a JSON list of parts for multimodal content: its
// text parts are read, an image part is "[image]"), tool_call_id, tool_calls (the OpenAI-style list
// [{id, type "function", function {name, arguments (JSON text)}}]), tool_name, timestamp (Unix
// seconds), reasoning, reasoning_content, _compressed_summary, display_kind). Columns a later
// schema added are read only where they exist; a database without session_model_usage (schema
// before it) is read from the sessions' totals, one whose session_model_usage has no task column as
// if every row were the main loop's.
//
// # Reading while Hermes writes
//
// A pass opens the database read-only with package sqliteread, in one read transaction. Every pass
// reads the message rows past the watermark and the whole sessions and session_model_usage tables
// (small: a row per session and model), so figures Hermes updates in place are reported when they
// change. The parser's State is the watermark, the largest messages.id read, and what was reported
// of the sessions, bounded whatever their number: for the 256 most recently active (the newest of
// started_at, last_activity_at, ended_at, their usage rows' last_seen and their message rows read)
// a short fingerprint of its title and of its figures; the others are settled, the State keeping
// the largest started_at among them and, per bucket of settled sessions (32, by a hash of the id),
// the XOR of a hash of each one's id and fingerprints. A session absent from the recent ones that
// started after that time is new; a settled one is passed over while its bucket's sum stays the
// same, and when it changes (a title or totals Hermes set without noting any activity, a session
// that appeared with an old start, one deleted) every session of the bucket is reported again, its
// started, title and usage events under the ids they had. A settled session with message rows in a
// pass rejoins the recent ones. Hermes also deletes and re-inserts rows (a rewind, a compression
// that clones the turns that arrived while it ran): the events of a message are keyed by its
// session, time and text (or its tool call id), not its row id, so a row inserted again yields the
// events it had. A pass that fails leaves the watermark as it was; a message row that does not
// decode is counted in Stats.Malformed and passed over. A row's content is read up to its first 64
// KB.
//
// # Token accounting
//
// Hermes keeps no usage per turn, only running sums (messages.token_count is an estimate of the
// message's size, not usage), written by hermes_state_usage.py in two ways. The CLI, cron and
// delegated runs add each API call's usage to the session's row in sessions and to its
// session_model_usage row of that model, route and task (update_token_counts with absolute=False;
// task "" for the main loop, "voice_chat" for a voice turn); the gateway (Telegram, Discord, ...)
// sets the session's totals in sessions to its agent's cumulative figures and writes no row
// (absolute=True). Auxiliary calls (title generation, compression, vision, background review:
// record_auxiliary_usage) add a row under their task and leave the session's totals alone. A
// database from before session_model_usage (or a session begun before Hermes created it) has totals
// that no row holds. Its buckets are normalize_usage's CanonicalUsage: input_tokens is the prompt
// NET of cache reads and writes (for OpenAI-style APIs Hermes subtracts the cached tokens from
// prompt_tokens; Anthropic's input_tokens is net already), cache_read_tokens and cache_write_tokens
// the cache's parts, output_tokens the answer with reasoning included, and reasoning_tokens the
// reasoning part of it. So Input = input_tokens, Output = output_tokens, CacheRead =
// cache_read_tokens, CacheCreation = cache_write_tokens, Reasoning = reasoning_tokens.
//
// So observer reports one token_usage event per session_model_usage row (id event.ID(client,
// "usage", session, model, billing provider, base URL, billing mode, task), at the row's
// first_seen, else the session's start) and one for the rest of the session's totals (id
// event.ID(client, "usage", session), with sessions.model, at the session's start): per figure and
// cost, the totals less the session's rows of task "" and "voice_chat" (the ones the totals hold),
// never below zero, as Hermes's own usage analytics split them; a gateway session's whole main
// loop, the usage a session had before the table, nothing (no event) for a CLI session whose rows
// hold all of it. Each carries cumulative figures, reported again when they change under the same
// id and time: the writer keeps the figures with the largest output, so the stored row grows with
// the session (a row whose output stays while its input grows keeps the earlier input). The cost is
// Hermes's actual_cost_usd (the provider's own figure) when positive, else observer's price for the
// model at that time, else Hermes's estimated_cost_usd; all "approximate" ("unknown" at cost 0 when
// none applies). A session of a subagent (delegate_task) or one a compression continued has its own
// rows: its figures are its own and are not in its parent's. Hermes calls model APIs itself: a
// custom OpenAI-compatible endpoint (config.yaml's model.provider "custom" with model.base_url, as
// `hermes model` sets it) pointed at the proxy lets the proxy see that traffic; requests to
// OpenRouter carry X-OpenRouter-Title "Hermes Agent", others no mark of Hermes (the OpenAI or
// Anthropic SDK's User-Agent).
//
// # Actions and messages
//
// An assistant row's tool_calls are actions (id event.ID(client, "action", session, call id)); the
// tool row with that tool_call_id, same id, carries its outcome: its content as JSON with a
// non-empty error, success false or a non-zero exit_code failed, anything else succeeded, the
// output being its output or content field, else the content. Mapping: terminal run_command
// (command); execute_code run_command (code); read_file read_file (path); write_file write_file
// (path); patch edit_file (path, else the file of a V4A patch); search_files search_text (pattern
// " in " path) when its target is content, search_files when it is files; web_search web_search
// (query); web_extract, web_crawl and browser_navigate web_fetch (url, urls); delegate_task
// spawn_subagent (goal, else the first task's); todo todo_update; clarify ask_user (question);
// mcp_<server>_<tool> mcp_call (target "<server>_<tool>": Hermes joins the sanitized names with an
// underscore, so the split is not recoverable); anything else unknown with the raw name in Tool.
// A user row's content is a user_prompt action (id event.ID(client, "prompt", session, time, text
// hash)) and a user message, unless Hermes hid it (display_kind "hidden": scaffolding for the
// model); a row Hermes marked as a compression summary (_compressed_summary) is a summary message
// and a context_compacted action. An assistant row's reasoning is a thinking message, its content
// an assistant message, each tool call a tool_call message (Text the action's target), with the
// session's model. Message ids event.ID(client, "message", session, time, role, text hash), a
// tool call's event.ID(client, "message", session, "call", call id); Seq the row's id × 64 + the
// part's index. System rows are not read.
//
// # Sessions
//
// A session yields a started event at started_at (cwd, the model, parent_session_id, git_branch),
// and its title a title event whenever it changes (TitleByUser when title_source is "user"), at
// the session's last activity (last_activity_at, else ended_at, else started_at), so that the
// newest title wins. Events carry source observer-watch, client hermes, the session id and the
// project: project.Root of the session's cwd (none for a session without one: gateway sessions,
// and schemas before the column). Targets, errors, outputs and messages are scrubbed and cut to
// 500 characters, 2 KB, 8 KB and 64 KB.
package hermes

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

// Client is the client name Hermes events carry.
const Client = client.Hermes

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvHome is the variable Hermes reads for its home directory.
const EnvHome = "HERMES_HOME"

// DBName is the session database's file name in a Hermes home.
const DBName = "state.db"

// Adapter finds and reads Hermes homes.
type Adapter struct {
	// Roots are Hermes homes: they hold state.db and profiles/<name>/state.db.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given Hermes homes.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "hermes".
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Hermes's home: $HERMES_HOME when set, else ~/.hermes (the same on Linux
// and macOS). Profiles are found under it by Discover.
func DefaultRoots() []string {
	if h := strings.TrimSpace(os.Getenv(EnvHome)); h != "" {
		return []string{transcript.ExpandHome(h)}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".hermes")}
}

// WatchDirs lists the directories a watcher should watch: the roots, their profiles directory and
// each profile.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, root := range a.Roots {
		profiles := filepath.Join(root, "profiles")
		out = append(out, root, profiles)
		ents, _ := transcript.ReadDir(profiles)
		for _, e := range ents {
			if p := filepath.Join(profiles, e.Name()); transcript.IsDir(e, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// Discover lists <root>/state.db and <root>/profiles/*/state.db as Database sources, sorted by
// path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(dir string) {
		path := filepath.Join(dir, DBName)
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || seen[path] {
			return
		}
		seen[path] = true
		out = append(out, transcript.Source{Client: Client, Path: path, Database: true})
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		add(abs)
		profiles := filepath.Join(abs, "profiles")
		ents, err := transcript.ReadDir(profiles)
		if err != nil {
			errs = append(errs, err)
		}
		for _, e := range ents {
			if p := filepath.Join(profiles, e.Name()); transcript.IsDir(e, p) {
				add(p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns the parser of a state.db (a transcript.Poller), resumed from state when it is
// not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices)), nil
}
