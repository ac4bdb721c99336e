// Package gptme reads the conversation logs of gptme (github.com/gptme/gptme, the `gptme`
// command; client "gptme") into observer events, following the transcript contract for line
// files.
//
// Sources consulted (no corpus holds a gptme log; the tests run on a conversation written here to
// these sources' format, facts only): gptme/gptme gptme/dirs.py (get_logs_dir, get_data_dir),
// gptme/logmanager/manager.py (Log.write_jsonl, LogManager: the log directory, its
// conversation.jsonl, branches/ and views/), gptme/message.py (Message.to_dict, MessageMetadata,
// UsageData, _migrate_metadata, and format_msgs' rule for a failed tool result),
// gptme/config/chat.py (ChatConfig: config.toml and the workspace link), gptme/tools/base.py
// (ToolUse: the markdown, xml and tool formats; toolcall_re), gptme/tools/shell.py
// (_format_shell_output), gptme/tools/save.py, gptme/tools/python.py (block types),
// gptme/llm/llm_anthropic.py and llm_openai.py (_record_usage) and llm/openai_responses.py
// (_extract_usage_token_counts: what the token counts mean).
//
// # Files
//
// gptme keeps one directory per conversation in its logs directory: $GPTME_LOGS_HOME, else
// <data dir>/logs, where the data directory is $XDG_DATA_HOME/gptme, else ~/.local/share/gptme
// when it exists, else platformdirs' user data directory: ~/.local/share/gptme on Linux,
// ~/Library/Application Support/gptme on macOS. A conversation's directory is named by its id
// (a date and three words, or a name the user gave); it holds conversation.jsonl (the main
// branch: one message per line), config.toml ([chat] name, model, workspace), a workspace link
// (or directory) to the directory the conversation works in, and branches/*.jsonl and
// views/*.jsonl (other branches and compacted views of the same messages: not read). gptme
// rewrites conversation.jsonl whole at every new message, with the same lines first: it reads as
// a file appended line by line, and an edit or an undo (which change earlier lines) makes the
// caller read it again from its start. A line is Message.to_dict(): {role (user, assistant,
// system), content, timestamp (Python's isoformat of datetime.now(): local time, without zone),
// files, pinned, hide, call_id, metadata {model, cost, usage {input_tokens, output_tokens,
// cache_read_tokens, cache_creation_tokens, reasoning_tokens}}} (older releases kept the token
// counts at the top of metadata; they are read too).
//
// # Token accounting
//
// gptme records, on each assistant message its LLM produced, the usage of that request (when
// the provider reported it), normalized by gptme itself. What includes what:
//
//	input_tokens           the prompt net of the cache: Anthropic's input_tokens as they are;
//	                       for OpenAI-compatible providers gptme subtracts the cached and the
//	                       cache-written tokens from prompt_tokens
//	cache_read_tokens      the part read from the cache
//	cache_creation_tokens  the part written to the cache
//	output_tokens          the answer, reasoning and thinking included
//	reasoning_tokens       the reasoning part of output_tokens, where the provider reports it
//
// so Input = input_tokens, CacheRead = cache_read_tokens, CacheCreation = cache_creation_tokens,
// Output = output_tokens, Reasoning = reasoning_tokens. One token_usage per assistant message with
// usage, id event.ID("gptme", "usage", conversation, timestamp, role): gptme's messages have no id,
// and the content is left out so that a message whose text the user changed with /edit (which keeps
// its timestamp and metadata) is not counted twice; a message without a timestamp takes its message
// key instead, the message key being its timestamp and a hash of its role and content, which the
// ids of its other events use. MessageID is the message key, model metadata.model, priced from the
// pricing table, else at gptme's own metadata.cost, "approximate" ("unknown" at cost 0 when neither
// prices it). A message without usage (a provider that reported none, a stream cut short) yields
// none.
//
// # Actions and messages
//
// gptme's tool calls are in the assistant's text. In the markdown format (the default) a tool
// call is a fenced code block whose language is a tool's block type (```shell, ```ipython or
// ```py, ```save <path>, ```append <path>, ```patch <path>, ```tmux; other languages are code
// shown, not run); in the tool format it is a line @<tool>(<call id>): {<JSON arguments>}. Each is
// an action: id event.ID("gptme", "action", conversation, call id) in the tool format, else
// event.ID("gptme", "action", conversation, message key, block index). Its result is the system
// message that carries its call_id, or, in the markdown format (gptme stops generating at the
// first complete tool call), the first system message after the assistant message; the action is
// emitted again with it, under the same id: it failed when the result's first line starts with
// "error" or "failed" (gptme's own rule for its console), when a command's result says "Return
// code: N" with N not 0, or when the command timed out, was interrupted or denied. Mapping: shell
// and tmux run_command (the command); ipython and py run_command (the code's first line); save
// write_file (the path); append and patch edit_file (the path); a tool-format call of another
// tool is unknown with the raw name.
//
// A user message (not hidden) is a user_prompt action, id event.ID("gptme", "prompt",
// conversation, message key), and a user message. An assistant message is an assistant message
// (its text, the thinking blocks taken out), its <think>/<thinking> blocks thinking messages, its
// tool calls tool_call messages. System messages (the system prompt, tool results, notes gptme
// adds) are no messages. Message ids event.ID("gptme", "message", conversation, message key,
// item), Seq the line's byte offset × 64 plus the item.
//
// # Sessions, times and re-reads
//
// The session is the conversation's directory name; at its first line the parser reads
// config.toml and the workspace link for the session's title ([chat] name), model and working
// directory, and emits a started event (and a title event when it has a name). A message's time
// is its timestamp, read in the local zone (or with its zone when it has one); a message without
// one takes the one before. The State keeps the pending markdown call (its action id and tool
// name, no text) and the last time, so a re-read emits nothing new and a resumed parser pairs a
// result with its call. Targets, errors and outputs are scrubbed and cut to 500 characters, 2 KB
// and 8 KB, message text to 64 KB.
package gptme

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

// Client is the client name gptme events carry (the integrator moves it to pkg/client).
const Client = client.Gptme

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// LogName is the main branch's file in a conversation directory.
const LogName = "conversation.jsonl"

// Adapter finds and reads gptme's conversation logs.
type Adapter struct {
	// Roots are logs directories: each holds one directory per conversation.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var (
	_ transcript.Priced  = (*Adapter)(nil)
	_ transcript.Watched = (*Adapter)(nil)
)

// New returns an adapter reading the given logs directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client returns "gptme".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: the roots (a conversation's directory,
// where its log is rewritten, is the directory of its source).
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// DefaultRoots returns gptme's logs directory on this system (see the package doc).
func DefaultRoots() []string { return defaultRoots(runtime.GOOS) }

func defaultRoots(goos string) []string {
	if d := strings.TrimSpace(os.Getenv("GPTME_LOGS_HOME")); d != "" {
		return []string{transcript.ExpandHome(d)}
	}
	if d := strings.TrimSpace(os.Getenv("XDG_DATA_HOME")); d != "" {
		return []string{filepath.Join(d, "gptme", "logs")}
	}
	home, _ := os.UserHomeDir()
	roots := []string{filepath.Join(home, ".local", "share", "gptme", "logs")}
	if goos == "darwin" {
		roots = append(roots, filepath.Join(home, "Library", "Application Support", "gptme", "logs"))
	}
	return roots
}

// Discover lists the conversation.jsonl of every conversation directory of the roots, sorted by
// path, each under its directory's name as session. A missing root is not an error.
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
			dir := filepath.Join(abs, e.Name())
			if !transcript.IsDir(e, dir) || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(dir, LogName)
			if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || seen[path] {
				continue
			}
			seen[path] = true
			out = append(out, transcript.Source{Client: Client, Path: path, SessionID: e.Name()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one conversation.jsonl, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, pricing.Source(a.Prices, a.CurrentPrices))
}
