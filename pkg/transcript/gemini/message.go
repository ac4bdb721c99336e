package gemini

import (
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
)

// partsBudget is how much of a message's text (and of its thoughts) is decoded: a message's text
// and the margin the scrubber needs.
const partsBudget = maxMessage + 1024

// parts is what message content holds, read as it is walked.
type parts struct {
	text      strings.Builder // text parts (not thoughts), joined by newlines, at most partsBudget bytes
	thoughts  strings.Builder // thought parts (Qwen Code), the same way
	images    int             // inlineData and fileData parts
	responses []response      // functionResponse parts
	calls     []fcall         // functionCall parts
}

// fcall is a functionCall part.
type fcall struct {
	id, name string
	args     []byte
}

// response is a functionResponse part, or a call's result read as one.
type response struct {
	id, name string
	res      result
}

func (ps *parts) addText(v []byte) { addTo(&ps.text, v) }

// addTo adds a JSON string's text to b, after a newline, up to partsBudget bytes in all.
func addTo(b *strings.Builder, v []byte) {
	if b.Len() >= partsBudget {
		return
	}
	s, _, _ := jsonscan.StringPrefix(v, partsBudget-b.Len())
	if s == "" {
		return
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(s)
}

// walkParts reads message content at d[at]: a string, one part, or an array of parts. Anything
// else is skipped.
func walkParts(d []byte, at int, ps *parts) (int, error) {
	if at < len(d) {
		switch d[at] {
		case '{':
			return walkPart(d, at, ps)
		case '[':
			return jsonscan.WalkArray(d, at, func(i int) (int, error) { return walkPart(d, i, ps) })
		}
	}
	v, end, err := value(d, at)
	if err == nil && len(v) > 0 && v[0] == '"' {
		ps.addText(v)
	}
	return end, err
}

// walkPart reads one part: text (not a thought), functionCall, functionResponse, or inline data.
func walkPart(d []byte, at int, ps *parts) (int, error) {
	if d[at] != '{' {
		v, end, err := value(d, at)
		if err == nil && v[0] == '"' {
			ps.addText(v)
		}
		return end, err
	}
	var txt []byte
	thought := false
	end, err := jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "text":
			v, end, err := value(d, i)
			txt = v
			return end, err
		case "thought":
			v, end, err := value(d, i)
			thought, _ = jsonscan.Bool(v)
			return end, err
		case "functionResponse":
			var r response
			end, err := only(d, i, '{', func() (int, error) { return walkResponse(d, i, &r) })
			ps.responses = append(ps.responses, r)
			return end, err
		case "functionCall":
			var c fcall
			end, err := only(d, i, '{', func() (int, error) {
				return jsonscan.WalkObject(d, i, func(k []byte, j int) (int, error) {
					switch string(k[1 : len(k)-1]) {
					case "id":
						v, end, err := value(d, j)
						c.id = jsonscan.Str(v)
						return end, err
					case "name":
						v, end, err := value(d, j)
						c.name = jsonscan.Str(v)
						return end, err
					case "args":
						v, end, err := value(d, j)
						c.args = v
						return end, err
					}
					return -1, nil
				})
			})
			ps.calls = append(ps.calls, c)
			return end, err
		case "inlineData", "fileData":
			ps.images++
		}
		return -1, nil
	})
	if txt != nil && !thought {
		ps.addText(txt)
	} else if txt != nil {
		addTo(&ps.thoughts, txt)
	}
	return end, err
}

// walkResponse reads a functionResponse {id, name, response}.
func walkResponse(d []byte, at int, r *response) (int, error) {
	var b resultBuilder
	end, err := jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "id":
			v, end, err := value(d, i)
			r.id = jsonscan.Str(v)
			return end, err
		case "name":
			v, end, err := value(d, i)
			r.name = jsonscan.Str(v)
			return end, err
		case "response":
			return b.walkResponse(d, i)
		}
		return -1, nil
	})
	r.res = b.result()
	return end, err
}

// message turns one Gemini CLI message into events.
func (p *Parser) message(raw []byte, r *record) ([]event.Event, error) {
	if !p.st.Sure && p.st.ProjectHash != "" {
		p.verify(raw)
	}
	t, ok := p.time(r.Timestamp)
	if !ok {
		return nil, malformed("message %s has no timestamp", r.ID)
	}
	switch r.Type {
	case "user":
		return p.userMessage(r, t), nil
	case "gemini", "qwen":
		return p.modelMessage(r, t), nil
	case "error":
		text := strings.TrimSpace(r.Content.text.String())
		if text == "" {
			return nil, nil
		}
		return []event.Event{p.messageAction(r.ID, t, &event.Action{Type: event.ActionAPIError, Error: clipError(text)})}, nil
	case "info", "warning":
		return nil, nil
	}
	p.stats.CountUnknown("message/" + r.Type)
	return nil, nil
}

// messageAction builds an action keyed by its message (prompts, errors).
func (p *Parser) messageAction(id string, t time.Time, a *event.Action) event.Event {
	a.MessageID = id
	a.AgentID = p.src.AgentID
	a.Transcript = p.src.Path
	ev := p.newEvent(event.KindAction, p.actionID(id), t)
	ev.Action = a
	return ev
}

// continuation are the user turns Gemini CLI sends itself when it decides the model should go on
// (the next-speaker check) or a history must not end with the model.
var continuation = map[string]bool{"Please continue.": true, "System: Please continue.": true}

// userMessage is a prompt, or nothing: function responses sent back to the model, and the
// context Gemini CLI sends itself.
func (p *Parser) userMessage(r *record, t time.Time) []event.Event {
	ps := &r.Content
	text := strings.TrimSpace(ps.text.String())
	if text == "" && len(ps.responses) > 0 {
		return nil
	}
	if strings.HasPrefix(text, "<session_context>") {
		p.guessRoot(contextRoot(text))
		return nil
	}
	if strings.HasPrefix(text, "<hook_context>") || continuation[text] {
		return nil
	}
	target := firstNonEmpty(strings.TrimSpace(r.Display.text.String()), text)
	if target == "" && ps.images > 0 {
		target = "[image]"
	}
	if target == "" {
		return nil
	}
	return []event.Event{p.messageAction(r.ID, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(target)}),
		p.userText(r.ID, target, t)}
}

// modelMessage reports a model message's model, its thinking and reply, its usage, and its tool
// calls, each with its place in the conversation. (The messages come before the usage and the
// calls, as a message first written without its tokens and calls reports them.) Qwen Code's
// messages (type "qwen") read their thoughts by Qwen Code's rule when the total cannot tell (see
// the package doc).
func (p *Parser) modelMessage(r *record, t time.Time) []event.Event {
	evs := append(p.modelEvent(r.Model, t), p.modelReply(r, t)...)
	if u, ok := readUsage(r.Tokens); ok && r.ID != "" {
		beside := r.Type != "qwen" || u.candidates < u.thoughts
		evs = append(evs, p.usageEvent(r.ID, r.Model, u.tokens(beside), t))
	}
	for i := range r.Calls {
		evs = append(evs, p.geminiCall(r, i, &r.Calls[i], t), p.geminiCallMessage(r, i, t))
	}
	return evs
}

// usageEvent is the token_usage of one model message.
func (p *Parser) usageEvent(id, model string, tok event.Tokens, t time.Time) event.Event {
	u := &event.TokenUsage{Tokens: tok, MessageID: id, Model: model, AgentID: p.src.AgentID,
		Reliability: event.ReliabilityApproximate, Origin: "transcript"}
	if cost, known := p.prices().CostAt(model, tok, t); known {
		u.CostUSD = cost
	} else {
		u.Reliability = event.ReliabilityUnknown
	}
	ev := p.newEvent(event.KindTokenUsage, UsageID(p.client, p.idSession(), id), t)
	ev.TokenUsage = u
	return ev
}

// UsageID is the id of the token_usage event of a model message (Gemini CLI: the message id;
// Qwen Code: the assistant record's uuid) in a session, whichever file it is read from.
func UsageID(client, session, messageID string) string {
	return event.ID(client, "usage", session, messageID)
}
