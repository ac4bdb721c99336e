// Package ccshape reads records in Claude Code's JSON-lines shape for clients that write them
// under their own names: iFlow CLI (package iflow) and Qoder CLI (package qoder). Each of
// those packages documents its client's format, token semantics and locations; this one holds
// what reading them has in common, so that the two stay one reader and differ only where their
// clients do.
//
// A line is {type, uuid, timestamp (RFC 3339, or unix milliseconds), cwd, gitBranch,
// isSidechain, isMeta, isCompactSummary, message {id, model, content, usage}}. A "user" record's
// content is a string or blocks (text, image, tool_result); an "assistant" record's blocks are
// text, thinking and tool_use, its usage Anthropic's input_tokens, output_tokens,
// cache_read_input_tokens and cache_creation_input_tokens. The events, their ids (namespaced by
// the client's name), the limits on what leaves the parser and the parser's state are the same
// for every client; a Config says what differs: how tools map to actions, how a tool result
// reads, what the client's other record types say, and how a subagent's file finds its session.
//
// A client's record type is a struct that embeds Record and adds the fields its own records
// carry, so that one decoding reads both and a line whose own fields do not decode is as
// malformed as it was when each client declared all its fields.
package ccshape

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what its state keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxBlock   = 63
	maxModels  = 16
	maxPending = 256
)

// Config is what differs between the clients that write this shape. L is the client's record
// type (see Line).
type Config[L any] struct {
	// Client is the client's name: it stamps every event and namespaces every id.
	Client string
	// Tool maps a tool call to its action type and target; rel makes a file path relative to
	// the project.
	Tool func(name string, in map[string]any, rel func(string) string) (event.ActionType, string)
	// Result reads a tool_result block of the record r; alone reports that the block is the
	// record's only tool result, so that what the record says of a result is said of this one.
	// When nil, the content is Claude Code's: a string or text blocks, failed when is_error.
	Result func(b *Block, r L, alone bool) Outcome
	// Other reads a record of a type other than "user" and "assistant": what it says of the
	// session, and whether the client knows the type (an unknown one is counted in
	// Stats.Unknown). "summary" and "system" are known to every client and say nothing. When
	// nil, the client knows no other type.
	Other func(r L) (Meta, bool)
	// Session returns the session id a record names. When set, a file whose records name a
	// session other than its own (the Source's) is a subagent's: its events go to that session,
	// with the file's own id as AgentID. When nil, the Source says both (a client that keeps a
	// subagent's file under its session's directory).
	Session func(r L) string
}

// Outcome is what a tool result says.
type Outcome struct {
	// Tool and Type name the tool when the result does: they stand in for a call the parser did
	// not see.
	Tool string
	Type event.ActionType
	// Output is the result's text.
	Output string
	// Failed marks a failed call; its error is Error, else Output, else "tool failed".
	Failed bool
	Error  string
}

// Meta is what a record of a client's own type says of the session.
type Meta struct {
	Model       string // the model the session uses from now on
	Title       string // the session's title
	TitleByUser bool   // the user gave the title, not the client
}

// Record is one line, the fields every client writes alike.
type Record struct {
	Type             string          `json:"type"`
	UUID             string          `json:"uuid"`
	Timestamp        json.RawMessage `json:"timestamp"`
	Cwd              string          `json:"cwd"`
	GitBranch        string          `json:"gitBranch"`
	IsSidechain      bool            `json:"isSidechain"`
	IsMeta           bool            `json:"isMeta"`
	IsCompactSummary bool            `json:"isCompactSummary"`
	Message          *message        `json:"message"`
}

// Line is a client's record type: a pointer to a struct that embeds Record, which gives it
// the method the parser reaches the common fields by.
type Line[R any] interface {
	*R
	base() *Record
}

func (r *Record) base() *Record { return r }

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *usage          `json:"usage"`
}

type usage struct {
	Input         count `json:"input_tokens"`
	Output        count `json:"output_tokens"`
	CacheRead     count `json:"cache_read_input_tokens"`
	CacheCreation count `json:"cache_creation_input_tokens"`
}

// count reads a token count (transcript.Count: a number or a numeric string, else 0).
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	*c = count(transcript.Count(b))
	return nil
}

// Block is one block of a message's content.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// BlockText is the text of a tool result's blocks, a line each: their text, "[image]" for an
// image.
func BlockText(blocks []Block) string {
	var parts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			parts = append(parts, b.Text)
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// resultText reads Claude Code's tool_result content: a string, or text blocks, else the JSON
// itself.
func resultText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) == nil {
		return BlockText(blocks)
	}
	return string(raw)
}
