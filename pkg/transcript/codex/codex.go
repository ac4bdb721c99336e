// Package codex reads OpenAI Codex rollout files (~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl
// and ~/.codex/archived_sessions/) into observer events, following the transcript contract.
//
// # Formats
//
// A rollout is JSON lines. Since September 2025 every line is an envelope {timestamp, type, payload}
// with type session_meta, turn_context, response_item, event_msg, compacted or token_usage_record.
// The older "bare" format (Codex before ~0.3x) has a first line {id, timestamp, instructions, git},
// {"record_type":"state"} markers and response items without an envelope or a timestamp; it is read
// too, each line taking the last timestamp seen. A line that is not JSON, not UTF-8 or not an object
// is malformed (transcript.ErrMalformed); a record type this package does not know is counted in
// Stats.Unknown and yields nothing.
//
// # Token accounting
//
// Codex logs usage as event_msg token_count records whose info.total_token_usage is cumulative for
// the session and repeats (the same totals are written several times). The parser keeps the last
// total and emits one token_usage event per non-zero delta:
//
//	Input = Δinput_tokens − Δcached_input_tokens   (OpenAI input includes cached tokens)
//	CacheRead = Δcached_input_tokens
//	Output = Δoutput_tokens                         (reasoning is inside output)
//	Reasoning = Δreasoning_output_tokens
//
// A total in which any counter went down (a new conversation written to the same file, a context
// reset) restarts the base at zero, so its delta is the total itself. A token_count without
// total_token_usage falls back to adding last_token_usage, skipping a repeat of the same last usage
// with no model output in between. The event id is event.ID("codex", "usage", root, total) where
// total is the cumulative total after the delta and root is the session at the start of the fork
// chain (below): a replay of the same history yields the same ids. The model is the one of the
// latest turn_context; the cost comes from the pricing table at the line's time (Reliability
// approximate, or unknown when the table has no price for the model). A delta that spans more than
// the last request (a token_count was lost) is priced as the last request plus the rest, since
// long-context tiers are per request.
//
// Newer Codex versions may also write token_usage_record lines: the usage of one response, keyed by
// response_id (read like token_count: input includes cached tokens). From the first such record on,
// the parser counts usage from those records only (id event.ID("codex", "usage", root, "response",
// response_id)) and lets token_count totals advance the base without emitting, so the two are not
// added up. No corpus file has one; this follows third-party readers of the format.
//
// # Forks
//
// A fork (`codex fork`, /fork, a thread forked in the app server, a subagent spawned with the
// parent's context) writes a new rollout whose own session_meta names its source in forked_from_id
// (or source.subagent.thread_spawn.parent_thread_id), followed by the parent's rollout items copied
// verbatim, including the parent's session_meta and, recursively, its ancestors' (the copy is
// truncated before the nth user message when forking from an earlier point), every line re-stamped
// with the time of the fork; the fork's own turns follow, with totals that continue from the copied
// ones (openai/codex codex-rs/core/src/codex.rs record_initial_history, InitialHistory::Forked:
// "persist all rollout items as-is"; rollout/policy.rs persists SessionMeta items; recorder.rs
// writes the new SessionMeta with forked_from_id first). The parser follows the chain of copied
// session_meta lines to the root session and keys usage and tool calls by that root, so the copied
// part produces exactly the parent's event ids and is stored once. When the copies of the ancestors'
// metas are missing, the adapter reads the parent's rollout header from disk to extend the chain.
// Events keep the file's own session id; which session a copied fact is stored under is decided by
// the file stored first (Discover lists older files first).
//
// # Actions
//
// Tool calls (response_item function_call, custom_tool_call, local_shell_call) and their results
// (function_call_output, custom_tool_call_output, and the event_msg exec_command_end,
// patch_apply_end, mcp_tool_call_end) share one id, event.ID("codex", "action", root, call_id);
// the writer merges them. A result carries the call's type, tool and target (the parser keeps a
// bounded map of pending calls in its State). When the call is no longer known, a
// function_call_output has type unknown, exec_command_end is a run_command (or read or patch) of
// the command it names, patch_apply_end an edit_file or write_file of the files it changed, and
// mcp_tool_call_end an mcp_call. The raw tool name stays in Action.Tool. Mapping:
//
//   - exec_command, shell, shell_command, local_shell, container.exec, exec, write_stdin:
//     run_command, target the command (a `bash -lc` wrapper removed). A single plain command that
//     only reads files (cat, head, tail, nl, `sed -n 'N,Mp'`, with no pipe, redirect or chain) is
//     read_file with the first file as target. A shell call that runs apply_patch is a patch.
//     write_stdin's target is the command of the process it writes to, when known.
//   - apply_patch (freeform custom tool, JSON function, or through the shell): edit_file, or
//     write_file when the patch only adds files; target the first file of the patch.
//   - update_plan: todo_update. view_image: read_file. web_search_call: web_search (query), or
//     web_fetch for open_page and find_in_page (URL).
//   - MCP tools (qualified server__tool names, mcp__ prefixes): mcp_call. Anything else: unknown.
//
// File targets are relative to the project root when inside it, absolute otherwise. Success comes
// from the exit code (shell JSON metadata, the unified-exec "Process exited with code N" header,
// exec_command_end), patch_apply_end's success flag, or MCP isError; a unified-exec output that says
// the process is still running leaves Success unset until exec_command_end (or the write_stdin poll
// that sees the exit) settles it. Other text outputs count as success unless they start with a
// known failure phrase ("patch rejected", "failed to parse function arguments", ...).
//
// Other actions: event_msg user_message is the user_prompt (the text after Codex's "## My request
// for Codex:" marker when present); Codex 0.171 writes no user_message and reports the prompt as
// event_msg item_completed with a UserMessage item instead. A session's prompts come from the
// first of the two forms it shows, so a prompt written in both counts once. response_item messages with role user are not prompts in the
// envelope format: Codex writes the typed prompt there too, beside injected context (AGENTS.md,
// <environment_context>, <user_instructions>, permissions); in the bare format, which has no
// event_msg, a user message that is not such a preamble is the prompt. task_complete,
// turn_aborted, error and stream_error (api_error) and compacted (context_compacted) are actions
// too. Their ids hash the record's content with its context (the current turn id and the last
// cumulative total) and its occurrence in that context, never the byte offset, so a fork's copy
// yields the parent's ids. Reasoning, agent messages and snapshots yield no action (they are
// messages, below).
//
// Targets, errors and outputs go through scrub.String and are cut to 500 characters, 2 KB and 8 KB
// (OutputSize is the full size of what the rollout holds; Codex itself keeps at most 10 KB of a
// command's aggregated output in exec_command_end).
//
// # Messages
//
// The conversation (event.Message, one event per message) is read from one source per kind, so a
// message Codex writes twice (newer versions write a response_item and an event_msg for each) is
// counted once:
//
//   - user: the prompts, exactly where the user_prompt actions come from (event_msg user_message,
//     or item_completed UserMessage in Codex 0.171; a bare-format user message that is not
//     injected context), with the text after an IDE's "## My request for Codex:" marker. The
//     response_item user messages of the envelope format are not read (they repeat the prompt and
//     carry the injected context: AGENTS.md, <environment_context>, <user_instructions>,
//     permissions, <turn_aborted>, ...), nor developer or system messages.
//   - assistant: each text part of a response_item message with role assistant (commentary and
//     final answers alike). event_msg agent_message, its copy, is not read.
//   - thinking: each summary part of a response_item reasoning, or, when it has no summary text,
//     each part of its raw content; encrypted_content alone is no text. event_msg agent_reasoning
//     and agent_reasoning_raw_content, their copies, are not read.
//   - tool_call: each function_call, custom_tool_call, local_shell_call and web_search_call, with
//     the tool and the ToolUseID of its action and the action's target as text (the output stays
//     with the action).
//   - summary: the message of a compacted line (not its replacement_history, which repeats
//     earlier messages); a remote compaction that holds only encrypted content has none.
//
// Text is trimmed, scrubbed and cut to 64 KB; a message without text is passed over. Seq is the
// line's number in the file (counted in State) times 64 plus the part's index. Ids follow the
// actions': a tool call's is event.ID("codex", "message", root, call_id); a prompt's and a
// compaction summary's share the content key of their action (kind "message" instead of
// "action"); the others hash their content in its context and occurrence like content-keyed
// actions, plus the part's index. A fork's copy of its parent's history thus yields the parent's
// message ids. Model is the latest turn_context's, on assistant, thinking and tool call messages.
// A subagent is a rollout of its own (a session whose parent is the spawning thread), so no
// message carries an AgentID or Sidechain.
//
// # Sessions
//
// The session id is the uuid in the file name, or else the id of the file's first session_meta.
// That session_meta yields a session event (started, cwd, git branch, parent = forked_from_id or
// the spawning thread, transcript path); each new model of a turn_context yields a session event
// carrying the model; a compaction bumps the session epoch. The originator and CLI version have no
// field in the wire schema; Parser.Meta returns them.
//
// The thread's name is the session's title. Codex sets it through one call (codex-rs
// set_thread_name: the TUI's /rename, the app server's thread/name/set) that appends an event_msg
// thread_name_updated {thread_id, thread_name} to the rollout (rollout/policy.rs persists it in the
// default Limited mode) and a line {id, thread_name, updated_at} to ~/.codex/session_index.jsonl.
// This reader takes it from the rollout: a session event with State "" and Title, at the line's
// time, id event.ID("codex", "session", session, "title", time, title). TitleByUser stays false:
// Codex 0.171's TUI also titles threads automatically (tui/src/app/thread_title.rs; "An automatic
// title is still being saved. Try renaming the thread again."), and the line does not say which it
// is. A fork's copy of its parent's line names the parent's thread_id and is passed over; a cleared
// name (null) yields nothing. session_index.jsonl is not read: it repeats the rollout's names in
// one file for every session, outside the rollouts this adapter follows. Codex 0.171 also keeps a
// title in its state database (threads.title in state_5.sqlite: the first prompt, as `codex exec`
// against observer-fakeapi showed, unless a name was set), not read either; the store falls back to
// the first prompt itself.
package codex

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name codex events carry.
const Client = client.Codex

// Adapter finds and reads the rollouts under one Codex home.
type Adapter struct {
	// Home is the Codex home ($CODEX_HOME, ~/.codex).
	Home string
	// Prices prices token usage; nil means pricing.Default(). Use Table.WithAliases for Azure
	// deployment names such as aide-gpt-5.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices: it returns the table in force whenever a usage
	// line is priced, so a long-lived parser follows price changes (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter for the Codex home directory home.
func New(home string) *Adapter { return &Adapter{Home: home} }

// DefaultHome returns $CODEX_HOME, or ~/.codex.
func DefaultHome() string {
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".codex")
	}
	return ".codex"
}

// Client returns "codex".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories to watch: the home's sessions and archived_sessions.
func (a *Adapter) WatchDirs() []string {
	return []string{a.Home + "/sessions", a.Home + "/archived_sessions"}
}

// Discover lists the rollout files under <home>/sessions (dated directories, or flat in the
// oldest versions) and <home>/archived_sessions (flat or dated), oldest first by the time in the
// file name, so a fork's parent comes before the fork. A missing directory is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	for _, sub := range []string{"sessions", "archived_sessions"} {
		root := filepath.Join(a.Home, sub)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || path != root {
					return nil // a directory that vanished or cannot be read is skipped
				}
				return err
			}
			if d.IsDir() || !isRollout(d.Name()) {
				return nil
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			id := SessionIDFromPath(abs)
			if id == "" {
				id = headerSessionID(abs)
			}
			out = append(out, transcript.Source{Client: Client, Path: abs, SessionID: id})
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		ti, tj := fileTime(out[i].Path), fileTime(out[j].Path)
		if ti != tj {
			return ti < tj
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// NewParser returns a parser for one rollout, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return a.newParser(src, state)
}

func (a *Adapter) newParser(src transcript.Source, state []byte) (*Parser, error) {
	prices := pricing.Source(a.Prices, a.CurrentPrices)
	p := &Parser{src: src, prices: prices, resolve: a.parentOf}
	if src.Client == "" {
		p.src.Client = Client
	}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &p.st); err != nil {
			return nil, errors.New("codex: bad parser state for " + src.Path + ": " + err.Error())
		}
	}
	if p.st.SessionID == "" {
		p.st.SessionID = src.SessionID
		if p.st.SessionID == "" {
			p.st.SessionID = SessionIDFromPath(src.Path)
		}
	}
	return p, nil
}

var (
	uuidSuffix = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)
	timeInName = regexp.MustCompile(`rollout-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2})`)
)

// SessionIDFromPath returns the uuid at the end of a rollout file name
// (rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl), or "".
func SessionIDFromPath(path string) string {
	m := uuidSuffix.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

func isRollout(name string) bool {
	return strings.HasPrefix(name, "rollout-") && strings.HasSuffix(name, ".jsonl")
}

func fileTime(path string) string {
	if m := timeInName.FindStringSubmatch(filepath.Base(path)); m != nil {
		return m[1]
	}
	return ""
}

// headerSessionID reads the id of a rollout's first session_meta (envelope or bare format).
func headerSessionID(path string) string {
	id, _, _ := readHeader(path)
	return id
}

// maxHeaderLine bounds the first line read from a rollout: session_meta carries the base
// instructions, tens of kilobytes.
const maxHeaderLine = 4 << 20

// readHeader returns the id of the first session_meta of a rollout and the session it was forked or
// spawned from. ok is false when the file cannot be read or does not start with a session_meta.
func readHeader(path string) (id, parent string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, maxHeaderLine), 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return "", "", false
	}
	var env struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
		ID      string          `json:"id"`
	}
	if json.Unmarshal(line, &env) != nil {
		return "", "", false
	}
	if env.Type == "" && env.Payload == nil && env.ID != "" {
		return env.ID, "", true // bare format: no forks
	}
	if env.Type != "session_meta" {
		return "", "", false
	}
	var m sessionMeta
	if json.Unmarshal(env.Payload, &m) != nil {
		return "", "", false
	}
	return m.ID, m.parent(), m.ID != ""
}

// parentOf finds the rollout of session id under the adapter's home and returns the session it was
// forked from, "" when it is a root or cannot be found.
func (a *Adapter) parentOf(id string) string {
	if a == nil || a.Home == "" || id == "" || strings.ContainsAny(id, `/\*?[`) {
		return ""
	}
	pats := []string{
		filepath.Join(a.Home, "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"),
		filepath.Join(a.Home, "sessions", "rollout-*-"+id+".jsonl"),
		filepath.Join(a.Home, "archived_sessions", "rollout-*-"+id+".jsonl"),
		filepath.Join(a.Home, "archived_sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"),
	}
	for _, pat := range pats {
		matches, _ := filepath.Glob(pat)
		for _, m := range matches {
			if hid, parent, ok := readHeader(m); ok && strings.EqualFold(hid, id) {
				return parent
			}
		}
	}
	return ""
}
