package gemini

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// Blocks of a model message, in the order they are placed: its thinking, its reply, its calls.
const (
	blockThinking = 0
	blockText     = 1
	blockCalls    = 2
)

// nextSeq sets the Seq of the message a .jsonl line holds: the next index in the conversation,
// or the same as the line before when it rewrites the same message.
func (p *Parser) nextSeq(id string) {
	if id == "" || id != p.st.MsgLast {
		p.st.MsgN++
		p.st.MsgLast = id
	}
	p.seq = p.st.MsgN * 64
}

// messageText is a message's text as it leaves the parser: trimmed, scrubbed, cut to maxMessage.
func messageText(s string) string { return transcript.Clip(strings.TrimSpace(s), maxMessage) }

// conversationEvent returns the message m, block block of the message being read, keyed by the
// message's id and what the block is.
func (p *Parser) conversationEvent(t time.Time, block int, m *event.Message, key ...string) event.Event {
	id := event.ID(append([]string{p.client, string(event.KindMessage), p.idSession()}, key...)...)
	ev := p.newEvent(event.KindMessage, id, t)
	m.Seq = p.seq + int64(min(block, 63))
	m.AgentID = p.src.AgentID
	ev.Message = m
	return ev
}

// userText is a prompt's message: what its user_prompt action targets, uncut.
func (p *Parser) userText(id, text string, t time.Time) event.Event {
	return p.conversationEvent(t, 0, &event.Message{Role: event.RoleUser, Text: messageText(text), MessageID: id}, id)
}

// modelReply is a Gemini CLI model message's thoughts, as one thinking message, and its text.
func (p *Parser) modelReply(r *record, t time.Time) []event.Event {
	thinking := joinThoughts(r.Thoughts)
	if s := r.Content.thoughts.String(); s != "" {
		thinking = strings.TrimSpace(thinking + "\n\n" + s)
	}
	return p.replyMessages(r.ID, r.Model, thinking, r.Content.text.String(), t)
}

// geminiCallMessage places the tool call i of a Gemini CLI model message, keyed like its action.
func (p *Parser) geminiCallMessage(r *record, i int, t time.Time) event.Event {
	c := &r.Calls[i]
	key := c.ID
	if key == "" {
		key = r.ID + "#" + strconv.Itoa(i)
	}
	return p.callMessage(r.ID, r.Model, key, c.ID, c.Name, c.Args, i, t)
}

// replyMessages are a model message's thinking and reply, each when it has text.
func (p *Parser) replyMessages(id, model, thinking, text string, t time.Time) []event.Event {
	var evs []event.Event
	if s := messageText(thinking); s != "" {
		evs = append(evs, p.conversationEvent(t, blockThinking,
			&event.Message{Role: event.RoleThinking, Text: s, MessageID: id, Model: model}, id, "thinking"))
	}
	if s := messageText(text); s != "" {
		evs = append(evs, p.conversationEvent(t, blockText,
			&event.Message{Role: event.RoleAssistant, Text: s, MessageID: id, Model: model}, id, "text"))
	}
	return evs
}

// callMessage places a tool call: keyed like its action (key), its text the action's target.
func (p *Parser) callMessage(msgID, model, key, toolUseID, name string, args []byte, i int, t time.Time) event.Event {
	return p.conversationEvent(t, blockCalls+i, &event.Message{Role: event.RoleToolCall, Tool: name, ToolUseID: toolUseID,
		Text: clipTarget(p.target(name, args)), MessageID: msgID, Model: model}, key)
}

// joinThoughts reads Gemini CLI's thoughts [{subject, description}] as one text: each thought as
// the model wrote it ("**subject**" and the description), a blank line between.
func joinThoughts(raw []byte) string {
	if len(raw) == 0 || raw[0] != '[' {
		return ""
	}
	var b strings.Builder
	jsonscan.Elements(raw, func(v []byte) bool {
		var subject, desc string
		jsonscan.Members(v, func(k, v []byte) bool {
			switch {
			case jsonscan.Key(k, "subject"):
				subject, _, _ = jsonscan.StringPrefix(v, partsBudget)
			case jsonscan.Key(k, "description"):
				desc, _, _ = jsonscan.StringPrefix(v, partsBudget)
			}
			return true
		})
		s := strings.TrimSpace(desc)
		if subject = strings.TrimSpace(subject); subject != "" {
			s = strings.TrimSpace("**" + subject + "**\n\n" + s)
		}
		if s != "" {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(s)
		}
		return b.Len() < partsBudget
	})
	return b.String()
}
