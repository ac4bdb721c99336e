// Package transcript is the shape every client's transcript reader takes: an Adapter discovers a
// client's files, and a Parser turns the complete lines of one file into events.
//
// Contract, for every adapter:
//   - Lines are handed to Record whole (without their newline), in file order, each once per
//     parser; the caller (the watcher or `observerctl scan`) only reads newline-terminated lines
//     and owns the cursor. A parser resumed from State after a restart gets the lines after the
//     last one whose events were acknowledged by the bus.
//   - Record never fails the file: a line that is not valid JSON, is not UTF-8, or has an unknown
//     shape returns an error wrapping ErrMalformed (the caller counts and reports it and goes on)
//     or, for a known-unknown record type, no events and no error.
//   - Event ids are deterministic: the same record always yields the same ids, whichever file it
//     is read from, so a replay, a resumed session that copies earlier messages, or a second scan
//     store nothing twice. Two events with the same id are the same fact; the writer merges them
//     (an action's result arriving after its call; a message's usage growing as the client
//     streams it), keeping the final figures.
//   - Token usage follows the accounting rules of DESIGN.md: one token_usage event per model
//     message (id derived from the message id, not the line), input net of cache reads and writes,
//     reasoning inside output.
//   - A reader whose records hold the conversation emits it as message events (event.Message):
//     the prompts the user typed, the replies, thinking in the clear, each tool call in its place
//     (text: the action's target; tool use id: the action's), compaction summaries; not the tool
//     results or the context a client injects. Seq orders a record's messages that share a time
//     and is the same on every read; the package doc says what becomes a message.
//   - Secrets are scrubbed from every string that leaves the parser (targets, errors, outputs,
//     message text).
//   - State holds no text of the transcript (a target, a command, a title, a prompt): it goes into
//     the cursors file. Text a parser must carry to a later line is a Memo, kept in the process's
//     memory and written as a reference; what it needs only to recognize again is a TextHash.
//
// Documents: a Source marked Document is one JSON document that its client rewrites in place
// (Gemini CLI's session-*.json), not lines appended. Its caller hands the whole file to Record at
// offset 0, again whenever the file's size or modification time changed, and only when the file
// stayed the same while it was read (a document caught half-written is read at the next change).
// The parser's State says what it already emitted (by message id), so a re-read emits only what
// changed, and the ids are those of the same messages in any file, so a re-read of a document
// whose State was lost stores nothing twice. A document that does not parse as a whole (caught
// mid-write, or damaged) is ErrMalformed and leaves State as it was: nothing of it is emitted.
// DocumentLine turns a document into the one line a line reader expects.
//
// Databases: a Source marked Database is a client's SQLite database (OpenCode's and Kilo's), which
// is no text at all. Its parser also implements Poller, and its caller calls Poll instead of
// reading the file, whenever the database (or its -wal file) changed size or modification time.
// The parser reads the rows itself, read-only, and its State is the watermark (the newest
// time_updated read per table, and the ids read at it), so a pass reads only rows added or
// updated since the last acknowledged one. A pass that fails (the database locked past its busy
// timeout, caught mid-checkpoint) returns an error, emits nothing and leaves State as it was: the
// next pass reads the same rows again. A row whose data does not decode is counted in
// Stats.Malformed and passed over. A parser that also implements StreamPoller hands its events
// over in batches as it reads the rows, so that a pass over a large database holds one batch, not
// every row and event of the pass; a pass of it that fails may have handed over some events, which
// the next pass, from the same State, hands over again under the same ids.
package transcript

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
)

// ErrMalformed marks a line that could not be read; the line is skipped and counted.
var ErrMalformed = errors.New("malformed transcript line")

// Source is one transcript file.
type Source struct {
	Client    string `json:"client"`     // claude-code, codex
	Path      string `json:"path"`       // absolute path
	SessionID string `json:"session_id"` // the session the file belongs to; a subagent file's parent session
	AgentID   string `json:"agent_id"`   // the subagent a file holds; empty for a session's own file
	// Document marks a file that is one JSON document rewritten in place (see the package doc).
	Document bool `json:"document,omitempty"`
	// Database marks a client's SQLite database, read by its parser's Poll (see the package doc).
	Database bool `json:"database,omitempty"`
}

// Poller is the Parser of a Database source.
type Poller interface {
	// Poll reads the rows added or changed since State and returns their events; State then
	// covers them. On an error nothing is returned and State stays.
	Poll(ctx context.Context) ([]event.Event, error)
}

// StreamPoller is a Poller that hands its events over as it reads (see the package doc).
type StreamPoller interface {
	Poller
	// PollEach reads what Poll reads and calls emit with its events in order, at most max at a
	// time, as it reads the rows; it holds no more than that batch and the row being read. State
	// covers the rows once PollEach returns nil. An error of emit ends the pass and is returned;
	// on any error State stays, and the events emit already had are handed over again by the
	// next pass.
	PollEach(ctx context.Context, max int, emit func([]event.Event) error) error
}

// DocumentLine returns r with every line break turned into a space and a newline at the end, so
// that a reader of newline-terminated lines sees a Document source as one record. JSON allows no
// raw line break inside a string, so the document means the same.
func DocumentLine(r io.Reader) io.Reader {
	return io.MultiReader(&unbreak{r: r}, strings.NewReader("\n"))
}

type unbreak struct{ r io.Reader }

func (u *unbreak) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' || c == '\r' {
			p[i] = ' '
		}
	}
	return n, err
}

// Adapter reads one client's transcripts.
type Adapter interface {
	// Client names the client: claude-code, codex.
	Client() string
	// Discover lists the client's transcript files under its roots (for example
	// ~/.claude/projects and every directory in CLAUDE_CONFIG_DIR). A missing root is not an error.
	Discover() ([]Source, error)
	// NewParser returns a parser for one file. state is what State returned after the last
	// acknowledged line, or nil to start at the beginning of the file.
	NewParser(src Source, state []byte) (Parser, error)
}

// Priced is an Adapter whose parsers price the usage they read.
type Priced interface {
	Adapter
	// UsePrices makes the parsers price usage with the table prices returns when each line is
	// read, so that a long-lived parser follows price changes (internal/prices.Follower.Table).
	UsePrices(prices func() *pricing.Table)
}

// Watched is an Adapter that names the directories a watcher must watch to see its files appear
// and change: its roots, and any directory below them a new file appears in that a watch on the
// roots alone would miss.
type Watched interface {
	Adapter
	WatchDirs() []string
}

// Parser turns one file's lines into events.
type Parser interface {
	// Record parses one complete line found at byte offset off.
	Record(off int64, line []byte) ([]event.Event, error)
	// State returns what the parser needs to resume after the last line it was given (for
	// example Codex's last cumulative token total, the session id read from the first line, the
	// calls still waiting for their results). It is small and JSON.
	State() []byte
	// Stats counts what the parser saw, for reports.
	Stats() Stats
}

// Stats counts a parser's records.
type Stats struct {
	Lines     int64            `json:"lines"`
	Malformed int64            `json:"malformed"`
	Unknown   map[string]int64 `json:"unknown,omitempty"` // record types the parser does not know, by type
	Events    int64            `json:"events"`
}
