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
//   - Secrets are scrubbed from every string that leaves the parser (targets, errors, outputs).
package transcript

import (
	"errors"

	"github.com/observerhq/observer/pkg/event"
)

// ErrMalformed marks a line that could not be read; the line is skipped and counted.
var ErrMalformed = errors.New("malformed transcript line")

// Source is one transcript file.
type Source struct {
	Client    string `json:"client"`     // claude-code, codex
	Path      string `json:"path"`       // absolute path
	SessionID string `json:"session_id"` // the session the file belongs to; a subagent file's parent session
	AgentID   string `json:"agent_id"`   // the subagent a file holds; empty for a session's own file
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
