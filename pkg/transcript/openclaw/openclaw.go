// Package openclaw reads the sessions of OpenClaw (npm openclaw, its command is `openclaw`; read
// in 2026.9.6, agent schema 23, and in 2026.7.1, the last release that wrote session files) into
// observer events, following the transcript contract. OpenClaw's embedded agent is built on pi's
// runtime (@openclaw/ai, a fork of pi-ai): its transcript records are pi's session entries, read
// with package pi's Reader; this package adds OpenClaw's files and databases, tools, subagent
// sessions and nested-tool messages.
//
// # Files
//
// OpenClaw keeps its state in its state directory: $OPENCLAW_STATE_DIR (a leading ~ expanded),
// else <home>/.openclaw, where <home> is $OPENCLAW_HOME (a leading ~ expanded) or else the user's
// home, on Linux and macOS alike (no XDG or Library path); an install that only has the legacy
// <home>/.clawdbot uses that, and `--profile NAME` (OPENCLAW_PROFILE) uses <home>/.openclaw-NAME.
// DefaultRoots lists the state directory the environment selects, and every existing
// <home>/.openclaw-* and <home>/.clawdbot beside it, so that the sessions of every profile are read.
//
// Since 2026.7.2 the sessions live in one SQLite database per agent,
// <state>/agents/<agentId>/agent/openclaw-agent.sqlite (or openclaw-agent.sqlite in the directory
// $OPENCLAW_AGENT_DIR or an agent's agentDir names; the shared <state>/state/openclaw.sqlite lists
// every agent database in its table agent_databases, which Discover reads too). Such a database is
// a Database source (see package transcript). Its tables read here: session_windows (one row per
// session: session_id, session_key such as agent:main:main or agent:main:subagent:<uuid>,
// previous_session_id and reason of the window it follows, parent_session_key and spawned_by for a
// subagent's session, and the times), transcript_events (session_id, seq, and the record: the
// event_json text, or since schema 23 a zstd frame in event_zstd for records of 1 KiB and more
// that compress well) and transcript_rewrite_watermarks (a generation per session that OpenClaw
// renews whenever it rewrites records already written). Before 2026.7.2 each session was a file,
// <state>/agents/<agentId>/sessions/<session id>.jsonl (an old single-agent install:
// <state>/sessions/), which Discover lists as line sources; `openclaw doctor --fix` of a newer
// release imports those files into the database verbatim and moves them to
// agents/<agentId>/session-sqlite-import-archive/ (checked: the imported rows are the file's lines
// byte for byte).
//
// # Records
//
// A record is a pi session entry, one JSON object: the header {type: "session", version (3 in
// files, 4 in the database), id, timestamp, cwd} (cwd: the agent's workspace), then model_change,
// thinking_level_change, custom (OpenClaw's notes: model-snapshot, openclaw.cache-ttl,
// openclaw:bootstrap-context:full), message (an AgentMessage of role user, assistant, toolResult,
// custom, ...), compaction and the others of package pi. OpenClaw adds __openclaw {runId, ...} and
// idempotencyKey to messages, and writes a custom message of customType openclaw.nested-tool.v1
// whose details {toolCallId, toolName, input, result, isError, startedAt, timestamp,
// parentToolCallId} are a tool that ran inside another call.
//
// # Token accounting
//
// An assistant message's usage {input, output, cacheRead, cacheWrite, cacheWrite1h,
// reasoningTokens, totalTokens, cost} is what @openclaw/ai made of the API's usage (read in its
// 2026.9.6 source, parseOpenAICompletionsUsage, mapResponsesTerminalUsage and the Anthropic stream
// reducer, and checked with the real client through observer-fakeapi on all three APIs):
//
//	input          prompt tokens neither read from nor written to the cache: Chat's
//	               prompt_tokens and Responses' input_tokens minus cached and cache-write tokens;
//	               Anthropic's input_tokens as they are (fake: prompt_tokens 1120 with 1000 cached
//	               gave input 120, cacheRead 1000)
//	output         completion_tokens / output_tokens as they are: reasoning and thinking INCLUDED
//	               (fake: completion_tokens 45 with 10 reasoning gave output 45)
//	reasoningTokens the reasoning part of output (OpenAI's APIs only)
//	cacheRead      cached prompt tokens
//	cacheWrite     cache writes, both lifetimes (Anthropic cache_creation_input_tokens; fake: 200
//	               5-minute + 100 1-hour gave cacheWrite 300)
//	cacheWrite1h   the 1-hour part of cacheWrite (Anthropic's cache_creation breakdown; fake: 100)
//	cost           dollars from OpenClaw's model catalog (0 for a custom model without prices)
//
// These are observer's buckets: Input, Output, CacheRead, CacheCreation = cacheWrite,
// CacheCreation1h = cacheWrite1h, Reasoning = reasoningTokens. One token_usage event per assistant
// message whose usage is not all zero, id event.ID("openclaw", "usage", provider, model, message
// timestamp, responseId), MessageID the response id (chatcmpl-..., resp_..., msg_...), so the
// proxy's figures for the same turn replace these; a message is written once, final, and
// Reliability is "approximate". The cost is observer's pricing table at the message's time for the
// model named (else the responseModel), else OpenClaw's own cost.total, else 0 with Reliability
// "unknown". The run totals of the trajectory (table trajectory_runtime_events, files
// *.trajectory.jsonl: model.completed sums a run's messages) are not read: they would count the
// same messages twice.
//
// # Actions
//
// As in package pi: a toolCall block is an action with id event.ID("openclaw", "action", tool-call
// id, message timestamp), its normalized type, the raw tool name in Tool, a target, the response
// id, the model and an input hash; the toolResult message (paired by toolCallId; the calls still
// waiting are kept, bounded, in State) is an event with the same id carrying Success, Error,
// Output (8 KB), OutputSize and DurationMs. Tool Search's tool_call {id, args} is the catalog tool
// it runs: its type, Tool and target are those of the tool id names, and the nested-tool message
// that tool's run writes completes the same action (with its own duration). A nested-tool message
// under any other call (a Code Mode program's tool calls) is an action of its own, id from its
// toolCallId. Mapping (case-insensitive): read, view_image, pdf, file_fetch read_file; write,
// file_write write_file; edit, multiedit, apply_patch edit_file; exec, bash, code_execution
// run_command; grep search_text; find, glob, ls, dir_list search_files; sessions_spawn, subagent,
// task, agent spawn_subagent; progress_card, update_plan, todo, todo_write todo_update; ask_user,
// question ask_user; web_search, x_search web_search; web_fetch, fetch web_fetch; mcp, mcp_*
// mcp_call; anything else (tool_search, tool_describe, process, browser, message, memory_*,
// sessions_*, ...) unknown. Targets: the path (relative to the project when inside it, a relative
// path taken from the session's cwd); apply_patch's first "*** Update/Add/Delete File:"; exec's
// command (Code Mode's code); the pattern, with " in <path>"; ls's directory ("." when none);
// "<agentId>: <task>" of sessions_spawn; the question; the query; the URL; for other tools the
// first of path, file_path, command, pattern, url, query and action.
//
// A user message is a user_prompt; an assistant message that stopped with "error" an api_error,
// with "aborted" a turn_aborted; a compaction entry a context_compacted action with a session event
// of the next epoch; a bashExecution message a run_command. Other custom messages, summaries,
// model and thinking changes and text blocks yield nothing; an unknown entry type or role is
// counted in Stats.Unknown. A record that is not UTF-8, not a JSON object, or a known entry that
// does not decode is malformed: counted, reported (a line) or passed over (a row), never fatal.
//
// # Conversation
//
// As in package pi: prompts, replies, thinking with text, tool calls (Tool, ToolUseID and Text
// their action's; a catalog tool run through Tool Search's tool_call is the wrapper's call, named
// by the tool it ran), compaction summaries. A tool a Code Mode program called (a nested-tool
// message with no wrapper) is a tool_call of its own. OpenClaw's notes (custom entries and
// messages) and tool results are no message; a subagent's messages carry its AgentID and
// Sidechain under the root session. Seq is the row's seq × 64 plus the block's index; in a legacy
// file the line's index stands for the seq, which is what `openclaw doctor` gives it on import,
// so a file and its import are the same messages. OpenClaw's user messages are taken as they are:
// the records written here carry no mark of a prompt OpenClaw itself sends (a heartbeat's), so
// none is told apart.
//
// # Sessions
//
// The session id is OpenClaw's (a uuid): the row's session_id, a file's name. The header yields a
// started session event (cwd, start time, the database or file as transcript path, and as parent
// the previous_session_id of its window, which a reset, rollover, fork, rewind or compaction
// window names, or a header's parentSession), and an assistant message whose model is not the
// previous one's a session event carrying it. A subagent's session (parent_session_key or
// spawned_by naming the session key, or id, of its parent; read from the schema, the Gateway that
// runs subagents could not be run offline) belongs to its root session: its events carry the root's
// session id, the subagent's session id as AgentID and Sidechain, and it yields no session events
// of its own. Events carry the record's time (UTC), source observer-watch, client openclaw, and
// the project: project.Root of the session's cwd. Targets, errors and outputs go through
// scrub.String and are cut to 500 characters, 2 KB and 8 KB. Background task runs (the shared
// database's task_runs) are not read: they are the subagents' and cron jobs' bookkeeping, whose
// model turns and tools are in the sessions above.
//
// # Cursors and state
//
// A session file is read as lines (the caller keeps the offset); the parser's State keeps the
// session's context (cwd, model, epoch, last compactions, the tool calls still waiting). A
// database is read by Poll (package sqliteread: read-only, WAL aware, one read transaction per
// pass). Its State is the watermark: the latest activity time seen in session_windows, and per
// session read lately (at most 256, the least recently active forgotten first) its context, the
// last seq read and its generation. A pass reads session_windows and the generations whole (one
// row per session), then, for every session active since the watermark (less 10 s, for two
// writers that stamp rows before they commit) or kept in State, the rows after its last seq: all
// of them when its generation changed (OpenClaw rewrote records: a suffix replaced, a result
// trimmed), which yields the same ids for the records that did not change, so the writer merges
// them. A session forgotten and active again is read from its start the same way. A pass that
// fails emits nothing and leaves State as it was.
package openclaw

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/pi"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// Client is the client name OpenClaw events carry.
const Client = client.OpenClaw

// Environment variables OpenClaw reads for its directories.
const (
	EnvStateDir = "OPENCLAW_STATE_DIR" // the state directory, default <home>/.openclaw
	EnvHome     = "OPENCLAW_HOME"      // the home the state directory is under, default the user's
	EnvAgentDir = "OPENCLAW_AGENT_DIR" // the default agent's directory, holding its database
)

// DatabaseName is the file name of an agent's database.
const DatabaseName = "openclaw-agent.sqlite"

// Adapter finds and reads OpenClaw's agent databases and legacy session files.
type Adapter struct {
	// Roots are state directories (~/.openclaw).
	Roots []string
	// AgentDirs are agent directories outside the roots, each holding an agent database.
	AgentDirs []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a usage
	// record is priced (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given state directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// NewDefault returns an adapter reading DefaultRoots and DefaultAgentDirs.
func NewDefault() *Adapter { return &Adapter{Roots: DefaultRoots(), AgentDirs: DefaultAgentDirs()} }

// Client returns "openclaw".
func (a *Adapter) Client() string { return Client }

// Home returns the home OpenClaw's state directory is under: $OPENCLAW_HOME (a leading ~
// expanded), else the user's home.
func Home() string {
	if h := strings.TrimSpace(os.Getenv(EnvHome)); h != "" && h != "undefined" && h != "null" {
		return filepath.Clean(transcript.ExpandHome(h))
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "."
}

// StateDir returns the state directory OpenClaw uses: $OPENCLAW_STATE_DIR, else <home>/.openclaw,
// else <home>/.clawdbot when only that one exists.
func StateDir() string {
	if d := strings.TrimSpace(os.Getenv(EnvStateDir)); d != "" {
		if d == "~" || strings.HasPrefix(d, "~/") {
			return filepath.Join(Home(), d[1:])
		}
		return filepath.Clean(d)
	}
	dir := filepath.Join(Home(), ".openclaw")
	if _, err := os.Stat(dir); err != nil {
		legacy := filepath.Join(Home(), ".clawdbot")
		if fi, err := os.Stat(legacy); err == nil && fi.IsDir() {
			return legacy
		}
	}
	return dir
}

// DefaultRoots returns the state directories to read: StateDir, and every existing
// <home>/.openclaw-<profile> and <home>/.clawdbot.
func DefaultRoots() []string {
	roots := []string{StateDir()}
	home := Home()
	entries, _ := os.ReadDir(home)
	for _, e := range entries {
		n := e.Name()
		if !(strings.HasPrefix(n, ".openclaw-") || n == ".clawdbot") {
			continue
		}
		if path := filepath.Join(home, n); transcript.IsDir(e, path) {
			roots = append(roots, path)
		}
	}
	return transcript.DedupePaths(roots)
}

// DefaultAgentDirs returns $OPENCLAW_AGENT_DIR (a leading ~ expanded) when it is set.
func DefaultAgentDirs() []string {
	if d := strings.TrimSpace(os.Getenv(EnvAgentDir)); d != "" {
		return []string{transcript.ExpandHome(d)}
	}
	return nil
}

// WatchDirs lists the directories a watcher should watch: each root's agents directory and, for
// every agent, its agent and sessions directories; the agent directories.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, root := range a.Roots {
		agents := filepath.Join(root, "agents")
		out = append(out, agents)
		entries, _ := os.ReadDir(agents)
		for _, e := range entries {
			if dir := filepath.Join(agents, e.Name()); transcript.IsDir(e, dir) {
				out = append(out, filepath.Join(dir, "agent"), filepath.Join(dir, "sessions"))
			}
		}
		if fi, err := os.Stat(filepath.Join(root, "sessions")); err == nil && fi.IsDir() {
			out = append(out, filepath.Join(root, "sessions"))
		}
	}
	return transcript.DedupePaths(append(out, a.AgentDirs...))
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// sessionFile is a legacy session file's name: <session id>.jsonl, or
	// <session id>-topic-<thread>.jsonl for a chat topic.
	sessionFile = regexp.MustCompile(`^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(-topic-[^/\\]*)?\.jsonl$`)
)

// SessionIDFromPath returns the session id a legacy session file's name starts with, or "".
func SessionIDFromPath(path string) string {
	m := sessionFile.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// Discover lists the agent databases and legacy session files under every root, and the agent
// databases of the agent directories and of the roots' agent_databases tables. A missing root is
// not an error; a root that cannot be read is reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var dbs, files []transcript.Source
	var errs []error
	seen := map[string]bool{}
	addDB := func(path string) {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if seen[abs] {
			return
		}
		if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
			return
		}
		seen[abs] = true
		dbs = append(dbs, transcript.Source{Client: Client, Path: abs, Database: true})
	}
	addFile := func(path string) {
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if seen[abs] {
			return
		}
		seen[abs] = true
		id := SessionIDFromPath(abs)
		if id == "" {
			id = pi.HeaderSessionID(abs)
		}
		files = append(files, transcript.Source{Client: Client, Path: abs, SessionID: id})
	}
	listFiles := func(dir string) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if path := filepath.Join(dir, e.Name()); isSessionName(e.Name()) && transcript.IsFile(e, path) {
				addFile(path)
			}
		}
	}
	for _, root := range a.Roots {
		agents := filepath.Join(root, "agents")
		entries, err := os.ReadDir(agents)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
		for _, e := range entries {
			dir := filepath.Join(agents, e.Name())
			if !transcript.IsDir(e, dir) {
				continue
			}
			addDB(filepath.Join(dir, "agent", DatabaseName))
			listFiles(filepath.Join(dir, "sessions"))
		}
		listFiles(filepath.Join(root, "sessions"))
		for _, path := range listedDatabases(root) {
			addDB(path)
		}
	}
	for _, dir := range a.AgentDirs {
		addDB(filepath.Join(dir, DatabaseName))
	}
	byPath := func(s []transcript.Source) {
		sort.Slice(s, func(i, j int) bool { return s[i].Path < s[j].Path })
	}
	byPath(dbs)
	byPath(files)
	// Session files first: a file and its import into a database yield the same ids, and the
	// file is the older record.
	return append(files, dbs...), errors.Join(errs...)
}

// isSessionName reports a legacy session file: a .jsonl that is not a trajectory.
func isSessionName(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasSuffix(name, ".trajectory.jsonl") &&
		!strings.HasPrefix(name, ".")
}

// listedDatabases reads the agent databases the shared database of a state directory lists
// (table agent_databases: paths relative to the state directory, or absolute); none when it is
// absent or cannot be read.
func listedDatabases(root string) []string {
	path := filepath.Join(root, "state", "openclaw.sqlite")
	if _, err := os.Stat(path); err != nil {
		return nil
	}
	var out []string
	_ = sqliteread.Read(context.Background(), path, func(ctx context.Context, db *sql.DB) error {
		out = out[:0]
		q, err := db.QueryContext(ctx, "SELECT path FROM agent_databases")
		if err != nil {
			return err
		}
		for q.Next() {
			var p any
			if err := q.Scan(&p); err != nil {
				q.Close()
				return err
			}
			if s := asString(p); s != "" {
				if !filepath.IsAbs(s) {
					s = filepath.Join(root, s)
				}
				out = append(out, s)
			}
		}
		return sqliteread.CloseRows(q)
	})
	return out
}

// NewParser returns a parser for one source, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}
