// Package amp reads the local threads of Sourcegraph's Amp (client "amp") into observer events,
// following the transcript contract. Amp wrote them until its CLI stopped keeping threads on disk
// (no new file after the end of March 2026, as the published readers of other tools report):
// they are a user's history, read as such; Amp does not run here (it needs Amp's servers), so the
// reader is tested on fixtures written here to the format those published readers describe
// (ccusage's apps/amp, agentsview's internal/parser/amp.go, tokscale; facts only).
//
// # Files
//
// One JSON document per thread, rewritten whole: <data>/amp/threads/T-<uuid>.json, where <data>
// is $XDG_DATA_HOME, else ~/.local/share (Amp keeps that layout on macOS too). The document:
// {v, id, created (unix ms), title, messages: [...], env: {initial: {trees: [{displayName,
// uri "file://..."}]}}, usageLedger: {events: [...]}}. A message is {role "user", "assistant"
// or "info" (Amp's own inserts: context, summaries; not read), messageId, content: [blocks],
// meta: {sentAt (unix ms)}, usage}; blocks are text {text}, thinking {thinking}, tool_use {id,
// name, input} and, in user messages, tool_result {toolUseID, run: {status ("done", "error",
// "cancelled", "rejected-by-user"), result, error: {message}}}.
//
// # Token accounting
//
// An assistant message's usage: {model, inputTokens, outputTokens, cacheCreationInputTokens,
// cacheReadInputTokens, totalInputTokens, timestamp (ISO)}. What includes what:
//
//	inputTokens               the prompt net of the cache (totalInputTokens is it plus both cache
//	                          figures)
//	cacheCreationInputTokens  the part written to the cache; for gpt-* models Amp writes the whole
//	                          uncached prompt here and 0 as inputTokens, which is read back as input
//	cacheReadInputTokens      the part read from the cache
//	outputTokens              the answer, reasoning included
//
// so Input = inputTokens (cacheCreationInputTokens for a gpt-* model whose inputTokens is 0),
// CacheCreation = cacheCreationInputTokens (0 then), CacheRead = cacheReadInputTokens, Output =
// outputTokens. Threads older than January 2026 keep no usage on their messages but a ledger,
// usageLedger.events [{id, timestamp, model, tokens: {input, output}, toMessageId}]: read only
// for a thread none of whose messages has a usage (reading both would count twice), Input =
// tokens.input, Output = tokens.output. One token_usage event per usage (id event.ID(client,
// "usage", thread, message id) or (client, "ledger", thread, event id)), priced from the pricing
// table at its time, "approximate" ("unknown" at cost 0 for a model the table does not price).
// Amp's traffic goes to Amp's servers: the proxy does not see it.
//
// # Actions and messages
//
// A tool_use is an action (id event.ID(client, "action", thread, tool_use id)) with its
// tool_result's outcome: status done succeeded (a Bash result with a non-zero exitCode failed),
// error, cancelled and rejected-by-user failed; no result, no outcome. Output: a Bash result's
// output, a Read result's content, else the result's JSON. Mapping: Bash, shell_command,
// async_shell_command run_command (cmd, command); Read read_file (path); create_file write_file;
// edit_file, undo_edit, format_file edit_file; list_directory, glob search_files (path,
// filePattern); Grep, codebase_search_agent search_text (pattern " in " path, query);
// web_search web_search (query); read_web_page web_fetch (url); Task, oracle, librarian, finder
// spawn_subagent (description, prompt, task, query); todo_write, todo_read todo_update; mcp__*
// mcp_call ("<server>/<tool>"); anything else unknown with the raw name in Tool. A user message's
// text (not its tool results) is a user_prompt action and a user message; an assistant's text an
// assistant message, its thinking a thinking message, each tool_use a tool_call message. Message
// ids event.ID(client, "message", thread, message index, block index), Seq message index × 64 +
// block index.
//
// # Times, sessions and re-reads
//
// A message's time is its usage's timestamp, else its meta.sentAt, else the one before it, else
// the thread's created. The session is the thread id (the file name's, which readers prefer to the
// document's); its directory the first tree's file:// URI; its title the thread's title (a session
// event with the title at the start). A document is read whole each time: only new or changed
// events are emitted (transcript.Emitted), under the same ids on every read; a document that does
// not parse is ErrMalformed and keeps the State.
package amp

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.Amp

// Adapter reads Amp's threads.
type Adapter struct {
	// Roots are threads directories.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (a table that follows config.toml).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given threads directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns Amp's threads directory: $XDG_DATA_HOME/amp/threads, else
// ~/.local/share/amp/threads.
func DefaultRoots() []string {
	data := strings.TrimSpace(os.Getenv("XDG_DATA_HOME"))
	if data == "" {
		home, _ := os.UserHomeDir()
		data = filepath.Join(home, ".local", "share")
	}
	return []string{filepath.Join(data, "amp", "threads")}
}

// WatchDirs lists the directories a watcher should watch for new records.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// Discover lists the threads (T-*.json), sorted by path. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	return transcript.DiscoverDocuments(Client, a.Roots, func(name string) (string, bool) {
		id, ok := strings.CutSuffix(name, ".json")
		return id, ok && strings.HasPrefix(id, "T-")
	})
}

// NewParser returns a parser for one thread.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
