package cline

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// maxMessage bounds a message's text in bytes (scrubbed before the cut).
const maxMessage = 64 << 10

// maxBlock is the number of blocks of one record that get a Seq of their own.
const maxBlock = 63

// message returns a message event: id event.ID(client, "message", session, key, block), Seq
// record×64 + block.
func (p *Parser) message(key string, record, block int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(p.client, string(event.KindMessage), p.st.Session, key, strconv.Itoa(block)), t)
	m.Seq = int64(record)*64 + int64(min(block, maxBlock))
	ev.Message = &m
	return ev
}

// textMessage is message for a role with text: none when the text is empty.
func (p *Parser) textMessage(role, key string, record, block int, t time.Time, text, msgID, model string) []event.Event {
	text = clipMessage(text)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(key, record, block, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

// callMessage places an action's tool call in the conversation: its text is the action's target.
func (p *Parser) callMessage(a *event.Action, key string, record, block int, t time.Time) event.Event {
	tool := a.Tool
	if tool == "" && a.ToolUseID == "" {
		tool = string(a.Type)
	}
	return p.message(key, record, block, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: tool,
		ToolUseID: a.ToolUseID, MessageID: a.MessageID, Model: a.Model})
}

func clipMessage(s string) string { return transcript.Clip(strings.TrimSpace(s), maxMessage) }
