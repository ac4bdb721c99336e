package codex

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// Limits on a message.
const (
	maxMessage = 64 << 10 // bytes of a message's text
	maxBlock   = 63       // a line's blocks beyond this share its last Seq
)

// messageText is a message's text as it leaves the parser: trimmed, scrubbed, cut to maxMessage.
func messageText(s string) string { return clipBytes(strings.TrimSpace(s), maxMessage) }

// messageEvent returns the message event m, block block of the current line.
func (p *Parser) messageEvent(id string, t time.Time, block int, m *event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, id, t)
	m.Seq = p.st.Line*64 + int64(min(block, maxBlock))
	ev.Message = m
	return ev
}

// userMessage is a prompt's message, keyed like its user_prompt action (k): what the user typed,
// without an IDE's wrapper. An empty prompt has none.
func (p *Parser) userMessage(k idKey, raw, messageID string, t time.Time) []event.Event {
	text := messageText(promptText(raw))
	if text == "" {
		return nil
	}
	return []event.Event{p.messageEvent(k.id(event.KindMessage), t, 0,
		&event.Message{Role: event.RoleUser, Text: text, MessageID: messageID})}
}

// textParts returns the text of each part of a content array ("" for a part without text), or
// a string content as one part.
func textParts(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		return []string{jsonText(raw)}
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return nil
	}
	out := make([]string, len(parts))
	for i, c := range parts {
		out[i] = c.Text
	}
	return out
}

// blocks yields one message of role per part of parts that has text, keyed by the parts' content
// in the current context and the part's index.
func (p *Parser) blocks(role, messageID string, parts []string, t time.Time, hasTime bool) ([]event.Event, error) {
	texts := make([]string, len(parts))
	has := false
	for i, s := range parts {
		if texts[i] = messageText(s); texts[i] != "" {
			has = true
		}
	}
	if !has {
		return nil, nil
	}
	if err := needTime(hasTime, role); err != nil {
		return nil, err
	}
	k := p.contentKey("message/"+role, strings.Join(parts, "\x00"))
	var evs []event.Event
	for i, text := range texts {
		if text == "" {
			continue
		}
		evs = append(evs, p.messageEvent(k.id(event.KindMessage, strconv.Itoa(i)), t, i,
			&event.Message{Role: role, Text: text, MessageID: messageID, Model: p.st.Model}))
	}
	return evs, nil
}

// assistant is a response_item message with role assistant: one assistant message per text part.
func (p *Parser) assistant(it *responseItem, t time.Time, hasTime bool) ([]event.Event, error) {
	return p.blocks(event.RoleAssistant, it.ID, textParts(it.Content), t, hasTime)
}

// reasoning is a response_item reasoning: one thinking message per summary part, or, when it has
// no summary text, per part of its raw content. Encrypted content alone is no text.
func (p *Parser) reasoning(it *responseItem, t time.Time, hasTime bool) ([]event.Event, error) {
	parts := textParts(it.Summary)
	if strings.TrimSpace(strings.Join(parts, "")) == "" {
		parts = textParts(it.Content)
	}
	return p.blocks(event.RoleThinking, it.ID, parts, t, hasTime)
}

// callMessage places a tool call in the conversation: its tool, its id and its action's target.
// A call with neither tool nor id has none.
func (p *Parser) callMessage(id string, it *responseItem, a *event.Action, t time.Time) []event.Event {
	if a.Tool == "" && a.ToolUseID == "" {
		return nil
	}
	return []event.Event{p.messageEvent(id, t, 0, &event.Message{Role: event.RoleToolCall, Tool: a.Tool,
		ToolUseID: a.ToolUseID, Text: a.Target, MessageID: it.ID, Model: p.st.Model})}
}

// callMessageID is the id of the message of the call callID.
func (p *Parser) callMessageID(callID string) string {
	return event.ID(Client, string(event.KindMessage), p.rootID(), callID)
}

// summaryMessage is a compaction's summary, keyed like its context_compacted action (k).
func (p *Parser) summaryMessage(k idKey, raw string, t time.Time) []event.Event {
	text := messageText(raw)
	if text == "" {
		return nil
	}
	return []event.Event{p.messageEvent(k.id(event.KindMessage), t, 0, &event.Message{Role: event.RoleSummary, Text: text})}
}
