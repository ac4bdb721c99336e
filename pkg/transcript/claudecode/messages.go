package claudecode

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// maxMessage bounds the text of a message, in bytes.
const maxMessage = 64 << 10

// clipMessage scrubs a message's text and keeps at most maxMessage bytes of it.
func clipMessage(s string) string { return clipBytes(s, maxMessage) }

// messageSeq orders the messages of a file: the line's byte offset times 64 plus the block's
// index in the line. Offsets grow along the file and are the same on every read, so the order is
// stable across re-reads and resumed parsers; a line is longer than its number of blocks, so two
// lines never share a number.
func messageSeq(off int64, block int) int64 { return off*64 + int64(block) }

// newMessage builds a message event of a line: its agent and sidechain flag are the line's.
func (p *Parser) newMessage(l *line, id string, off int64, block int, t time.Time, m *event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, id, t)
	m.Seq = messageSeq(off, block)
	m.AgentID = p.agentID(l)
	m.Sidechain = l.IsSidechain
	ev.Message = m
	return ev
}

// blockMessageID is the id of the message event of a line's block: the line's uuid (or content
// hash) and the block's index, the same in every file that holds the line.
func blockMessageID(l *line, raw []byte, block int) string {
	return event.ID(Client, string(event.KindMessage), lineKey(l, raw), strconv.Itoa(block))
}

// lineMessage is the message of a whole user line: a prompt, a subagent's task, a compaction
// summary. Its message id is the line's uuid, as Claude Code names the message.
func (p *Parser) lineMessage(l *line, raw []byte, off int64, t time.Time, role, text string) event.Event {
	return p.newMessage(l, blockMessageID(l, raw, 0), off, 0, t,
		&event.Message{Role: role, Text: clipMessage(text), MessageID: l.UUID})
}

// replyMessage is the message of an assistant text or thinking block; false when the block has no
// text (a thinking block whose reasoning is only a signature, an empty reply).
func (p *Parser) replyMessage(l *line, raw []byte, m *message, b *block, off int64, i int, t time.Time) (event.Event, bool) {
	role, text := event.RoleAssistant, b.Text
	if b.Type == "thinking" {
		role, text = event.RoleThinking, b.Thinking
	}
	if strings.TrimSpace(text) == "" {
		return event.Event{}, false
	}
	return p.newMessage(l, blockMessageID(l, raw, i), off, i, t,
		&event.Message{Role: role, Text: clipMessage(text), MessageID: m.ID, Model: m.Model}), true
}

// callMessage places a tool call in the conversation: its text is the call's target, its id the
// tool_use id (as the call's action is keyed, so a block written twice is one message).
func (p *Parser) callMessage(l *line, m *message, a *event.Action, off int64, i int, t time.Time) event.Event {
	id := event.ID(Client, string(event.KindMessage), "tool_use", a.ToolUseID)
	return p.newMessage(l, id, off, i, t, &event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool,
		ToolUseID: a.ToolUseID, MessageID: m.ID, Model: m.Model})
}
