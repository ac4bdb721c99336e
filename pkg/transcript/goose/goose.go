// Package goose reads the sessions of goose, Block's open-source agent (crates goose and goose-cli
// of github.com/block/goose), into observer events, following the transcript contract for
// Database sources (its SQLite session store) and Document sources (its older JSONL files).
//
// Sources consulted (no corpus file exists; the tests run on records written by hand to these
// sources' formats): block/goose crates/goose/src/session/session_manager.rs (schema version 9 at
// commit dbec1655, CREATE TABLE sessions and messages, add_message, replace_conversation),
// crates/goose/src/session/migrations.rs (schema version 13 at commit 865e4a03: goose_mode,
// thread_id, archived_at, project_id, accumulated_cost), crates/goose/src/session/storage.rs (the
// JSONL files of releases before the database, commit 01a262b2), crates/goose/src/config/paths.rs
// (GOOSE_PATH_ROOT, commit 0780e228), crates/goose/src/conversation/message.rs and
// tool_result_serde.rs (the message JSON, commit 05132966), crates/goose-mcp/src/developer (tool
// names and arguments: shell, text_editor, and the newer file_write, file_edit and tree), the
// agent's update_session_metrics and crates/goose/src/providers/formats/anthropic.rs (what the
// token counts mean, commit 00f85252).
//
// # Files
//
// goose keeps its sessions in <data dir>/sessions: the data directory is $GOOSE_PATH_ROOT/data
// when GOOSE_PATH_ROOT names an absolute path, else the XDG data directory of the etcetera crate's
// app strategy, on Linux and macOS alike: $XDG_DATA_HOME/goose (when absolute), else
// ~/.local/share/goose. DefaultRoots lists those, and on macOS also ~/Library/Application
// Support/Block/goose/sessions, the directory goose's own paths.rs names for older installations
// (a root that does not exist is skipped). On Windows goose uses %APPDATA%\Block\goose\data, which
// observer does not run on.
//
// Current releases keep one SQLite database, sessions.db (WAL mode, written through sqlx). Tables
// read: sessions (id "YYYYMMDD_N", name or the older description, user_set_name, session_type,
// working_dir, created_at, updated_at, the token columns below, provider_name, model_config_json,
// accumulated_cost) and messages (id INTEGER AUTOINCREMENT, message_id, session_id, role,
// content_json, created_timestamp in Unix seconds, metadata_json). Columns a later migration added
// are read only where they exist; before migration 7 a message had no message_id, and goose's
// migration gives it 'msg_' || session_id || '_' || id, which this reader computes the same way.
// Releases before the database wrote <session id>.jsonl per session: a first line of metadata
// (working_dir, description, message_count, the token fields) and then one message per line,
// rewriting the whole file at every save. goose imports them into the database the first time it
// creates it and leaves them on disk. Discover lists sessions.db as a Database source and every
// *.jsonl as a Document source (its session id is the file name without .jsonl).
//
// # Reading while goose writes
//
// A pass opens the database read-only with package sqliteread (mode=ro with a busy timeout while a
// -wal file exists, else immutable=1 with a check that nothing changed), in one read transaction.
// The parser's State is the watermark: the largest messages.id read, and per session a short
// fingerprint of the title and token figures last reported. goose only inserts message rows
// (replace_conversation, used when a conversation is compacted, edited or imported, deletes a
// session's rows and inserts them again under new ids); every pass reads the rows past the
// watermark and the whole sessions table (it is small), so a session's figures, rewritten in place,
// are reported when they change. Re-inserted messages yield the ids they had (below), so a
// replaced conversation stores nothing twice. A pass that fails leaves the watermark as it was; a
// row whose JSON does not decode is counted in Stats.Malformed and passed over.
//
// # Token accounting
//
// goose records tokens per session only: no message row carries usage. After each model request
// the agent adds the provider's usage to the session's accumulated_input_tokens,
// accumulated_output_tokens and accumulated_total_tokens (input_tokens, output_tokens and
// total_tokens hold the last request's figures, the context's size). goose's Usage counts input
// INCLUDING cache reads and cache writes (for Anthropic it adds cache_read_input_tokens and
// cache_creation_input_tokens to input_tokens, Usage::from_cache_exclusive_input; OpenAI-style
// prompt_tokens include the cached ones already), and output includes reasoning. The split is not
// stored, so observer's buckets are Input = accumulated_input_tokens (gross of cache),
// Output = accumulated_output_tokens, and no cache or reasoning figures. One token_usage event per
// session, id event.ID("goose", "usage", session id), at the session's created_at (so a replay
// gives the same time), carrying the latest cumulative figures: the writer keeps the figures with
// the largest output, so the stored row grows with the session. When the accumulated columns are
// empty (sessions from releases before them), input_tokens and output_tokens are taken, which
// undercount a session of several requests. Reliability is "approximate". The cost is goose's own
// accumulated_cost when it is positive (schema 13 and later; goose knows the cache split), else
// observer's price for the session's model at the session's start, which charges cached input at
// the full input price (an upper bound when the provider cached), else 0 with Reliability
// "unknown". A subagent's session (session_type sub_agent or specialist) is a session of its own
// with its own figures: nothing links it to its parent in the schema, so it is reported on its own.
//
// # Actions and sessions
//
// A message's content is an array of typed items. A toolRequest (or frontendToolRequest) item is
// an action, id event.ID("goose", "action", session id, tool call id), with the raw tool name in
// Tool ("<extension>__<tool>": developer__shell, developer__text_editor), its type, target and
// input hash; the toolResponse item of a later user message, same id, carries Success (status
// success and not isError), Error, Output (the text items, 8 KB) and DurationMs (from the two
// messages' created seconds, when both are read in one pass). A call goose could not parse
// (toolCall status error) is a failed action of type unknown. Mapping, on the part after "__":
// shell run_command (target the command); text_editor by its command: view read_file, write
// write_file, str_replace, insert, undo_edit and edit edit_file (target the path relative to the
// project); file_write write_file; file_edit edit_file; tree search_files; todo_write todo_update;
// web_search web_search; web_scrape web_fetch; create_task, execute_task and delegate
// spawn_subagent; any other tool of a non-builtin extension mcp_call; the rest unknown. A user
// message's text items (and "[image]" for an image) are a user_prompt, id event.ID("goose",
// "prompt", session id, created, text hash), unless goose marked it invisible to the user
// (metadata.userVisible false: summaries and instructions it injects); a conversationCompacted item
// is a context_compacted action. Text of the assistant, thinking, confirmations, notifications and
// images yield no action (see Conversation); an unknown item type or role is counted in Stats.Unknown.
//
// # Conversation
//
// A message's items are messages of the conversation, at the message's created time, Seq its place
// (the row's id, or the file's line) × 64 plus the item's index, text scrubbed and kept to 64 KB,
// ids keyed by session, created time and the text's hash or the tool call's id (so the rows
// replace_conversation inserts again, and a file and its import, are the same messages): a user
// message visible to the user is a user message (its text items joined, "[image]" for an image,
// as its user_prompt); an assistant message's text items, when visible to the user, are assistant
// messages and its thinking (and reasoning) items with text thinking, with the session's model; a
// toolRequest item is a tool_call (Tool, ToolUseID and Text its action's). A compaction's summary
// is the message hidden from the user (metadata userVisible false) that goose follows with its
// continuation, an assistant message hidden too that starts "Your context was compacted": that
// summary is a summary message. Other hidden messages (goose's instructions, memories, the
// continuation), tool responses, redacted thinking, confirmations and notifications are none. A
// subagent's session is a conversation of its own (nothing links it to its parent).
//
// A session yields a started session event (cwd = working_dir, start time, model from
// model_config_json's model_name, the database or file as transcript path), and its name a title
// session event whenever it changes (TitleByUser from user_set_name; the placeholder names goose
// gives a session before naming it, such as "CLI Session", are not titles). Events carry source
// observer-watch, client goose, the session id and the project: project.Root of the working
// directory. Targets, errors and outputs are scrubbed and cut to 500 characters, 2 KB and 8 KB.
//
// # JSONL files
//
// A .jsonl file is read whole (a Document: goose rewrote it in place) into the same events with the
// same ids, so a session present in both the file and the database is stored once. Its first line
// is the metadata (the accumulated token fields, working_dir, description as the title), the rest
// are messages ({id, role, created, content, metadata}). The file has no start time: the first
// message's created is taken. The State keeps how many messages were reported and the fingerprint
// of the figures, so a re-read reports only what changed; a file that does not parse as a whole is
// malformed and reported again at its next change.
package goose

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

// Client is the client name goose events carry.
const Client = client.Goose

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// EnvPathRoot is the variable goose reads for a root holding its config, data and state
// directories.
const EnvPathRoot = "GOOSE_PATH_ROOT"

// DBName is the session database's file name in a sessions directory.
const DBName = "sessions.db"

// Adapter finds and reads goose's session directories.
type Adapter struct {
	// Roots are sessions directories: they hold sessions.db and the older *.jsonl files.
	Roots []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns an adapter reading the given sessions directories.
func New(roots []string) *Adapter { return &Adapter{Roots: roots} }

// Client returns "goose".
func (a *Adapter) Client() string { return Client }

// WatchDirs lists the directories a watcher should watch: the roots.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Roots...) }

// DefaultRoots returns the sessions directories goose writes to (see the package doc):
// $GOOSE_PATH_ROOT/data/sessions when that is absolute, the XDG data directory's goose/sessions,
// and on macOS ~/Library/Application Support/Block/goose/sessions.
func DefaultRoots() []string {
	var roots []string
	if r := strings.TrimSpace(os.Getenv(EnvPathRoot)); r != "" && filepath.IsAbs(r) {
		roots = append(roots, filepath.Join(r, "data", "sessions"))
	}
	home, _ := os.UserHomeDir()
	data := strings.TrimSpace(os.Getenv("XDG_DATA_HOME"))
	if data == "" || !filepath.IsAbs(data) {
		data = filepath.Join(home, ".local", "share")
	}
	roots = append(roots, filepath.Join(data, "goose", "sessions"))
	if runtime.GOOS == "darwin" && home != "" {
		roots = append(roots, filepath.Join(home, "Library", "Application Support", "Block", "goose", "sessions"))
	}
	return transcript.DedupePaths(roots)
}

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// Discover lists sessions.db (a Database source) and the *.jsonl session files (Document sources)
// of every root. A missing root is not an error.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	for _, root := range a.Roots {
		entries, err := transcript.ReadDir(root)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(root, name)
			if !transcript.IsFile(e, path) {
				continue
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			switch {
			case name == DBName:
				out = append(out, transcript.Source{Client: Client, Path: abs, Database: true})
			case strings.HasSuffix(name, ".jsonl") && len(name) > len(".jsonl"):
				out = append(out, transcript.Source{Client: Client, Path: abs, Document: true,
					SessionID: strings.TrimSuffix(name, ".jsonl")})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns the parser of a database (a transcript.Poller) or of a JSONL file, resumed
// from state when it is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	if src.Database {
		return newDBParser(a, src, state), nil
	}
	return newFileParser(a, src, state), nil
}
