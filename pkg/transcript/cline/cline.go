// Package cline reads the task records of the Cline CLI and of the VS Code extensions Cline, Roo
// Code and Kilo Code into observer events, following the transcript contract. Every file it reads
// is one JSON document its client rewrites in place: each is a transcript.Source Document, read
// whole again at each change.
//
// # Files
//
// Cline CLI (client "cline", checked with cline@3.0.65; the corpus holds a 3.0.20 session) keeps
// its sessions in ~/.cline/data/sessions (the first of $CLINE_SESSION_DATA_DIR,
// $CLINE_DATA_DIR/sessions, $CLINE_DIR/data/sessions that is set, as the CLI itself decides; the
// same on Linux and macOS). Per session <id> (unix milliseconds, "_", five characters):
//
//   - <id>/<id>.messages.json: {version, updated_at, agent, sessionId, messages: [...],
//     system_prompt}, the conversation in Anthropic's content-block shape: user and assistant
//     messages {id, role, ts (unix ms), content: [text | thinking | tool_use | tool_result]}; an
//     assistant message carries modelInfo {id, provider} and metrics {inputTokens, outputTokens,
//     cacheReadTokens, cacheWriteTokens, cost}. This is the Source. Older CLIs put it directly
//     in sessions/ (<id>.messages.json), which is read too.
//   - <id>/<id>.json beside it: metadata {session_id, started_at, cwd, workspace_root, model,
//     provider, prompt, metadata.title, metadata.usage (the session's sums), messages_path}. The
//     parser reads it for the session's directory, start and title (below); without it the
//     working directory comes from the system prompt's "Working Directory:" line.
//
// The VS Code extensions keep one directory per task under the editor's globalStorage:
// <globalStorage>/<extension id>/tasks/<task id>/ui_messages.json (the Source) beside
// api_conversation_history.json (the model's conversation, which this package does not read: the
// ui messages hold the same tool calls with their outcome, the prompts and the usage). Extension
// ids and clients: saoudrizwan.claude-dev "cline-vscode", rooveterinaryinc.roo-cline "roo-code",
// kilocode.kilo-code "kilo-code". globalStorage is <config>/User/globalStorage for each of the
// editors Code, Code - Insiders, VSCodium, Cursor and Windsurf, where <config> is ~/.config on
// Linux (and ~/.vscode-server/data for VS Code's remote server), ~/Library/Application Support on
// macOS and %APPDATA% on Windows. OBSERVER_VSCODE_GLOBALSTORAGE, a list of globalStorage
// directories separated by the OS path list separator, replaces those defaults.
//
// ui_messages.json is an array of ClineMessage {ts (unix ms, the message's identity), type "say" or
// "ask", say or ask (its kind), text, partial, modelInfo {providerId, modelId} (Cline since mid
// 2025)}. No real task file of these extensions was available under a permissive licence: the
// fixtures in testdata/vscode were written by hand from the extensions' message types.
//
// # Token accounting
//
// Cline CLI: each assistant message's metrics are one API response's usage, as the AI SDK
// reports it. What includes what:
//
//	inputTokens       the whole prompt: cache reads and cache writes included
//	cacheReadTokens   the part of the prompt read from the cache
//	cacheWriteTokens  the part of the prompt written to the cache
//	outputTokens      the answer, reasoning included (no reasoning count is written)
//	cost              the client's own price of the response (OpenRouter-style providers)
//
// so Input = inputTokens − cacheReadTokens − cacheWriteTokens (inputTokens alone when it is
// smaller than the cache figures: a provider that already reported it net), CacheRead =
// cacheReadTokens, CacheCreation = cacheWriteTokens, Output = outputTokens, Reasoning = 0. That is
// the proxy's figure for the same request (OpenAI prompt_tokens − cached_tokens), which lets the
// store link the proxy's session-less turn to this session. The session's metadata.usage is the
// sum of these and is not read.
//
// VS Code extensions: an api_req_started message's text is JSON {tokensIn, tokensOut, cacheWrites,
// cacheReads, cost, apiProtocol (Roo, Kilo), request, cancelReason, streamingFailedMessage}, one
// per API request, rewritten when its usage arrives. tokensIn follows the provider: Anthropic's
// input_tokens (net of cache) for the Anthropic protocol (apiProtocol "anthropic", or a modelInfo
// provider anthropic, bedrock, vertex or claude-code), the OpenAI prompt_tokens (cache reads
// included) for the OpenAI protocol (apiProtocol "openai" or any other named provider). So Input =
// tokensIn under Anthropic, tokensIn − cacheReads − cacheWrites under OpenAI (when that is not
// negative); with neither field the figure is read as Anthropic's (the extensions' reference
// provider). CacheRead = cacheReads, CacheCreation = cacheWrites, Output = tokensOut.
//
// One token_usage event per assistant message (CLI: id event.ID(client, "usage", session, message
// id); VS Code: event.ID(client, "usage", task, ts)), only when it has a count. The cost comes from
// the pricing table at the message's time with Reliability "approximate"; for a model the table
// does not price (or an unnamed one: Roo and Kilo name none) it is the client's own cost, still
// "approximate", and "unknown" with cost 0 when the client has none either.
//
// # Actions
//
// A tool call is an action (CLI: id event.ID(client, "action", session, tool_use id), with the
// tool_result's outcome; VS Code: event.ID(client, "action", task, ts)). Mapping (tools.go):
// read_file, read_files, readFile, fetch_instructions read_file; write_to_file, newFileCreated
// write_file; replace_in_file, apply_diff, insert_content, search_and_replace, editor,
// apply_patch, editedExistingFile, appliedDiff edit_file; execute_command, run_commands, the
// command ask run_command; search_files, search_codebase, codebase_search, searchFiles search_text;
// list_files, list_code_definition_names, listFiles*, listCodeDefinitionNames search_files;
// web_fetch, fetch_web_content, browser_action_launch web_fetch; web_search web_search;
// use_mcp_tool, access_mcp_resource, use_mcp_server mcp_call; new_task, spawn_agent, newTask
// spawn_subagent; update_todo_list, focus_chain todo_update; ask_followup_question, ask_question,
// followup ask_user; attempt_completion, submit_and_exit, completion_result task_complete; anything
// else (plan_mode_respond, switch_mode, skills, browser_action, ...) unknown, the raw name kept in
// Tool. Targets: the path (relative to the project when inside it), the command (commands joined
// by "; "), the pattern or query with " in <path>", the URL, "<server>/<tool>", the question, the
// subagent's task. CLI outcome: tool_result is_error, or a result item with success false, failed;
// else succeeded. VS Code asks carry no outcome (nil), except a command, whose command_output
// messages become its output.
//
// User prompts: the CLI's user text (inside <user_input mode="..."> when present); the extensions'
// task message (Cline's say "task", Roo's and Kilo's first say "text") and user_feedback messages.
// api_req_failed asks and error says are api_error actions, condense_context says
// context_compacted actions.
//
// # Messages
//
// The conversation (event.Message, one event per message) comes from the record the parser
// already reads; the extensions' api_conversation_history.json is not read. Cline CLI, from the
// messages: a user message's typed prompt (the same text as its user_prompt action; not a user
// message that carries tool results, nor a bracketed system insert such as <environment_details>)
// is a user message; an assistant message's text blocks are assistant messages, its thinking
// blocks (non-empty; redacted_thinking is not read) thinking, and each tool_use block that is an
// action a tool_call message (Tool the tool's name, ToolUseID the tool_use id, Text the action's
// target). MessageID is the message's id, Model its modelInfo id; id event.ID(client, "message",
// session, message id, block index), Seq message index × 64 + block index. The CLI's records hold
// no subagent conversation and no compaction summary.
//
// VS Code extensions, from the ui messages (one message per ui message, none from a partial one):
// say task and user_feedback (and Roo's and Kilo's first say text, their task) are user messages;
// any other say text, ask plan_mode_respond (its response) and say completion_result (without
// Cline's HAS_CHANGES flag) assistant messages; say reasoning thinking; the asks and says that are
// tool call actions (tool, command, use_mcp_server, followup, new_task, browser_action_launch)
// tool_call messages, Text the action's target, Tool its tool, MessageID its MessageID (the ts;
// the extensions give a call no id, so ToolUseID is empty as on the action); Cline's ask condense
// (the context the task goes on from) and Roo's and Kilo's say condense_context
// (contextCondense.summary) summary messages. Not messages: api requests and their failures,
// errors, command output (the command's action output), checkpoints, the completion_result ask,
// resume asks, and whatever else the ui shows. Id event.ID(client, "message", task, ts, "0"), Seq
// the ui message's index × 64, Model the task's current model. Every text is scrubbed and cut to
// 64 KB.
//
// # Sessions and re-reads
//
// The session is the CLI's sessionId (else the file name) or the task id (the task directory's
// name). The first read yields a started session event (cwd, start time, transcript path) and each
// new model a session event. A document is read whole each time; the parser keeps in State a
// fingerprint of the events it emitted (the last 1024) and emits only those that are new or
// changed, and the ids are the same on every read, so a re-read with lost State stores nothing
// twice. A document that does not parse (caught mid-write) is ErrMalformed, emits nothing and
// keeps the State. Events carry source observer-watch; targets, errors and outputs are scrubbed
// and cut to 500 characters, 2 KB and 8 KB.
//
// Titles: the CLI writes metadata.title, which is the first line of the prompt (tags removed, 120
// characters; checked with the real cline 3.0.65) unless the session was given a title: one
// imported from another tool keeps that tool's, a fork gets one derived from its source's. Only a
// title that is not the prompt's first line is reported, as the client's (a session event with
// State "" and Title at the session's start, id event.ID(client, "session", session, "title",
// title)); the metadata file is read once, at the start. The VS Code extensions' task title is the
// task's first message (taskHistory's task, kept in the extension's state, not read): already the
// first prompt, which the store takes as the title.
package cline

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Clients the adapters name.
const (
	Client       = client.Cline       // Cline CLI
	ClientVSCode = client.ClineVSCode // the Cline VS Code extension
	ClientRoo    = client.RooCode
	ClientKilo   = client.KiloCode
)

// Extension ids of the VS Code extensions, the directories under globalStorage.
const (
	ExtensionCline = "saoudrizwan.claude-dev"
	ExtensionRoo   = "rooveterinaryinc.roo-cline"
	ExtensionKilo  = "kilocode.kilo-code"
)

// EnvGlobalStorage overrides the VS Code globalStorage directories searched for extension tasks.
const EnvGlobalStorage = "OBSERVER_VSCODE_GLOBALSTORAGE"

// Adapter reads one client's task records.
type Adapter struct {
	client    string
	extension string // empty for the CLI
	// Roots are the CLI's sessions directories, or globalStorage directories for an extension.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns the Cline CLI adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{client: Client, Roots: roots} }

// NewVSCode returns the adapter of one VS Code extension (client cline-vscode, roo-code or
// kilo-code) reading the given globalStorage directories.
func NewVSCode(client string, globalStorage []string) *Adapter {
	ext := map[string]string{ClientVSCode: ExtensionCline, ClientRoo: ExtensionRoo, ClientKilo: ExtensionKilo}[client]
	return &Adapter{client: client, extension: ext, Roots: globalStorage}
}

// VSCodeAdapters returns the three extension adapters on the default globalStorage directories.
func VSCodeAdapters() []*Adapter {
	gs := DefaultGlobalStorage()
	return []*Adapter{NewVSCode(ClientVSCode, gs), NewVSCode(ClientRoo, gs), NewVSCode(ClientKilo, gs)}
}

// Client names the client.
func (a *Adapter) Client() string { return a.client }

// DefaultRoots returns the Cline CLI's sessions directory, decided as the CLI decides it.
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv("CLINE_SESSION_DATA_DIR")); d != "" {
		return []string{d}
	}
	if d := strings.TrimSpace(os.Getenv("CLINE_DATA_DIR")); d != "" {
		return []string{filepath.Join(d, "sessions")}
	}
	if d := strings.TrimSpace(os.Getenv("CLINE_DIR")); d != "" {
		return []string{filepath.Join(d, "data", "sessions")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".cline", "data", "sessions")}
}

// editors are the VS Code builds whose globalStorage is searched.
var editors = []string{"Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"}

// DefaultGlobalStorage returns the VS Code globalStorage directories: $OBSERVER_VSCODE_GLOBALSTORAGE
// when set, else each editor's on this OS.
func DefaultGlobalStorage() []string {
	if v := strings.TrimSpace(os.Getenv(EnvGlobalStorage)); v != "" {
		var out []string
		for _, d := range filepath.SplitList(v) {
			if d = strings.TrimSpace(d); d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	home, _ := os.UserHomeDir()
	var bases []string
	switch runtime.GOOS {
	case "darwin":
		bases = []string{filepath.Join(home, "Library", "Application Support")}
	case "windows":
		if d := os.Getenv("APPDATA"); d != "" {
			bases = []string{d}
		}
	default:
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		bases = []string{cfg}
	}
	var out []string
	for _, b := range bases {
		for _, e := range editors {
			out = append(out, filepath.Join(b, e, "User", "globalStorage"))
		}
	}
	if runtime.GOOS == "linux" {
		out = append(out, filepath.Join(home, ".vscode-server", "data", "User", "globalStorage"))
	}
	return out
}

// WatchDirs lists the directories a watcher should watch for new records.
func (a *Adapter) WatchDirs() []string {
	if a.extension == "" {
		return append([]string(nil), a.Roots...)
	}
	var out []string
	for _, r := range a.Roots {
		out = append(out, filepath.Join(r, a.extension, "tasks"))
	}
	return out
}

// Discover lists the client's records, sorted by path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	add := func(path, session string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, transcript.Source{Client: a.client, Path: path, SessionID: session, Document: true})
		}
	}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		if a.extension != "" {
			tasks := filepath.Join(abs, a.extension, "tasks")
			ents, err := transcript.ReadDir(tasks)
			if err != nil {
				errs = append(errs, err)
			}
			for _, e := range ents {
				p := filepath.Join(tasks, e.Name(), "ui_messages.json")
				if e.IsDir() && isFile(p) {
					add(p, e.Name())
				}
			}
			continue
		}
		ents, err := transcript.ReadDir(abs)
		if err != nil {
			errs = append(errs, err)
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() {
				p := filepath.Join(abs, name, name+".messages.json")
				if isFile(p) {
					add(p, name)
				}
			} else if id, ok := strings.CutSuffix(name, ".messages.json"); ok && id != "" {
				add(filepath.Join(abs, name), id)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// NewParser returns a parser for one record file.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a.client, a.extension != "", src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
