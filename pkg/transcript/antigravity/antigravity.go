// Package antigravity reads the conversations of Google Antigravity (client "antigravity"): the
// IDE (a VS Code fork, command `antigravity`) and its terminal agent, the Antigravity CLI (command
// `agy`), into observer events, following the transcript contract. Neither runs here (both need
// Google's servers and sign-in), so the reader is tested on fixtures written here to the format the
// published readers of other tools describe: ccusage's Antigravity CLI adapter
// (ryoppippi/ccusage rust/crates/ccusage/src/adapter/antigravity/*.rs) and agentsview's
// (kenn-io/agentsview internal/parser/antigravity_brain_transcript.go, antigravity_cli.go,
// antigravity.go). Facts only; no code of theirs.
//
// # Files
//
// Both keep their state under ~/.gemini, on Linux and macOS alike (no XDG or Library path): the CLI
// in ~/.gemini/antigravity-cli, the IDE in ~/.gemini/antigravity (and ~/.gemini/antigravity-ide,
// the IDE variant's own directory). Neither honours a published environment variable that moves
// them; $OBSERVER_ANTIGRAVITY_DIRS (a list separated by the OS path list separator) replaces the
// defaults for this reader. Under each:
//
//	brain/<conversation uuid>/.system_generated/logs/transcript.jsonl
//	                               plaintext, one JSON object a line, appended a step at a time:
//	                               the Source this package reads
//	brain/<uuid>/*.md(.metadata.json)  task, plan and walkthrough artifacts (not read)
//	history.jsonl                  the CLI's prompt log {conversationId, display, timestamp (unix
//	                               ms), workspace}: read for the conversations' workspaces
//	conversations/<uuid>.pb        the conversation stream, AES-encrypted: NOT read (the key is not
//	                               the user's to give; agentsview only reads it with one supplied
//	                               through its own ANTIGRAVITY_KEY)
//	conversations/<uuid>.db        newer builds: SQLite whose steps and gen_metadata rows are
//	                               protobuf blobs with no published schema: NOT read (see below)
//	implicit/<uuid>.pb, annotations/<uuid>.pbtxt  encrypted / view state: NOT read
//
// A transcript line is {step_index, source (USER_EXPLICIT, MODEL or SYSTEM), type (USER_INPUT,
// PLANNER_RESPONSE, VIEW_FILE, RUN_COMMAND, CODE_ACTION, GREP_SEARCH, LIST_DIRECTORY,
// ERROR_MESSAGE, CONVERSATION_HISTORY, ...), status (DONE, ...), created_at (RFC 3339), content,
// thinking, tool_calls [{name, args}]}; a step that logged nothing leaves a gap in step_index.
//
// # Token accounting
//
// The transcript holds no token figures, and this reader emits no token_usage at all (no
// estimates: ccusage estimates 1.5 tokens a character, which this package does not do). The
// figures Antigravity keeps are in conversations/<uuid>.db's gen_metadata rows, protobuf without a
// published schema: agentsview decodes them by a heuristic walk (a nested message whose field 1 is
// a varint in [1000, 5000) taken as the usage block, field 2 input net of the cache, field 3 output
// with thinking inside, field 5 cache reads), validated against a third-party decoder's output
// rather than a schema, and the models they name are MODEL_PLACEHOLDER_* ids no price table knows.
// Observer does not read them: Antigravity's usage is unknown here (reliability "unknown", no
// figures). Its traffic goes to Google's own endpoints, fixed in the client: the proxy does not
// see it.
//
// # Actions and messages
//
// A USER_INPUT step from USER_EXPLICIT is a user_prompt action and a user message: the text inside
// <USER_REQUEST>...</USER_REQUEST> when the step wraps it (Antigravity adds its own sections
// beside it, <ADDITIONAL_METADATA> and <USER_SETTINGS_CHANGE>, which are no part of the prompt),
// else the whole text. A <USER_SETTINGS_CHANGE> section "The user changed setting `Model
// Selection` from X to Y. ..." names the model Y (a session event; the display name as
// Antigravity shows it, e.g. "Gemini 3.1 Pro (High)", scrubbed and cut to 100 characters). It is
// read only when the step's content is wholly made of such sections with at most one
// <USER_REQUEST> (the user's own text inside it), so a prompt that merely mentions a model
// selection selects nothing; a step holding a settings change and no request is no prompt. (The
// sections are as real transcripts quoted in public repositories show them, and as agentsview
// reads the model.) A PLANNER_RESPONSE from MODEL is an assistant message (content), a thinking
// message (thinking) and, for each tool call, an action and a tool_call message (id
// event.ID(client, "action", conversation, "<step_index>.<call index>")). Mapping (Antigravity's
// tool names, Windsurf's lineage): view_file, view_file_outline, view_code_item read_file
// (AbsolutePath); write_to_file write_file (TargetFile); replace_file_content,
// multi_replace_file_content edit_file (TargetFile); run_command run_command (CommandLine);
// grep_search search_text (Query " in " SearchPath); find_by_name search_files (Pattern); list_dir
// search_files (DirectoryPath); search_web web_search (query); read_url_content web_fetch (Url);
// invoke_subagent, define_subagent spawn_subagent (name); manage_task todo_update; ask_question
// ask_user; mcp_* and names with "__" mcp_call; anything else unknown with the raw name in Tool.
//
// The transcript carries no call ids: a tool's result is a later step of the kind the tool runs
// (the step types of Antigravity's trajectory: VIEW_FILE for the view_* tools, RUN_COMMAND for
// run_command, CODE_ACTION for the writes and edits, GREP_SEARCH for grep_search, LIST_DIRECTORY
// for list_dir). The parser pairs each such step, in order, with the oldest call of its kind still
// waiting (the waiting calls are kept in State: ids and tool names) and emits the call's action
// again under its id with the outcome: status DONE succeeded, a status naming an error, a failure
// or a cancellation failed, any other none; the step's content is the output. This pairing is
// observer's reading of the step order, not a documented link, and the other tools (find_by_name,
// search_web, read_url_content, MCP tools) get no outcome. An ERROR_MESSAGE step fails the oldest
// waiting call. SYSTEM steps are no message.
//
// # Times, sessions and re-reads
//
// An event's time is its step's created_at, else the last one seen (a step without one before any
// has a time yields nothing). The session is the conversation uuid (the brain directory's name);
// its directory the workspace history.jsonl gives for it (the CLI's; the IDE keeps none). The
// adapter reads each data directory's history.jsonl once into a map of conversation to
// workspace (its last 16 MB; a row longer than 4 MB skipped), and again only when the file's size
// or modification time changes: from where it stopped when the log grew, whole when it shrank or
// was rewritten; so a cold read of many conversations reads the log once. The transcript is read
// line by line as it grows; ids come from the conversation and step_index, so a re-read emits
// the same ids. A line that is not JSON, not an object, or has neither source nor type is
// malformed (transcript.ErrMalformed). Targets, errors, outputs and messages are cut to 500
// characters, 2 KB, 8 KB and 64 KB.
package antigravity

import (
	"errors"
	"github.com/observerhq/observer/pkg/client"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client is the client the adapter names.
const Client = client.Antigravity

// EnvDirs replaces the default data directories (observer's variable; Antigravity honours none).
const EnvDirs = "OBSERVER_ANTIGRAVITY_DIRS"

// Adapter reads Antigravity's brain transcripts.
type Adapter struct {
	// Roots are data directories (~/.gemini/antigravity-cli, ~/.gemini/antigravity).
	Roots []string
	// Prices is kept for transcript.Priced; the transcripts hold no usage to price.
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices.
	CurrentPrices func() *pricing.Table

	mu   sync.Mutex
	hist map[string]*history // by history.jsonl path
}

var _ transcript.Priced = (*Adapter)(nil)
var _ transcript.Watched = (*Adapter)(nil)

// New returns an adapter reading the given data directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// Client names the client.
func (a *Adapter) Client() string { return Client }

// DefaultRoots returns the directories in $OBSERVER_ANTIGRAVITY_DIRS when it is set, else
// ~/.gemini/antigravity-cli, ~/.gemini/antigravity and ~/.gemini/antigravity-ide (the same on
// macOS).
func DefaultRoots() []string {
	if dirs, ok := transcript.EnvDirs(EnvDirs); ok {
		return dirs
	}
	home, _ := os.UserHomeDir()
	g := filepath.Join(home, ".gemini")
	return []string{filepath.Join(g, "antigravity-cli"), filepath.Join(g, "antigravity"), filepath.Join(g, "antigravity-ide")}
}

// WatchDirs lists the brain directories, where each conversation's directory appears.
func (a *Adapter) WatchDirs() []string {
	var out []string
	for _, r := range a.Roots {
		out = append(out, filepath.Join(r, "brain"))
	}
	return out
}

var uuidRe = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// TranscriptPath is where a conversation's brain transcript lives under a data directory.
func TranscriptPath(root, conversation string) string {
	return filepath.Join(root, "brain", conversation, ".system_generated", "logs", "transcript.jsonl")
}

// Discover lists every root's brain/<uuid>/.system_generated/logs/transcript.jsonl, sorted by
// path. A missing root is not an error; a brain directory that cannot be read is reported after the
// others are listed.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	seen := map[string]bool{}
	for _, root := range a.Roots {
		abs, err := filepath.Abs(root)
		if err != nil {
			abs = root
		}
		ents, err := transcript.ReadDir(filepath.Join(abs, "brain"))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			id := e.Name()
			if !uuidRe.MatchString(id) || !transcript.IsDir(e, filepath.Join(abs, "brain", id)) {
				continue
			}
			p := TranscriptPath(abs, id)
			fi, err := os.Stat(p)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
			if !fi.Mode().IsRegular() || seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, transcript.Source{Client: Client, Path: p, SessionID: strings.ToLower(id)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns a parser for one transcript.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(src, state, a.workspace)
}
