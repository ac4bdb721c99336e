// Package opencode reads the SQLite databases of OpenCode (npm opencode-ai, 1.x) and of its fork
// Kilo CLI (npm @kilocode/cli, 7.x) into observer events, following the transcript contract for
// Database sources.
//
// # Files
//
// Both keep their state in one SQLite database in their XDG data directory, on Linux and macOS
// alike (the xdg-basedir convention, not ~/Library): $XDG_DATA_HOME/opencode/opencode.db and
// $XDG_DATA_HOME/kilo/kilo.db, $XDG_DATA_HOME defaulting to ~/.local/share. A build of another
// release channel names its database <name>-<channel>.db beside it, so Discover lists every
// <name>*.db of the directory. The client writes in WAL mode and updates messages and parts in
// place as they stream (time_updated tells). Tables read: session (id, parent_id for a subagent's
// session, directory, title, time_created, time_updated), message and part (id, session_id, message_id, time_created,
// time_updated, data: the message's or part's JSON).
//
// # Reading while the client writes
//
// A pass opens the database read-only (package sqliteread, which package crush uses too) and never
// takes a write lock. When a -wal file exists (the client runs, or crashed), it opens it with
// mode=ro and a busy timeout: the connection shares the client's -shm wal-index and sees every
// committed row. When there is no -wal file (the client is not running and the database is
// checkpointed), mode=ro would create empty -wal and -shm files and leave them behind, so the pass
// opens it with immutable=1 instead, and afterwards checks that no -wal appeared and that the
// file's size and modification time are unchanged; if they changed (the client started meanwhile)
// the pass is thrown away and read again with mode=ro. All reads of a pass are one read
// transaction, so they see one snapshot. A pass that fails (busy past the timeout, a schema that is
// not this one) returns its error and leaves the watermark: the next pass, at the next change or
// poll, reads the same rows again.
//
// # Watermark
//
// The parser's State is the watermark: per table (message, part) the largest time_updated read
// and the ids read at exactly that millisecond, and for sessions the largest time_created. A pass
// reads the rows with time_updated >= the watermark and passes over the ids it already read at
// it, so a row updated in place (a message whose tokens arrive when it finishes, a tool part going
// from running to completed) is read again and yields the same event ids with the final figures,
// which the writer merges. A client clock that goes backwards hides the rows written meanwhile.
// Every pass reads the whole session table (it is small), for the parents and the titles: the
// state keeps, per root session whose title was reported, a short hash of that title, and drops
// the sessions no longer in the table.
//
// # Token accounting
//
// An assistant message's data.tokens is what OpenCode's session code made of the AI SDK usage
// (checked against the real OpenCode 1.18.33 through observer-fakeapi, which answered
// prompt_tokens 1120 with 1000 cached, completion_tokens 45 with 10 reasoning, and got {input:
// 120, output: 35, reasoning: 10, cache: {read: 1000, write: 0}, total: 1165}):
//
//	input       prompt tokens net of cache reads and writes (OpenCode subtracts them for the
//	            providers that include them, OpenAI and compatibles; Anthropic's are already net)
//	output      generated tokens WITHOUT the reasoning tokens
//	reasoning   reasoning tokens
//	cache.read  prompt tokens read from the cache
//	cache.write prompt tokens written to the cache
//	total       input + output + reasoning + cache.read + cache.write
//
// Observer's buckets: Input = input, Output = output + reasoning, Reasoning = reasoning,
// CacheRead = cache.read, CacheCreation = cache.write. One token_usage event per assistant message
// with non-zero tokens, id event.ID(client, "usage", message id). The message is the sum of its
// steps (step-finish parts carry each step's figures; one step is one API request, and the
// message's figures are their sum), so it is counted once, at the message. The cost is observer's
// table at the message's time for modelID, else the client's own data.cost, else 0 with
// Reliability "unknown". The records do not keep the API's response id (chatcmpl-..., resp_...,
// msg_...), so TokenUsage.MessageID stays empty and the proxy's turn of the same request is
// matched by session, model, time and figures; the session id is the client's own ses_..., the
// one it sends in X-Session-Id, so proxy turns and these records share a session.
//
// # Actions and sessions
//
// A tool part is an action, id event.ID(client, "action", part id), with the normalized type of
// its tool, the raw name in Tool, the target from state.input, the callID, the success (state
// status completed or error; nil while pending or running), the error, the output (8 KB),
// duration (state.time end - start) and the model of its message. Mapping: read read_file; write
// write_file; edit, multiedit, patch, apply_patch edit_file; bash run_command; grep search_text;
// glob, list, ls search_files; webfetch web_fetch; websearch, codesearch web_search; task
// spawn_subagent; todowrite todo_update; question ask_user; anything else unknown (an MCP tool is
// named <server>_<tool>, which cannot be told from a built-in). A subtask part (a command run as a
// subagent) is a spawn_subagent action; a text part of a user message (not synthetic) a
// user_prompt; a compaction part a context_compacted action; an assistant message with an error
// an api_error action. Other parts (step-start, step-finish, reasoning, assistant text, file,
// patch, snapshot, agent, retry) yield no action (reasoning and assistant text are messages, see
// Conversation); unknown part types are counted in Stats.Unknown.
// A session yields a started session event (cwd, start time, the database as transcript path).
// A root session's title column is its title (checked against the clients' code and the real
// OpenCode 1.18.33 and Kilo CLI 7.7.7 through observer-fakeapi): the client creates a session with
// the placeholder "New session - <ISO time>" ("Child session - " for a subagent's), which is no
// title; after the first user message it asks a small model for a title and sets it, but only over
// the placeholder; a rename (/rename, the TUI's or an SDK's session.update) sets it the same way.
// Either writes the column in place without moving time_updated (the client's setTitle keeps the
// session's times), so a pass reports a title when it differs from the last one reported for the
// session (the state above), as a session event with State "" and Title, at the row's time_updated,
// id event.ID(client, "session", session id, "title", time_updated, title). The row does not say
// who set it; a title that replaces one already reported is the user's (TitleByUser), since the
// client never generates over a title; the first one seen is the client's (a rename before the
// generated title came, or after it failed, is reported as the client's). A subagent's session
// title ("... (@explore subagent)") is not the session's.
// A subagent's session (parent_id set) belongs to its root session: its events carry the root's
// session id and the subagent's session id as AgentID, as other adapters do. The project is
// project.Root of the root session's directory. Targets, errors and outputs are scrubbed.
//
// # Conversation
//
// A part of the conversation is a message event, id event.ID(client, "message", part id), at the
// part's time_created, with its message's id, its model (an assistant's), and AgentID and
// Sidechain for a subagent's session, its text scrubbed and kept to 64 KB: a text part of a user
// message (not synthetic, not ignored: the client's own text, such as a file it read for an
// @-mention or the "continue" it adds after a compaction) is a user message; a text part of an
// assistant message is its reply, or a summary when the message is a compaction's summary
// (data.summary true); a reasoning part with text is thinking (an encrypted one has none); a tool
// part is a tool_call once it runs (Tool the client's name, ToolUseID its callID, Text its
// action's target); a subtask part a tool_call of Tool "subtask" (its action's target). Nothing
// else is: step-start/-finish, file, patch, snapshot, agent, retry, and the compaction part (its
// summary is the next message's text). Seq is the message's time_created × 64 plus the part's
// index among its message's parts by id (the client's order), stable across passes. A message is
// stored once, as first read, so a text or reasoning part is a message only once it is complete
// (its time.end, which the client sets when its stream ends or is cut off, or its message
// completed) and a tool part once its input is there (running, completed, error): a later pass
// reads it then.
//
// Malformed data (not JSON, not an object) is counted in Stats.Malformed and passed over: the
// watermark moves past it, and the ingest reports it.
package opencode

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Client names.
const (
	Client     = client.OpenCode
	KiloClient = client.Kilo
)

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Adapter finds and reads one client's database.
type Adapter struct {
	client string
	name   string // database base name: opencode, kilo
	// Dirs are the data directories holding the database.
	Dirs []string
	// Prices prices token usage; nil means pricing.Default().
	Prices *pricing.Table
	// CurrentPrices, when set, replaces Prices (internal/prices.Follower.Table).
	CurrentPrices func() *pricing.Table
}

var _ transcript.Priced = (*Adapter)(nil)

// UsePrices sets CurrentPrices (transcript.Priced).
func (a *Adapter) UsePrices(prices func() *pricing.Table) { a.CurrentPrices = prices }

// New returns the OpenCode adapter reading the given data directories.
func New(dirs []string) *Adapter { return &Adapter{client: Client, name: "opencode", Dirs: dirs} }

// NewKilo returns the Kilo CLI adapter reading the given data directories.
func NewKilo(dirs []string) *Adapter { return &Adapter{client: KiloClient, name: "kilo", Dirs: dirs} }

// DataHome returns $XDG_DATA_HOME, else ~/.local/share.
func DataHome() string {
	if d := strings.TrimSpace(os.Getenv("XDG_DATA_HOME")); d != "" && filepath.IsAbs(d) {
		return d
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share")
	}
	return filepath.Join(".local", "share")
}

// DefaultDirs returns OpenCode's data directory.
func DefaultDirs() []string { return []string{filepath.Join(DataHome(), "opencode")} }

// DefaultKiloDirs returns Kilo CLI's data directory.
func DefaultKiloDirs() []string { return []string{filepath.Join(DataHome(), "kilo")} }

// Client returns the client name.
func (a *Adapter) Client() string { return a.client }

// WatchDirs lists the directories to watch: the data directories.
func (a *Adapter) WatchDirs() []string { return append([]string(nil), a.Dirs...) }

func (a *Adapter) prices() *pricing.Table { return transcript.PriceTable(a.Prices, a.CurrentPrices) }

// Discover lists the client's databases: <dir>/<name>.db and <dir>/<name>-<channel>.db.
func (a *Adapter) Discover() ([]transcript.Source, error) {
	var out []transcript.Source
	var errs []error
	for _, dir := range a.Dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if n != a.name+".db" && !(strings.HasPrefix(n, a.name+"-") && strings.HasSuffix(n, ".db")) {
				continue
			}
			path := filepath.Join(dir, n)
			if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			abs, err := filepath.Abs(path)
			if err != nil {
				abs = path
			}
			out = append(out, transcript.Source{Client: a.client, Path: abs, Database: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, errors.Join(errs...)
}

// NewParser returns the parser of one database, resumed from its watermark when state is not nil.
func (a *Adapter) NewParser(src transcript.Source, state []byte) (transcript.Parser, error) {
	return newParser(a, src, state), nil
}
