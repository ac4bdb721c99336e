// Package continuecli reads the sessions of Continue's CLI (`cn`, npm @continuedev/cli; client
// "continue-cli", checked with 1.5.47 run offline against observer's fake API) into observer
// events, following the transcript contract.
//
// # Files
//
// The CLI keeps each session as one JSON document, sessions/<session id>.json under its global
// directory ($CONTINUE_GLOBAL_DIR, else ~/.continue, on Linux and macOS alike), rewritten whole
// at each change: {sessionId, title, workspaceDirectory, history: [...], usage}. Each history
// item is {message, contextItems, toolCallStates, editorState}: message {role "user" or
// "assistant" (or "system", "tool" from other front ends), content (a string or a list of
// {type "text", text} parts), toolCalls [{id, type "function", function {name, arguments (JSON
// text)}}], usage}; toolCallStates [{toolCallId, toolCall, status ("done", "errored",
// "canceled", ...), parsedArgs, output [{content, name}]}] carry each call's result. Beside them,
// sessions/sessions.json lists {sessionId, title, dateCreated (unix ms as a string),
// workspaceDirectory, messageCount}: it is not a Source, and the parser reads it once for the
// session's start. A history item has no time of its own: an item gets the document's
// modification time when the parser first sees it (kept in State as runs, so a re-read does not
// move it), so a history scanned long after it was written has its items at the session's last
// change. Read live (the watcher running), an item's time is within a second or two of its
// response; read after the fact, a proxy turn links to its message only when the session's last
// change was within the store's join window (30 s) of the turn.
//
// # Token accounting
//
// An assistant message's usage is the API response's usage as the CLI kept it: {prompt_tokens,
// completion_tokens, total_tokens, model, cost_cents} (from Chat Completions, or the Responses
// API's input_tokens and output_tokens, which it maps to those names). What includes what:
//
//	prompt_tokens      the whole prompt: cached tokens included (the CLI does not keep the
//	                   cached count of OpenAI's usage: prompt_tokens_details.cached_tokens and
//	                   input_tokens_details.cached_tokens are dropped)
//	completion_tokens  the answer, reasoning included (no reasoning count is kept)
//	cost_cents         the client's own price (0 for models it does not know)
//
// so Input = prompt_tokens, Output = completion_tokens, CacheRead = 0: a record prices cached
// input at the full input rate, and its cost is an upper bound where the provider cached. The
// proxy sees the split (its turn's input is net of the cache): a session-less proxy turn the
// proxy could not name (the CLI sends only the OpenAI SDK's marks) is linked to its message by
// model, output and the whole prompt (input + cache read + cache write), and its exact figures
// win (pkg/store). One token_usage event per assistant message with a usage (id
// event.ID(client, "usage", session, item index); its MessageID, which its text and tool calls
// carry too, event.ID(client, "message", session, item index)), priced from the pricing table at the item's
// time, "approximate"; a model the table does not price is "unknown" at cost 0 (cost_cents is
// kept only when the table has no price and it is not 0).
//
// # Actions and messages
//
// A tool call is an action (id event.ID(client, "action", session, call id)) with its outcome
// from toolCallStates: status "done" succeeded, "errored" failed, anything else no outcome yet;
// the output is the output items' content joined. Mapping: Read read_file (filepath), Write
// write_file, Edit and MultiEdit edit_file (file_path), Bash run_command (command), Search
// search_text (pattern " in " path), List search_files (dirpath), Fetch web_fetch (url),
// Subagent spawn_subagent (prompt), Checklist todo_update, AskQuestion ask_user (question), Exit
// and ReportFailure task_complete; anything else (Status, Skills, Diff, UploadArtifact,
// CheckBackgroundJob, MCP tools) unknown with the raw name in Tool. A user message's text is a
// user_prompt action and a user message; an assistant's text an assistant message; each tool call
// a tool_call message (Text the action's target). Message ids event.ID(client, "message",
// session, item index, part), Seq item index × 64 + part.
//
// # Sessions and re-reads
//
// The session is the document's sessionId (else the file name); its directory the
// workspaceDirectory. The first read yields a started session event, each new model a session
// event. A document is read whole each time; the parser keeps in State a fingerprint of the
// events it emitted lately and emits only those new or changed, under ids that are the same on
// every read. A document that does not parse (caught mid-write) is ErrMalformed, emits nothing and
// keeps the State. Events carry source observer-watch; targets, errors, outputs and messages are
// scrubbed downstream and cut to 500 characters, 2 KB, 8 KB and 64 KB here.
package continuecli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.ContinueCLI

// EnvGlobalDir moves the CLI's global directory (the CLI's own variable).
const EnvGlobalDir = "CONTINUE_GLOBAL_DIR"

// Adapter reads the CLI's sessions.
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

// DefaultRoots returns the CLI's sessions directory: $CONTINUE_GLOBAL_DIR/sessions, else
// ~/.continue/sessions.
func DefaultRoots() []string {
	if d := strings.TrimSpace(os.Getenv(EnvGlobalDir)); d != "" {
		return []string{filepath.Join(transcript.ExpandHome(d), "sessions")}
	}
	home, _ := os.UserHomeDir()
	return []string{filepath.Join(home, ".continue", "sessions")}
}

// WatchDirs lists the directories a watcher should watch for new records.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// indexFile is the sessions' index beside them, not a session.
const indexFile = "sessions.json"

// Discover lists the sessions (not the index beside them), sorted by path. A missing root is not
// an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDocuments(Client, a.Roots, func(name string) (string, bool) {
		id, ok := strings.CutSuffix(name, ".json")
		return id, ok && id != "" && name != indexFile
	})
}

// NewParser returns a parser for one session document.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
