package openclaw

import (
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/transcript"
)

// nestedToolType is the customType of the custom message OpenClaw writes for a tool that ran
// inside another call: a catalog tool run through Tool Search's tool_call, or a tool called from
// Code Mode's guest program.
const nestedToolType = "openclaw.nested-tool.v1"

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
			return jsonscan.WalkArray(d, i, func(j int) (int, error) {
				if d[j] != '{' {
					return -1, nil
				}
				var b block
				end, err := b.walk(d, j)
				m.Blocks = append(m.Blocks, b)
				return end, err
			})
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
		case "data":
			var v []byte
			end, err := raw(d, i, &v)
			b.Data = max(len(v)-2, 0)
			return end, err
		}
		return -1, nil
	})
}

// msgTime reads a message's own timestamp (unix milliseconds).
func msgTime(raw []byte) (time.Time, bool) {
	f, ok := jsonscan.Float(raw)
	if !ok || f < 31536000000 || f > 9e15 {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(f)).UTC(), true
}

func (p *Parser) message(s *sess, e *entry, line []byte, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.Msg == nil {
		return nil, malformed("message entry without a message object")
	}
	m := e.Msg
	mt, hasMsgTime := msgTime(m.Timestamp)
	if _, ok := transcript.ParseTime(jsonscan.Str(e.Timestamp)); !ok && hasMsgTime {
		t, hasTime = mt, true // an entry without a time of its own: the message's
		s.LastTime = t.UnixNano()
	}
	// key names the message wherever it is copied (a legacy file and its import, a fork): its
	// own timestamp, else the entry's, else its bytes.
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
		if err := needTime(hasTime, "user message"); err != nil {
			return nil, err
		}
		return p.prompt(s, m, key, t), nil
	case "assistant":
		if err := needTime(hasTime, "assistant message"); err != nil {
			return nil, err
		}
		return p.assistant(s, m, key, t), nil
	case "toolResult":
		if err := needTime(hasTime, "tool result"); err != nil {
			return nil, err
		}
		end := t
		if hasMsgTime {
			end = mt
		}
		return p.toolResult(s, m, t, end), nil
	case "bashExecution":
		if err := needTime(hasTime, "bash execution"); err != nil {
			return nil, err
		}
		return p.bashExecution(s, m, key, t), nil
	case "custom":
		if m.CustomType != nestedToolType {
			return nil, nil // OpenClaw's and extensions' notes: not the user's, not the model's
		}
		if err := needTime(hasTime, "nested tool"); err != nil {
			return nil, err
		}
		return p.nestedTool(s, m, key, t), nil
	case "hookMessage", "branchSummary", "compactionSummary":
		return nil, nil // extension messages and summaries: not the user's, not the model's
	}
	p.stats.CountUnknown("message/" + m.Role)
	return nil, nil
}

// prompt reads a user message: its text is the prompt.
func (p *Parser) prompt(s *sess, m *message, key string, t time.Time) []event.Event {
	text := m.text(maxText)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	id := event.ID(Client, string(event.KindAction), "prompt", key, shortHash(text))
	return []event.Event{p.action(s, id, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text)})}
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
func (p *Parser) assistant(s *sess, m *message, key string, t time.Time) []event.Event {
	evs := p.modelEvent(s, m.Model, key, t)
	for i := range m.Blocks {
		if m.Blocks[i].Type == "toolCall" {
			evs = append(evs, p.toolCall(s, m, key, &m.Blocks[i], i, t))
		}
	}
	if ev, ok := p.usage(s, m, key, t); ok {
		evs = append(evs, ev)
	}
	switch m.StopReason {
	case "error":
		id := event.ID(Client, string(event.KindAction), "error", key, m.Provider, m.Model)
		evs = append(evs, p.action(s, id, t, &event.Action{Type: event.ActionAPIError, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	case "aborted":
		id := event.ID(Client, string(event.KindAction), "aborted", key, m.Provider, m.Model)
		evs = append(evs, p.action(s, id, t, &event.Action{Type: event.ActionTurnAborted, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	}
	return evs
}

// toolCall reads a toolCall block of an assistant message. A tool_call wrapper is the catalog
// tool it runs.
func (p *Parser) toolCall(s *sess, m *message, key string, b *block, i int, t time.Time) event.Event {
	callID := b.ID
	if callID == "" {
		callID = "#" + strconv.Itoa(i) // no id: its place in the message
	}
	tool, args := unwrap(b.Name, b.Args)
	aid := event.ID(Client, string(event.KindAction), callID, key)
	a := &event.Action{Type: ToolType(tool), Tool: tool, Target: clipTarget(p.target(s, tool, args)), ToolUseID: callID,
		MessageID: m.ResponseID, InputHash: hashInput(b.Args), Model: m.Model}
	s.remember(pending{CallID: callID, Key: aid, Type: a.Type, Tool: tool, Inner: tool != b.Name, Target: a.Target,
		Msg: m.ResponseID, Model: m.Model, Time: t.UnixMilli()})
	return p.action(s, aid, t, a)
}

// remember keeps a call for its result. Beyond maxPending calls it forgets the oldest.
func (s *sess) remember(c pending) {
	for i := range s.Pending {
		if s.Pending[i].CallID == c.CallID {
			s.Pending = append(s.Pending[:i], s.Pending[i+1:]...)
			break
		}
	}
	s.Pending = append(s.Pending, c)
	if n := len(s.Pending); n > maxPending {
		s.Pending = append(s.Pending[:0:0], s.Pending[n-maxPending:]...)
	}
}

// find returns the call of a tool-call id; done marks it answered. The last maxDone answered
// calls stay known, so that a result read again (after a rewrite) gets its call's id once more.
func (s *sess) find(callID string, done bool) (pending, bool) {
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
	return pending{}, false
}

// pruneDone forgets the oldest calls that have their results beyond maxDone.
func (s *sess) pruneDone() {
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

// callAction is the action a tool result completes: its call's, or one of its own when the call
// is unknown.
func (p *Parser) callAction(s *sess, callID, tool string, end time.Time, done bool) (string, event.Action) {
	if c, ok := s.find(callID, done); ok {
		a := event.Action{Type: c.Type, Tool: c.Tool, Target: c.Target, MessageID: c.Msg, Model: c.Model}
		if d := end.UnixMilli() - c.Time; d > 0 && d < 7*24*3600*1000 {
			a.DurationMs = d
		}
		return c.Key, a
	}
	return event.ID(Client, string(event.KindAction), callID), event.Action{Type: ToolType(tool), Tool: tool}
}

// toolResult reads a toolResult message: the outcome of its call, under the call's id.
func (p *Parser) toolResult(s *sess, m *message, t, end time.Time) []event.Event {
	id, a := p.callAction(s, m.ToolCallID, m.ToolName, end, true)
	a.ToolUseID = m.ToolCallID
	ok := !m.IsError
	a.Success = &ok
	out, size := resultText(m.Content, m.Blocks)
	a.Output, a.OutputSize = clipOutput(out), size
	if m.IsError {
		a.Error = clipError(out)
	}
	return []event.Event{p.action(s, id, t, &a)}
}

// nested is the details of a nested-tool message.
type nested struct {
	CallID, Tool, Parent string
	Input, Result        []byte
	IsError              bool
	Started, Done        []byte
}

func readNested(raw []byte) (n nested, ok bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return n, false
	}
	err := jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "toolCallId":
			n.CallID = jsonscan.Str(v)
		case "toolName":
			n.Tool = jsonscan.Str(v)
		case "parentToolCallId":
			n.Parent = jsonscan.Str(v)
		case "input":
			n.Input = v
		case "result":
			n.Result = v
		case "isError":
			n.IsError, _ = jsonscan.Bool(v)
		case "startedAt":
			n.Started = v
		case "timestamp":
			n.Done = v
		}
		return true
	})
	return n, err == nil && n.Tool != ""
}

// nestedTool reads a nested-tool message: a catalog tool that ran through a tool_call wrapper
// completes the wrapper's action; a tool run from a Code Mode program is an action of its own.
func (p *Parser) nestedTool(s *sess, m *message, key string, t time.Time) []event.Event {
	n, ok := readNested(m.Details)
	if !ok {
		p.stats.CountUnknown("message/custom/" + nestedToolType + " (no tool)")
		return nil
	}
	start, hasStart := msgTime(n.Started)
	done, hasDone := msgTime(n.Done)
	var id string
	var a event.Action
	if c, ok := s.find(n.Parent, false); ok && c.Inner && strings.EqualFold(c.Tool, n.Tool) {
		id, a = c.Key, event.Action{Type: c.Type, Tool: c.Tool, Target: c.Target, ToolUseID: c.CallID,
			MessageID: c.Msg, Model: c.Model}
	} else {
		callID := n.CallID
		if callID == "" {
			callID = "nested:" + n.Parent + ":" + n.Tool
		}
		id = event.ID(Client, string(event.KindAction), callID, key)
		a = event.Action{Type: ToolType(n.Tool), Tool: n.Tool, Target: clipTarget(p.target(s, n.Tool, n.Input)),
			ToolUseID: callID, InputHash: hashInput(n.Input)}
		if c, ok := s.find(n.Parent, false); ok {
			a.MessageID, a.Model = c.Msg, c.Model
		}
	}
	if hasStart && hasDone {
		if d := done.UnixMilli() - start.UnixMilli(); d > 0 && d < 7*24*3600*1000 {
			a.DurationMs = d
		}
	}
	if len(n.Result) > 0 && n.Result[0] == '{' {
		var content []byte
		var blocks []block
		_ = jsonscan.Members(n.Result, func(k, v []byte) bool {
			if jsonscan.Key(k, "content") {
				content, blocks = contentOf(v)
				return false
			}
			return true
		})
		out, size := resultText(content, blocks)
		a.Output, a.OutputSize = clipOutput(out), size
		okRun := !n.IsError
		a.Success = &okRun
		if n.IsError {
			a.Error = clipError(out)
		}
	}
	return []event.Event{p.action(s, id, t, &a)}
}

// contentOf reads a content value: a string (returned raw) or an array of blocks.
func contentOf(v []byte) ([]byte, []block) {
	if len(v) == 0 || v[0] != '[' {
		return v, nil
	}
	var blocks []block
	_, _ = jsonscan.WalkArray(v, 0, func(j int) (int, error) {
		if v[j] != '{' {
			return -1, nil
		}
		var b block
		end, err := b.walk(v, j)
		blocks = append(blocks, b)
		return end, err
	})
	return nil, blocks
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

// bashExecution reads a command the user ran with "!" (pi's record, kept by OpenClaw's runtime).
func (p *Parser) bashExecution(s *sess, m *message, key string, t time.Time) []event.Event {
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
	id := event.ID(Client, string(event.KindAction), "bash", key, shortHash(cmd))
	return []event.Event{p.action(s, id, t, a)}
}
