// Package kiro reads the conversations of Kiro (Amazon's agentic IDE and its terminal agent,
// kiro-cli, the successor of the Amazon Q Developer CLI `q chat`; client "kiro") into observer
// events, following the transcript contract. The IDE and the CLI are one product family that
// share one session store (below, "KAS"), whose sessions do not tell which of the two wrote them,
// so one reader and one client name cover both. Kiro does not run here (it needs an AWS Builder
// ID or an identity-center login): the reader is tested on fixtures written here to the format of
// the CLI's public source and of the published readers of other tools (facts only):
// aws/amazon-q-developer-cli (the kiro-cli source): crates/chat-cli/src/database/mod.rs and
// sqlite_migrations/008_multiple_conversations_per_path.sql (the database, its conversations
// tables), crates/chat-cli/src/cli/chat/parser.rs (RequestMetadata: no token counts) and
// util/paths.rs (the data directory, ~/.kiro), crates/agent/src/agent/event_log.rs (the v2 log's
// LogEntry), agent_loop/types.rs (its content blocks, tool results, MetadataUsage) and
// agent_loop/protocol.rs (UserTurnMetadata), tools/fs_write.rs (fs_write's commands and aliases);
// kenn-io/agentsview internal/parser/kiro.go, kiro_sqlite.go, kiro_provider.go and kiro_ide.go;
// junhoyeo/tokscale crates/tokscale-core/src/sessions/kiro.rs; the Kiro provider of the casr
// session converter (the KAS store's layout, KIRO_HOME, session_start, the v2 session state);
// and, for the v2 turn figures, the readers of other tools that sum user_turn_metadatas (a
// kiro-acp session-store reader, aws-bench's Kiro agent).
//
// # Files
//
// Three stores, read side by side (a session converted from one to another is read in both):
//
//   - The database of the CLI's legacy engine (`--agent-engine v1`, and every `q chat`): the
//     SQLite file data.sqlite3 in the CLI's data directory, $XDG_DATA_HOME/kiro-cli (default
//     ~/.local/share/kiro-cli) on Linux and ~/Library/Application Support/kiro-cli on macOS (the
//     Rust dirs crate's data_local_dir; the Amazon Q CLI's amazon-q beside it is read too). Table
//     conversations_v2 (key = the directory the CLI ran in, conversation_id, value = the whole
//     conversation as JSON, created_at and updated_at in unix ms), rewritten whole after each
//     turn; databases from before its migration keep the older conversations table (key, value;
//     one conversation per directory, no times), read when conversations_v2 is absent. It is a
//     Database source, read read-only (package sqliteread) and streamed (transcript.StreamPoller):
//     a pass lists (conversation_id, key, updated_at) and reads the value of the conversations
//     whose updated_at changed; the newest row of a conversation kept under two directories wins.
//     The value is the CLI's ConversationState: {conversation_id, history: [{user: {content:
//     {Prompt: {prompt}} | {ToolUseResults: {tool_use_results}} | {CancelledToolUses: {prompt,
//     tool_use_results}}, timestamp, env_context}, assistant: {Response: {message_id, content,
//     thinking}} | {ToolUse: {message_id, content, thinking, tool_uses: [{id, name, orig_name,
//     args}]}}, request_metadata: {request_id, message_id, request_start_timestamp_ms,
//     stream_end_timestamp_ms, model_id, ...}}], model_info {model_id}, latest_summary,
//     user_turn_metadata {usage_info: credits}, ...}; tool results are {tool_use_id, content:
//     [{Text} | {Json}], status Success|Error}.
//   - The v2 engine's sessions (the CLI's default engine in current releases):
//     <home>/sessions/cli/<uuid>.jsonl, the append-only log, one LogEntry a line ({"version":
//     "v1", "kind": Prompt | AssistantMessage | ToolResults | Compaction | ResetTo |
//     CancelledPrompt | Clear, "data": {message_id, content: [{kind: text|thinking|toolUse|
//     toolResult|image, data}], meta {timestamp: unix seconds}}}: a line source); and
//     <uuid>.json, the session's metadata rewritten whole ({session_id, cwd, created_at,
//     updated_at, title, parent_session_id, session_state {conversation_metadata
//     {user_turn_metadatas}, rts_model_state {model_info {model_id}}}}: a Document source).
//   - The KAS store, written by the IDE's agent (kiro.kiro-agent) and by the CLI's v3 engine
//     (`--v3`): <home>/sessions/<bucket>/<id>/messages.jsonl, one event a line ({id, timestamp,
//     payload: {type, ...}}: a line source), beside session.json ({id, title, workspacePaths,
//     createdAt, modelId, parentSessionId, ...}), where <bucket> is a hash of the workspace (or
//     _global) and <id> sess_<uuid> (cli_<uuid>_... for a session converted from v2).
//
// <home> is $KIRO_HOME when set (the CLI's variable; it replaces ~/.kiro whole), else ~/.kiro, on
// Linux and macOS alike; the IDE always uses ~/.kiro, which is read as well. Discover lists each
// root's data.sqlite3, its sessions/cli/*.jsonl and *.json, and every sessions/<bucket>/<id>/
// holding a messages.jsonl (a directory listing per bucket, a stat per session). The IDE's older
// private store (globalStorage/kiro.kiroagent: *.chat files, workspace-sessions/*/<uuid>.json and
// execution logs) is not read: its chats carry no time per message and its tool calls live in
// separate execution logs keyed by a workspace hash.
//
// # Token accounting
//
// Kiro bills in credits and keeps almost no token counts. The database keeps none (each request's
// metadata holds only a context-usage percentage; the turn's credits are in usage_info); the KAS
// store keeps none (a usage_summary with the turn's credits, a contextUsage percentage). The v2
// metadata keeps, per user turn, user_turn_metadatas[] {input_token_count, output_token_count,
// cache_read_input_token_count, cache_write_input_token_count, metering_usage (credits), model,
// end_timestamp, message_ids}: the sums of the turn's requests' usage as Kiro's service reports it
// (MetadataUsage {input_tokens, output_tokens, cache_read_input_tokens,
// cache_write_input_tokens}, Bedrock's convention: input net of the cache, reasoning inside
// output). Current releases write zeros there; a turn whose figures are all zero yields nothing.
// A turn with figures is one token_usage event, id event.ID("kiro", "usage", session, turn
// index), at the turn's end_timestamp, with Input = input_token_count, Output =
// output_token_count, CacheRead = cache_read_input_token_count, CacheCreation =
// cache_write_input_token_count, its model the turn's model (else the session's), priced from the
// pricing table ("approximate"; "unknown" at cost 0 for a model the table does not price, such as
// Kiro's "auto"). No usage is estimated and credits are not turned into dollars. Kiro's model
// traffic goes to Amazon's service with Kiro's own sign-in: the proxy does not see it.
//
// # Actions and messages
//
// A tool call is an action, id event.ID("kiro", "action", session (a subagent's own id), tool-use
// id), with its result's outcome: a status Success (v1), success (v2) or success true (KAS)
// succeeded, anything else failed; a shell result whose JSON holds a non-zero exit_status failed
// too (Error its stderr). Output is the result's text (the stdout of a shell result). The call
// and its result are on different lines of the logs: the result's event has the call's id (the
// writer merges them) and carries the call's type and target while the call is remembered. Tool
// names are compared without case, "_", "-" and spaces, so the CLI's (fs_read, fs_write,
// execute_bash), its v2 aliases (read, write, shell) and the agent's (readFile, fsWrite,
// strReplace, executeBash) meet: fs_read/read/readFile read_file (path; a v1 operation in
// Directory mode search_files, in Search mode search_text); fs_write/write/fsWrite write_file, or
// edit_file for its strReplace, insert and append commands; strReplace, editFile, deleteFile
// edit_file; execute_bash/execute_cmd/shell/executeBash/executePwsh run_command (command); use_aws
// run_command ("aws <service> <operation>"); glob, fileSearch, listDirectory search_files; grep,
// grepSearch search_text (pattern " in " path); web_search web_search; web_fetch web_fetch;
// use_subagent, delegate, invokeSubAgent spawn_subagent; todo_list todo_update; an MCP tool
// ("<server>___<tool>", "@<server>/<tool>") mcp_call ("<server>/<tool>"); anything else
// (introspect, thinking, knowledge, code, ...) unknown with the raw name in Tool (a v1 call named
// "dummy" keeps its orig_name). A prompt (v1 Prompt, v2 Prompt, KAS session_start and user) is a
// user_prompt action and a user message; a reply's text an assistant message, its thinking
// (v1 thinking, v2 thinking blocks, KAS assistant with operationType Reasoning) a thinking
// message, each call a tool_call message; a compaction (v2 Compaction, v1 latest_summary) a
// summary message and a context_compacted action; a KAS error payload an api_error action.
//
// # Times, sessions and re-reads
//
// Times: a KAS line's timestamp; a v2 Prompt's meta.timestamp, the log's other lines at the
// time read last (the CLI writes none for them); a v1 entry's user timestamp (or its request's
// start) for the prompt and its stream_end_timestamp_ms for the reply. The session is the
// conversation id (v1), the session's uuid (v2) or its id (KAS); a subagent's session (a v2
// parent_session_id, a KAS parentSessionId) belongs to its parent's: its events carry the
// parent's id and its own as AgentID, it has no session events, and its first prompt (the
// parent's task) is a user message but no prompt. The directory is the database row's key, the
// v2 cwd, the KAS workspacePaths[0]; the project is project.Root of it. Session events: started
// (at the creation time), the title (v2, KAS), each model once. Ids are the client's (message and
// tool-use ids, a KAS line's id), so a re-read stores nothing twice: the line readers resume from
// their State (small: the session, the pending calls' types and memo'd targets); the v2 metadata
// is a document re-read whole (transcript.Emitted); the database reader keeps per conversation
// its updated_at, how many history entries it reported and the last one's key, and reads again
// from the start a history that was cut (a compaction, /clear). Targets, errors, outputs and
// messages are scrubbed and cut to 500 characters, 2 KB, 8 KB and 64 KB.
package kiro

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names (the integrator moves it to pkg/client).
const Client = client.Kiro

// EnvHome moves kiro-cli's home directory (~/.kiro): the CLI's own variable.
const EnvHome = "KIRO_HOME"

// Adapter reads Kiro's stores.
type Adapter struct {
	// Roots are directories each of which may hold a data.sqlite3 (a data directory) and a
	// sessions directory (a Kiro home).
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given roots.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the Kiro homes ($KIRO_HOME, ~/.kiro) and the CLI's data directories on
// this system (see the package doc).
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	home, _ := os.UserHomeDir()
	var roots []string
	if h := strings.TrimSpace(os.Getenv(EnvHome)); h != "" {
		roots = append(roots, transcript.ExpandHome(h))
	}
	roots = append(roots, filepath.Join(home, ".kiro"))
	data := filepath.Join(home, "Library", "Application Support")
	if goos != "darwin" {
		data = strings.TrimSpace(os.Getenv("XDG_DATA_HOME"))
		if data == "" || !filepath.IsAbs(data) {
			data = filepath.Join(home, ".local", "share")
		}
	}
	roots = append(roots, filepath.Join(data, "kiro-cli"), filepath.Join(data, "amazon-q"))
	return transcript.DedupePaths(roots)
}

// WatchDirs lists the roots, their sessions directories, sessions/cli and every bucket under
// sessions (where a new session's directory appears).
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		sessions := filepath.Join(r, "sessions")
		out = append(out, r, sessions, filepath.Join(sessions, "cli"))
		ents, _ := transcript.ReadDir(sessions)
		for _, e := range ents {
			if p := filepath.Join(sessions, e.Name()); e.Name() != "cli" && transcript.IsDir(e, p) {
				out = append(out, p)
			}
		}
	}
	return transcript.DedupePaths(out)
}

// Discover lists every root's data.sqlite3 (a Database source), sessions/cli/<uuid>.jsonl (a line
// source) and <uuid>.json (a Document source), and sessions/<bucket>/<id>/messages.jsonl (a line
// source), sorted by path. A missing root is not an error; a directory that cannot be read is
// reported after the others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(src transcript.Source) {
		if !seen[src.Path] {
			seen[src.Path] = true
			out = append(out, src)
		}
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if fi, err := os.Stat(filepath.Join(abs, DBName)); err == nil && fi.Mode().IsRegular() {
			add(transcript.Source{Client: Client, Path: filepath.Join(abs, DBName), Database: true})
		}
		sessions := filepath.Join(abs, "sessions")
		ents, err := transcript.ReadDir(sessions)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			dir := filepath.Join(sessions, e.Name())
			if !transcript.IsDir(e, dir) {
				continue
			}
			files, err := transcript.ReadDir(dir)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, f := range files {
				p := filepath.Join(dir, f.Name())
				if e.Name() == "cli" {
					if !transcript.IsFile(f, p) {
						continue
					}
					if id, ok := strings.CutSuffix(f.Name(), ".jsonl"); ok && id != "" {
						add(transcript.Source{Client: Client, Path: p, SessionID: id})
					} else if id, ok := strings.CutSuffix(f.Name(), ".json"); ok && id != "" {
						add(transcript.Source{Client: Client, Path: p, SessionID: id, Document: true})
					}
					continue
				}
				if !transcript.IsDir(f, p) {
					continue
				}
				m := filepath.Join(p, kasMessages)
				if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
					add(transcript.Source{Client: Client, Path: m, SessionID: f.Name()})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns the parser of a source: the database's (a transcript.StreamPoller), a v2
// log's, a v2 metadata document's or a KAS session's, by the source's path.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	prices := pricing.Source(a.Prices, a.CurrentPrices)
	switch {
	case src.Database || filepath.Base(src.Path) == DBName:
		return newDBParser(src, state, prices), nil
	case filepath.Base(src.Path) == kasMessages:
		return newKASParser(src, state)
	case strings.HasSuffix(src.Path, ".json"):
		return newCLIMetaParser(src, state, prices)
	}
	return newCLILogParser(src, state)
}
