package pi

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// message is an AgentMessage: the members of every role this package reads.
type message struct {
	Role      string
	Content   []byte  // the content when it is not an array (a string)
	Blocks    []block // the content's blocks when it is an array
	Timestamp []byte

	// assistant
	Provider, Model, ResponseModel, ResponseID string
	Usage                                      []byte
	StopReason, ErrorMessage                   string

	// toolResult
	ToolCallID, ToolName string
	IsError              bool

	// bashExecution
	Command, Output []byte
	ExitCode        []byte
	Cancelled       bool

	// custom
	CustomType string
	Details    []byte
}

// block is one content block: text, thinking, toolCall or image.
type block struct {
	Type     string
	ID, Name string
	Args     []byte // a toolCall's arguments, raw
	Text     []byte // a text block's text, a raw JSON string
	Thinking []byte // a thinking block's text, a raw JSON string
	Data     int    // the size of an image's data
}

func (m *message) walk(d []byte, at int) (int, error) {
	return jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "role":
			return str(d, i, &m.Role)
		case "content":
			if d[i] != '[' {
				return raw(d, i, &m.Content)
			}
			return walkBlocks(d, i, &m.Blocks)
		case "timestamp":
			return raw(d, i, &m.Timestamp)
		case "provider":
			return str(d, i, &m.Provider)
		case "model":
			return str(d, i, &m.Model)
		case "responseModel":
			return str(d, i, &m.ResponseModel)
		case "responseId":
			return str(d, i, &m.ResponseID)
		case "usage":
			return raw(d, i, &m.Usage)
		case "stopReason":
			return str(d, i, &m.StopReason)
		case "errorMessage":
			return str(d, i, &m.ErrorMessage)
		case "toolCallId":
			return str(d, i, &m.ToolCallID)
		case "toolName":
			return str(d, i, &m.ToolName)
		case "isError":
			return boolean(d, i, &m.IsError)
		case "cancelled":
			return boolean(d, i, &m.Cancelled)
		case "command":
			return raw(d, i, &m.Command)
		case "output":
			return raw(d, i, &m.Output)
		case "exitCode":
			return raw(d, i, &m.ExitCode)
		case "customType":
			return str(d, i, &m.CustomType)
		case "details":
			return raw(d, i, &m.Details)
		}
		return -1, nil
	})
}

// walkBlocks walks the array of content blocks at d[at] into *dst.
func walkBlocks(d []byte, at int, dst *[]block) (int, error) {
	return jsonscan.WalkArray(d, at, func(j int) (int, error) {
		if d[j] != '{' {
			return -1, nil
		}
		var b block
		end, err := b.walk(d, j)
		*dst = append(*dst, b)
		return end, err
	})
}

func (b *block) walk(d []byte, at int) (int, error) {
	return jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "type":
			return str(d, i, &b.Type)
		case "id":
			return str(d, i, &b.ID)
		case "name":
			return str(d, i, &b.Name)
		case "arguments":
			return raw(d, i, &b.Args)
		case "text":
			return raw(d, i, &b.Text)
		case "thinking":
			return raw(d, i, &b.Thinking)
		case "data":
			var v []byte
			end, err := raw(d, i, &v)
			b.Data = max(len(v)-2, 0)
			return end, err
		}
		return -1, nil
	})
}

// MessageTime reads a message timestamp (unix milliseconds, as pi writes them).
func MessageTime(raw []byte) (time.Time, bool) {
	f, ok := jsonscan.Float(raw)
	// 1971 to the end of year 9999: a later time would not encode as JSON (RFC 3339 stops there).
	if !ok || f < 31536000000 || f >= 253402300800000 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}

// Duration returns the milliseconds from start to end when that is positive and under a week,
// else 0.
func Duration(start, end time.Time) int64 {
	if d := end.UnixMilli() - start.UnixMilli(); d > 0 && d < 7*24*3600*1000 {
		return d
	}
	return 0
}

func (r *Reader) entryMessage(s *Session, e *entry, line []byte, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.Msg == nil {
		return nil, r.malformed("message entry without a message object")
	}
	m := e.Msg
	mt, hasMsgTime := MessageTime(m.Timestamp)
	if _, ok := transcript.ParseTime(jsonscan.Str(e.Timestamp)); !ok && hasMsgTime {
		t, hasTime = mt, true // an entry without a time of its own: the message's
		s.LastTime = t.UnixNano()
	}
	// key names the message wherever it is copied (a fork, a clone, a file imported into a
	// database): its own timestamp, else the entry's, else its bytes.
	key := ""
	switch {
	case hasMsgTime:
		key = string(m.Timestamp)
	case jsonscan.Str(e.Timestamp) != "":
		key = jsonscan.Str(e.Timestamp)
	default:
		key = "h:" + shortHash(string(line))
	}
	switch m.Role {
	case "user":
		if err := r.needTime(hasTime, "user message"); err != nil {
			return nil, err
		}
		return r.prompt(s, m, key, t), nil
	case "assistant":
		if err := r.needTime(hasTime, "assistant message"); err != nil {
			return nil, err
		}
		return r.assistant(s, m, key, t), nil
	case "toolResult":
		if err := r.needTime(hasTime, "tool result"); err != nil {
			return nil, err
		}
		end := t
		if hasMsgTime {
			end = mt
		}
		return r.toolResult(s, m, t, end), nil
	case "bashExecution":
		if err := r.needTime(hasTime, "bash execution"); err != nil {
			return nil, err
		}
		return r.bashExecution(s, m, key, t), nil
	case "custom":
		if r.Custom != nil {
			return r.Custom(s, m.CustomType, m.Details, key, t, hasTime)
		}
		return nil, nil // extensions' messages: not the user's, not the model's
	case "hookMessage", "branchSummary", "compactionSummary":
		return nil, nil // extension messages and summaries: not the user's, not the model's
	}
	r.Stats.CountUnknown("message/" + m.Role)
	return nil, nil
}

// prompt reads a user message: its text is the prompt.
func (r *Reader) prompt(s *Session, m *message, key string, t time.Time) []event.Event {
	text := m.text(maxText)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	id := event.ID(r.Client, string(event.KindAction), "prompt", key, shortHash(text))
	full := text
	if len(text) >= maxText {
		full = m.text(maxMessage + 1024)
	}
	return []event.Event{r.Action(s, id, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text)}),
		r.Message(s, event.ID(r.Client, string(event.KindMessage), "user", key, shortHash(text)), t, 0,
			&event.Message{Role: event.RoleUser, Text: clipMessage(full)})}
}

// text joins the text of a message's content (a string, or text and image blocks), decoding at
// most max bytes of each text; an image is "[image]".
func (m *message) text(max int) string {
	if len(m.Content) > 0 {
		s, _, _ := jsonscan.StringPrefix(m.Content, max)
		return s
	}
	var parts []string
	for _, b := range m.Blocks {
		switch b.Type {
		case "text":
			if s, _, _ := jsonscan.StringPrefix(b.Text, max); s != "" {
				parts = append(parts, s)
			}
		case "image":
			parts = append(parts, "[image]")
		}
	}
	return strings.Join(parts, "\n")
}

// assistant reads a model message: its model, tool calls, usage and how it stopped.
func (r *Reader) assistant(s *Session, m *message, key string, t time.Time) []event.Event {
	evs := r.modelEvent(s, m.Model, key, t)
	for i := range m.Blocks {
		b := &m.Blocks[i]
		switch b.Type {
		case "toolCall":
			call := r.toolCall(s, m, key, b, i, t)
			a := call.Action
			evs = append(evs, call, r.Message(s, event.ID(r.Client, string(event.KindMessage), a.ToolUseID, key), t, i,
				&event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool, ToolUseID: a.ToolUseID,
					MessageID: m.ResponseID, Model: m.Model}))
		case "text", "thinking":
			role, raw := event.RoleAssistant, b.Text
			if b.Type == "thinking" {
				role, raw = event.RoleThinking, b.Thinking
			}
			text, _, _ := jsonscan.StringPrefix(raw, maxMessage+1024)
			if strings.TrimSpace(text) == "" {
				continue // a thinking block of a signature alone: encrypted, nothing to read
			}
			id := event.ID(r.Client, string(event.KindMessage), key, m.ResponseID, strconv.Itoa(i), shortHash(text))
			evs = append(evs, r.Message(s, id, t, i, &event.Message{Role: role, Text: clipMessage(text),
				MessageID: m.ResponseID, Model: m.Model}))
		}
	}
	if ev, ok := r.usage(s, m, key, t); ok {
		evs = append(evs, ev)
	}
	switch m.StopReason {
	case "error":
		id := event.ID(r.Client, string(event.KindAction), "error", key, m.Provider, m.Model)
		evs = append(evs, r.Action(s, id, t, &event.Action{Type: event.ActionAPIError, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	case "aborted":
		id := event.ID(r.Client, string(event.KindAction), "aborted", key, m.Provider, m.Model)
		evs = append(evs, r.Action(s, id, t, &event.Action{Type: event.ActionTurnAborted, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	}
	return evs
}

// toolCall reads a toolCall block of an assistant message: the tool it runs (Tools.Unwrap).
func (r *Reader) toolCall(s *Session, m *message, key string, b *block, i int, t time.Time) event.Event {
	callID := b.ID
	if callID == "" {
		callID = "#" + strconv.Itoa(i) // no id: its place in the message
	}
	tool, args := b.Name, b.Args
	if r.Tools.Unwrap != nil {
		tool, args = r.Tools.Unwrap(b.Name, b.Args)
	}
	aid := event.ID(r.Client, string(event.KindAction), callID, key)
	a := &event.Action{Type: r.Tools.Type(tool), Tool: tool, Target: r.Target(s, tool, args), ToolUseID: callID,
		MessageID: m.ResponseID, InputHash: HashInput(b.Args), Model: m.Model}
	s.Pending.Renew(Call{CallID: callID, Key: aid, Type: a.Type, Tool: tool, Inner: tool != b.Name, Target: transcript.Memo(a.Target),
		Msg: m.ResponseID, Model: m.Model, Time: t.UnixMilli()}, maxPending)
	return r.Action(s, aid, t, a)
}

// Find returns the call of a tool-call id, waiting for its result or answered lately.
func (s *Session) Find(callID string) (Call, bool) { return s.find(callID, false) }

// find returns the call of a tool-call id; done marks it answered. The last maxDone answered
// calls stay known, so that a result read again (pi rewrote the file, see the package doc) gets
// its call's id once more.
func (s *Session) find(callID string, done bool) (Call, bool) {
	for i := len(s.Pending) - 1; i >= 0; i-- {
		if c := &s.Pending[i]; c.CallID == callID {
			found := *c
			if done && !c.Done {
				c.Done = true
				s.pruneDone()
			}
			return found, true
		}
	}
	return Call{}, false
}

// pruneDone forgets the oldest calls that have their results beyond maxDone.
func (s *Session) pruneDone() {
	done := 0
	for _, c := range s.Pending {
		if c.Done {
			done++
		}
	}
	if done <= maxDone {
		return
	}
	out := s.Pending[:0]
	for _, c := range s.Pending {
		if c.Done && done > maxDone {
			done--
			continue
		}
		out = append(out, c)
	}
	s.Pending = out
}

// toolResult reads a toolResult message: the outcome of its call, under the call's id.
func (r *Reader) toolResult(s *Session, m *message, t, end time.Time) []event.Event {
	var a event.Action
	var id string
	if c, ok := s.find(m.ToolCallID, true); ok {
		id = c.Key
		a = event.Action{Type: c.Type, Tool: c.Tool, Target: string(c.Target), MessageID: c.Msg, Model: c.Model,
			DurationMs: Duration(time.UnixMilli(c.Time), end)}
	} else {
		id = event.ID(r.Client, string(event.KindAction), m.ToolCallID)
		a = event.Action{Type: r.Tools.Type(m.ToolName), Tool: m.ToolName}
	}
	a.ToolUseID = m.ToolCallID
	outcome(&a, m.Content, m.Blocks, m.IsError)
	return []event.Event{r.Action(s, id, t, &a)}
}

// Outcome sets a's Success, Error, Output and OutputSize from a tool result's content (raw: a
// string, or an array of text and image blocks).
func Outcome(a *event.Action, content []byte, isError bool) {
	var blocks []block
	if len(content) > 0 && content[0] == '[' {
		_, _ = walkBlocks(content, 0, &blocks)
		content = nil
	}
	outcome(a, content, blocks, isError)
}

func outcome(a *event.Action, content []byte, blocks []block, isError bool) {
	ok := !isError
	a.Success = &ok
	out, size := resultText(content, blocks)
	a.Output, a.OutputSize = clipOutput(out), size
	if isError {
		a.Error = clipError(out)
	}
}

// resultText reads a tool result's content (text and image blocks, or a string): the text to
// keep (a little more than maxOutput, for the scrubber's margin) and the full size.
func resultText(content []byte, blocks []block) (string, int64) {
	const keep = maxOutput + 1024
	if len(content) > 0 {
		s, n, _ := jsonscan.StringPrefix(content, keep)
		return s, n
	}
	var sb strings.Builder
	var size int64
	for _, b := range blocks {
		if sb.Len() > 0 && sb.Len() < keep {
			sb.WriteByte('\n')
		}
		switch b.Type {
		case "text":
			s, n, _ := jsonscan.StringPrefix(b.Text, max(keep-sb.Len(), 0))
			sb.WriteString(s)
			size += n
		case "image":
			if sb.Len() < keep {
				sb.WriteString("[image]")
			}
			size += int64(b.Data)
		}
	}
	return sb.String(), size
}

// bashExecution reads a command the user ran with "!" (or "!!", kept out of the context).
func (r *Reader) bashExecution(s *Session, m *message, key string, t time.Time) []event.Event {
	cmd, _, _ := jsonscan.StringPrefix(m.Command, maxText)
	out, size, _ := jsonscan.StringPrefix(m.Output, maxOutput+1024)
	a := &event.Action{Type: event.ActionRunCommand, Tool: "bashExecution", Target: clipTarget(cmd),
		Output: clipOutput(out), OutputSize: size}
	code, hasCode := jsonscan.Int(m.ExitCode)
	switch {
	case m.Cancelled:
		f := false
		a.Success, a.Error = &f, "cancelled"
	case hasCode:
		ok := code == 0
		a.Success = &ok
		if !ok {
			a.Error = "exit code " + strconv.FormatInt(code, 10)
		}
	}
	id := event.ID(r.Client, string(event.KindAction), "bash", key, shortHash(cmd))
	return []event.Event{r.Action(s, id, t, a), r.Message(s, event.ID(r.Client, string(event.KindMessage), "bash", key, shortHash(cmd)),
		t, 0, &event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool})}
}

// Message returns the event of a message of session s, block i of the record being read: its
// Seq is the record's place (Reader.Place) × 64 + i, and for a subagent's session it carries
// AgentID and Sidechain.
func (r *Reader) Message(s *Session, id string, t time.Time, i int, m *event.Message) event.Event {
	m.Seq = r.Place*64 + int64(i)
	m.AgentID = s.agentID()
	m.Sidechain = s.Root != ""
	ev := r.newEvent(s, event.KindMessage, id, t)
	ev.Message = m
	return ev
}

func clipMessage(s string) string { return transcript.Clip(s, maxMessage) }
