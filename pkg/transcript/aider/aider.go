// Package aider reads the chat history files of Aider (the aider-chat Python package) into
// observer events, following the transcript contract for line sources.
//
// Sources consulted (no corpus file exists; the tests run on records written by hand to these
// sources' formats): Aider-AI/aider aider/io.py (commit 0045641d: append_chat_history,
// user_input, ai_output, tool_output, confirm_ask, and the session header of InputOutput's
// constructor), aider/coders/base_coder.py (calculate_and_show_tokens_and_cost and
// show_usage_report: the Tokens line; apply_updates: "Applied edit to"; handle_shell_commands:
// "Running"; get_announcements: "Model:"/"Models:" at 16856bb4, "Main model:" in later releases),
// aider/commands.py (cmd_run, cmd_test and the "!" alias), aider/utils.py (format_tokens),
// aider/args.py (the default file names at the git root), and prompt_toolkit's
// FileHistory.store_string (the input history's format). The Tokens line's wording was read in
// copies of base_coder.py of recent releases in the code corpus.
//
// # Files
//
// Aider writes two files in the directory it runs in, the root of the git repository by default:
// .aider.chat.history.md (the chat, Markdown, appended) and .aider.input.history (what the user
// typed, prompt_toolkit's history file). Other paths can be given with --chat-history-file
// (AIDER_CHAT_HISTORY_FILE) and --input-history-file. Aider keeps no global index of the
// repositories it ran in, so the adapter is given directories to look in (New: the project paths
// observer already knows plus a configured list) and explicit files (Adapter.Files, and
// DefaultFiles: $AIDER_CHAT_HISTORY_FILE when it is absolute). Discover lists the chat history
// file of each directory; the input history beside it (same directory, .aider.input.history) is
// read only to date prompts (below): it holds what the chat history holds of the user's typing,
// without the replies, the usage or the edits, and an input history alone is not read.
//
// # Format
//
// Each run of aider appends "# aider chat started at YYYY-MM-DD HH:MM:SS" (local time, no zone)
// after a blank line; that line starts a session. Then, each preceded by a blank line: the user's
// input as "#### " lines (a multi-line input is consecutive "#### " lines with no blank line between
// them; an empty input is "#### <blank>"), the assistant's reply as plain Markdown, and aider's own
// output as "> " lines (tool_output, tool_warning, tool_error, confirm_ask with the answer). Lines
// end in two spaces (a Markdown line break), which are dropped. The lines read:
//
//	"#### <text>"                          a user prompt (its lines up to the next line of another kind)
//	"#### /run <cmd>", "#### !<cmd>"       a command the user ran: run_command, Tool "/run"
//	"#### /test <cmd>"                     a test command: run_command, Tool "/test"
//	"> Running <cmd>"                      a shell command the model suggested and the user approved:
//	                                       run_command, Tool "shell"
//	"> Applied edit to <path>"             an edit aider applied: edit_file, Success true, target the
//	                                       path (relative to the repository root, as aider prints it)
//	"> Tokens: <sent> sent[, <w> cache write][, <h> cache hit], <recv> received.
//	   [Cost: $<m> message, $<s> session.]"  the usage of one model reply: token_usage
//	"> Main model: <model> with ..."       the model (older releases: "> Model: <model> with ...", or
//	                                       "> Models: <model> with ..., weak model ...")
//
// A command's output is printed to the terminal, not to the file, so run_command actions carry no
// output or exit status. A reply's text, aider's other output, and other slash commands' lines
// yield nothing but the user_prompt of what was typed. An assistant reply that contains a Markdown
// heading of level 4 ("#### ") cannot be told from a prompt by its line; a "#### " line that
// follows reply text (with no "> " line since) is taken as reply text, so a prompt typed after a
// reply that printed no "> " line at all (an interrupted reply) is missed. Blank lines are not
// handed to the parser (internal/ingest skips them), so the parser tells consecutive lines from
// lines with a blank line between them by their offsets; it takes CRLF line ends (aider's
// --line-endings crlf, or Windows) when the file's first header sits at offset 2.
//
// # Messages
//
// The conversation is one event.Message per message: what the user typed (a prompt's "#### "
// lines, cut to 4 KB as the prompt is; a slash command or "!" command too) a user message, and
// each reply (its lines from the first reply line to the next "> " line or session header: its
// "#### " headings, code and blank lines included, the lines' trailing spaces dropped; cut to 64
// KB) an assistant message with the session's model. Aider's own "> " lines (its output, the
// usage, edits and commands it ran, questions and answers) are not messages: the actions read
// from them have no tool_call message, as aider records no tool call. Ids event.ID("aider",
// "message", session id, "prompt"|"command"|"reply", k) for the k-th of its kind (a prompt's and
// a command's k are their action's), at the time their actions get, Seq the offset of the first
// line × 64. A reply being read is a transcript.Memo in State with its first line's offset,
// read again from the file by another process. Texts are scrubbed.
//
// # Token accounting
//
// The Tokens line is aider's message_tokens_sent and message_tokens_received for one reply (the
// sum of its requests when a reply needed several), printed by format_tokens: exact below 1,000,
// else rounded ("2.3k" below 10,000, "12k" above; older releases printed "2,345"; "M" is read too).
// sent is litellm's prompt_tokens, which counts cache reads (OpenAI, DeepSeek, and Anthropic in
// litellm), plus the cache writes aider adds for Anthropic; observer's buckets are therefore
// CacheRead = cache hit, CacheCreation = cache write, Input = sent - cache hit - cache write (never
// below 0), Output = received (reasoning inside). The figures are aider's rounded ones, so every
// token_usage is Reliability "approximate". Cost: aider's own message cost from the line when it
// printed one (it does so when it knows the model's price), else observer's price for the model of
// the last "Main model" line at the event's time, else 0 with Reliability "unknown". In architect
// mode the editor model's replies print their own Tokens lines under the main model's name.
//
// # Ids, sessions and times
//
// A session's id is event.ID("aider", "session", file path, header time, n), n counting earlier
// sessions of the file with the same header time (two aider processes started in the same second
// in one repository). Events are keyed by the session and their place in it, kind by kind:
// event.ID("aider", "prompt"|"usage"|"edit"|"command", session id, k) for the k-th of that kind,
// so a re-read of the appended file yields the same ids, and so does reading it after older
// sessions were cut from its top. A moved repository (another path) is a new file. Each header
// yields a started session event (cwd and project: the file's directory and project.Root of it),
// a model line whose model differs from the last a session event carrying it.
//
// The chat history has no time but the session's start. A prompt is dated by the input history:
// the first entry ("# <local time with microseconds>" then "+<line>" lines) after the session's
// start and after the last entry matched, whose text is the prompt's; the events that follow (the
// usage, edits, commands and reply of the prompt) carry the time of the last dated prompt, else the
// session's start. A prompt typed as a "{ ... }" block is stored line by line in the input history
// and is not matched. Times are read in the machine's local zone (aider writes no zone).
//
// # State
//
// The parser's State (small JSON) keeps the session's header time, id counters, start, the time
// of the last dated prompt and of the input entry it matched, the model, where the prompt being
// read starts (its text, cut to 4 KB, is a transcript.Memo: read again from there by another
// process), likewise where the reply being read starts (its text a Memo, cut to 64 KB), the
// reading mode, the end offset of the last line, and the line-end kind.
// Targets are scrubbed and cut to 500 characters.
package aider

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client name Aider events carry.
const Client = client.Aider

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// File names aider writes in the directory it runs in.
const (
	ChatHistoryFile  = ".aider.chat.history.md"
	InputHistoryFile = ".aider.input.history"
)

// EnvChatHistoryFile is the variable aider reads for --chat-history-file.
const EnvChatHistoryFile = "AIDER_CHAT_HISTORY_FILE"

// Adapter finds and reads aider's chat history files.
type Adapter struct {
	// Roots are directories aider may have run in: each is looked at for .aider.chat.history.md.
	Roots []string
	// Files are chat history files at other paths.
	Files []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table

	inputs inputCache
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter looking for chat history files in the given directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// DefaultFiles returns $AIDER_CHAT_HISTORY_FILE when it names an absolute path (a leading ~
// expanded); nil otherwise.
func DefaultFiles() []string {
	f := transcript.ExpandHome(strings.TrimSpace(os.Getenv(EnvChatHistoryFile)))
	if f == "" || !filepath.IsAbs(f) {
		return nil
	}
	return []string{filepath.Clean(f)}
}

// Client returns "aider".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: the roots and the explicit files'
// directories.
func (a *Adapter) WatchDirs() []string {
	out := append([]string(nil), a.Roots...)
	for _, f := range a.Files {
		out = append(out, filepath.Dir(f))
	}
	return transcript.DedupePaths(out)
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// Discover lists the chat history file of every root that has one, and every explicit file that
// exists. A missing root or file is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	seen := map[string]bool{}
	var out []transcript.Source
	add := func(path string) {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			abs = path
		}
		if !seen[abs] {
			seen[abs] = true
			out = append(out, transcript.Source{Client: Client, Path: abs})
		}
	}
	for _, root := range a.Roots {
		if root = strings.TrimSpace(root); root != "" {
			add(filepath.Join(transcript.ExpandHome(root), ChatHistoryFile))
		}
	}
	for _, f := range a.Files {
		if f = strings.TrimSpace(f); f != "" {
			add(transcript.ExpandHome(f))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// NewParser returns a parser for one chat history file, resumed from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
