package pi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Limits on what a parser keeps and emits.
const (
	maxTarget  = 500  // runes
	maxError   = 2048 // bytes
	maxOutput  = 8192 // bytes
	maxText    = 4096 // bytes of a prompt or summary read for its target and key
	maxPending = 128  // tool calls waiting for their result
	maxDone    = 16   // tool calls remembered after their result
	maxComps   = 16   // compactions remembered as counted
)

// Parser turns the lines of one session file into events. It is not safe for concurrent use.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table

	st    state
	stats transcript.Stats

	projCwd, proj string // project.Root cache
}

var _ transcript.Parser = (*Parser)(nil)

// state is everything a parser needs to resume after the last line it was given. It is JSON.
type state struct {
	V         int       `json:"v"`
	SessionID string    `json:"sid,omitempty"`
	Header    bool      `json:"header,omitempty"` // the header was read
	Version   int       `json:"ver,omitempty"`    // the header's format version (1 when absent)
	Cwd       string    `json:"cwd,omitempty"`
	LastTime  int64     `json:"t,omitempty"`     // unix nanoseconds of the last time seen
	Model     string    `json:"model,omitempty"` // the model of the last assistant message
	Epoch     int       `json:"epoch,omitempty"`
	Comps     []string  `json:"comps,omitempty"` // keys of the last compactions counted
	Pending   []pending `json:"pending,omitempty"`
}

// pending is a tool call whose result may still come.
type pending struct {
	CallID string           `json:"id"`
	Key    string           `json:"key"` // the action's event id
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target string           `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"` // the response id of the call's message
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t"`              // unix ms when the call's message was written
	Done   bool             `json:"done,omitempty"` // its result was read
}

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src, prices: pricing.Source(a.Prices, a.CurrentPrices)}
	if p.src.Client == "" {
		p.src.Client = Client
	}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("pi: bad parser state for " + src.Path + ": " + err.Error())
		}
	}
	if p.st.SessionID == "" {
		p.st.SessionID = src.SessionID
		if p.st.SessionID == "" {
			p.st.SessionID = SessionIDFromPath(src.Path)
		}
	}
	return p, nil
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

func malformed(format string, args ...any) error {
	return transcript.Malformed("pi", format, args...)
}

// Record parses one complete line.
func (p *Parser) Record(_ int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	evs, err := p.record(line)
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// entry is the top level of a line: any entry type, header included.
type entry struct {
	Type      string
	HasType   bool
	Timestamp []byte
	Msg       *message // a message entry's message (when it is an object), walked

	// header
	ID, Cwd, ParentSession, BranchedFrom string
	Version                              []byte
	// header (version 1) and model_change
	ModelID string
	// compaction
	Summary, TokensBefore []byte
	// session_info
	Name string
}

// decode walks a line once, the message (and its content) included.
func (e *entry) decode(d []byte) error {
	end, err := jsonscan.WalkObject(d, 0, func(k []byte, at int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "type":
			var v []byte
			end, err := raw(d, at, &v)
			if err != nil {
				return 0, err
			}
			s, ok := jsonscan.String(v)
			if !ok && !jsonscan.Null(v) {
				return 0, errors.New("field type is not a string")
			}
			e.Type, e.HasType = s, true
			return end, nil
		case "timestamp":
			return raw(d, at, &e.Timestamp)
		case "message":
			if d[at] != '{' {
				return -1, nil
			}
			e.Msg = &message{}
			return e.Msg.walk(d, at)
		case "id":
			return str(d, at, &e.ID)
		case "cwd":
			return str(d, at, &e.Cwd)
		case "parentSession":
			return str(d, at, &e.ParentSession)
		case "branchedFrom":
			return str(d, at, &e.BranchedFrom)
		case "version":
			return raw(d, at, &e.Version)
		case "modelId":
			return str(d, at, &e.ModelID)
		case "summary":
			return raw(d, at, &e.Summary)
		case "tokensBefore":
			return raw(d, at, &e.TokensBefore)
		case "name":
			return str(d, at, &e.Name)
		}
		return -1, nil
	})
	if err == nil && !jsonscan.AtEnd(d, end) {
		err = jsonscan.ErrSyntax
	}
	return err
}

func (p *Parser) record(line []byte) ([]event.Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, malformed("line is not UTF-8")
	}
	if line[0] != '{' {
		return nil, malformed("line is not a JSON object (a line rewritten or cut short?)")
	}
	var e entry
	if err := e.decode(line); err != nil {
		return nil, malformed("%v (a line half-written?)", err)
	}
	if !e.HasType {
		p.stats.CountUnknown("(no type)")
		return nil, nil
	}
	t, hasTime := p.entryTime(e.Timestamp)
	switch e.Type {
	case "session":
		return p.header(&e, t, hasTime)
	case "message":
		return p.message(&e, line, t, hasTime)
	case "compaction":
		return p.compaction(&e, t, hasTime)
	case "session_info":
		return p.sessionInfo(&e, t, hasTime)
	case "model_change", "thinking_level_change", "branch_summary", "custom", "custom_message", "label":
		return nil, nil
	}
	p.stats.CountUnknown(e.Type)
	return nil, nil
}

// entryTime parses an entry's timestamp (RFC 3339), falling back to the last time seen.
func (p *Parser) entryTime(raw []byte) (time.Time, bool) {
	if t, ok := transcript.ParseTime(jsonscan.Str(raw)); ok {
		p.st.LastTime = t.UnixNano()
		return t, true
	}
	if p.st.LastTime != 0 {
		return time.Unix(0, p.st.LastTime).UTC(), true
	}
	return time.Time{}, false
}

// needTime reports an error for an entry that would produce events but has no usable time.
func needTime(hasTime bool, what string) error {
	if hasTime {
		return nil
	}
	return malformed("%s has no timestamp", what)
}

// ---------------------------------------------------------------------------------------------
// Envelope and session events

func (p *Parser) project() string {
	if p.st.Cwd != p.projCwd || (p.proj == "" && p.st.Cwd != "") {
		p.projCwd, p.proj = p.st.Cwd, project.Root(p.st.Cwd)
	}
	return p.proj
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client, SessionID: p.st.SessionID,
		Project: p.project(), V: event.SchemaVersion}
}

func (p *Parser) action(id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = p.src.Path
	ev := p.newEvent(event.KindAction, id, t)
	ev.Action = a
	return ev
}

// header reads the session line: the file's session, cwd and parent.
func (p *Parser) header(e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if p.st.Header {
		p.stats.CountUnknown("session (again)")
		return nil, nil
	}
	if p.st.SessionID == "" {
		p.st.SessionID = e.ID
	}
	if p.st.SessionID == "" {
		return nil, malformed("session header has no id")
	}
	if err := needTime(hasTime, "session header"); err != nil {
		return nil, err
	}
	p.st.Header = true
	p.st.Version = 1
	if v, ok := jsonscan.Int(e.Version); ok && v > 0 && v < 1000 {
		p.st.Version = int(v)
	}
	if e.Cwd != "" {
		p.st.Cwd = e.Cwd
	}
	parent := e.ParentSession
	if parent == "" {
		parent = e.BranchedFrom
	}
	if id := SessionIDFromPath(parent); id != "" {
		parent = id
	} else {
		parent = "" // not a pi session path: no session id to name
	}
	if strings.EqualFold(parent, p.st.SessionID) {
		parent = ""
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: e.Cwd, TranscriptPath: p.src.Path,
		ParentSessionID: parent, StartedAt: t}
	return []event.Event{ev}, nil
}

// sessionInfo reads a session_info entry: the session's name, which the user gave (/name, a rename
// in the session selector, an extension's setSessionName). An empty name clears it in pi; a title
// cannot be taken back here, so it yields nothing.
func (p *Parser) sessionInfo(e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	title, ok := event.CleanTitle(e.Name)
	if !ok {
		return nil, nil
	}
	if err := needTime(hasTime, "session_info"); err != nil {
		return nil, err
	}
	// Keyed by what a copy (/fork, /clone) keeps: the copy's session gets the same name.
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "title",
		jsonscan.Str(e.Timestamp), title), t)
	ev.Session = &event.Session{Title: title, TitleByUser: true, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

// modelEvent reports the model of an assistant message when it is not the previous message's.
// A model_change entry only says what the next request will use, and may be switched away from
// before any: the messages say what was used.
func (p *Parser) modelEvent(model, key string, t time.Time) []event.Event {
	model = strings.TrimSpace(model)
	if model == "" || model == p.st.Model {
		return nil
	}
	p.st.Model = model
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "model", model, key), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: model, Cwd: p.st.Cwd, TranscriptPath: p.src.Path}
	return []event.Event{ev}
}

// compaction is a context compaction: a context_compacted action and the session's next epoch.
func (p *Parser) compaction(e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if err := needTime(hasTime, "compaction"); err != nil {
		return nil, err
	}
	summary, size, _ := jsonscan.StringPrefix(e.Summary, maxText)
	before := num(e.TokensBefore)
	key := jsonscan.Str(e.Timestamp) + "|" + strconv.FormatInt(before, 10) + "|" +
		strconv.FormatInt(size, 10) + "|" + shortHash(summary)
	if slices.Contains(p.st.Comps, key) {
		return nil, nil // read again after pi rewrote the file: counted already
	}
	p.st.Comps = append(p.st.Comps, key)
	if n := len(p.st.Comps); n > maxComps {
		p.st.Comps = append(p.st.Comps[:0:0], p.st.Comps[n-maxComps:]...)
	}
	p.st.Epoch++
	a := &event.Action{Type: event.ActionContextCompacted}
	if before > 0 {
		a.Target = "tokens before: " + strconv.FormatInt(before, 10)
	}
	act := p.action(event.ID(Client, string(event.KindAction), "compaction", key), t, a)
	ses := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "epoch", key), t)
	ses.Session = &event.Session{State: event.SessionActive, Epoch: p.st.Epoch, TranscriptPath: p.src.Path}
	return []event.Event{act, ses}, nil
}

// ---------------------------------------------------------------------------------------------
// Messages

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

func (p *Parser) message(e *entry, line []byte, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.Msg == nil {
		return nil, malformed("message entry without a message object")
	}
	m := e.Msg
	mt, hasMsgTime := msgTime(m.Timestamp)
	if _, ok := transcript.ParseTime(jsonscan.Str(e.Timestamp)); !ok && hasMsgTime {
		t, hasTime = mt, true // an entry without a time of its own: the message's
		p.st.LastTime = t.UnixNano()
	}
	// key names the message wherever it is copied: its own timestamp, else the entry's, else
	// its bytes.
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
		return p.prompt(m, key, t), nil
	case "assistant":
		if err := needTime(hasTime, "assistant message"); err != nil {
			return nil, err
		}
		return p.assistant(m, key, t), nil
	case "toolResult":
		if err := needTime(hasTime, "tool result"); err != nil {
			return nil, err
		}
		end := t
		if hasMsgTime {
			end = mt
		}
		return p.toolResult(m, t, end), nil
	case "bashExecution":
		if err := needTime(hasTime, "bash execution"); err != nil {
			return nil, err
		}
		return p.bashExecution(m, key, t), nil
	case "custom", "hookMessage", "branchSummary", "compactionSummary":
		return nil, nil // extension messages and summaries: not the user's, not the model's
	}
	p.stats.CountUnknown("message/" + m.Role)
	return nil, nil
}

// prompt reads a user message: its text is the prompt.
func (p *Parser) prompt(m *message, key string, t time.Time) []event.Event {
	text := m.text(maxText)
	if strings.TrimSpace(text) == "" {
		return nil
	}
	id := event.ID(Client, string(event.KindAction), "prompt", key, shortHash(text))
	return []event.Event{p.action(id, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text)})}
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
func (p *Parser) assistant(m *message, key string, t time.Time) []event.Event {
	evs := p.modelEvent(m.Model, key, t)
	for i := range m.Blocks {
		if m.Blocks[i].Type == "toolCall" {
			evs = append(evs, p.toolCall(m, key, &m.Blocks[i], i, t))
		}
	}
	if ev, ok := p.usage(m, key, t); ok {
		evs = append(evs, ev)
	}
	switch m.StopReason {
	case "error":
		id := event.ID(Client, string(event.KindAction), "error", key, m.Provider, m.Model)
		evs = append(evs, p.action(id, t, &event.Action{Type: event.ActionAPIError, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	case "aborted":
		id := event.ID(Client, string(event.KindAction), "aborted", key, m.Provider, m.Model)
		evs = append(evs, p.action(id, t, &event.Action{Type: event.ActionTurnAborted, MessageID: m.ResponseID,
			Model: m.Model, Error: clipError(m.ErrorMessage)}))
	}
	return evs
}

// toolCall reads a toolCall block of an assistant message.
func (p *Parser) toolCall(m *message, key string, b *block, i int, t time.Time) event.Event {
	callID, tool := b.ID, b.Name
	if callID == "" {
		callID = "#" + strconv.Itoa(i) // no id: its place in the message
	}
	aid := event.ID(Client, string(event.KindAction), callID, key)
	a := &event.Action{Type: ToolType(tool), Tool: tool, Target: clipTarget(p.target(tool, b.Args)), ToolUseID: callID,
		MessageID: m.ResponseID, InputHash: hashInput(b.Args), Model: m.Model}
	p.remember(pending{CallID: callID, Key: aid, Type: a.Type, Tool: tool, Target: a.Target, Msg: m.ResponseID,
		Model: m.Model, Time: t.UnixMilli()})
	return p.action(aid, t, a)
}

// remember keeps a call for its result. Beyond maxPending calls it forgets the oldest.
func (p *Parser) remember(c pending) {
	for i := range p.st.Pending {
		if p.st.Pending[i].CallID == c.CallID {
			p.st.Pending = append(p.st.Pending[:i], p.st.Pending[i+1:]...)
			break
		}
	}
	p.st.Pending = append(p.st.Pending, c)
	if n := len(p.st.Pending); n > maxPending {
		p.st.Pending = append(p.st.Pending[:0:0], p.st.Pending[n-maxPending:]...)
	}
}

// take returns the call of a tool-call id and marks it done. The last maxDone calls stay known
// after their results, so that a result read again (pi rewrote the file, see the package doc)
// gets its call's id once more.
func (p *Parser) take(callID string) (pending, bool) {
	for i := len(p.st.Pending) - 1; i >= 0; i-- {
		if c := &p.st.Pending[i]; c.CallID == callID {
			found := *c
			if !c.Done {
				c.Done = true
				p.pruneDone()
			}
			return found, true
		}
	}
	return pending{}, false
}

// pruneDone forgets the oldest calls that have their results beyond maxDone.
func (p *Parser) pruneDone() {
	done := 0
	for _, c := range p.st.Pending {
		if c.Done {
			done++
		}
	}
	if done <= maxDone {
		return
	}
	out := p.st.Pending[:0]
	for _, c := range p.st.Pending {
		if c.Done && done > maxDone {
			done--
			continue
		}
		out = append(out, c)
	}
	p.st.Pending = out
}

// toolResult reads a toolResult message: the outcome of its call, under the call's id.
func (p *Parser) toolResult(m *message, t, end time.Time) []event.Event {
	callID := m.ToolCallID
	var a event.Action
	var id string
	if c, ok := p.take(callID); ok {
		id = c.Key
		a = event.Action{Type: c.Type, Tool: c.Tool, Target: c.Target, MessageID: c.Msg, Model: c.Model}
		if d := end.UnixMilli() - c.Time; d > 0 && d < 7*24*3600*1000 {
			a.DurationMs = d
		}
	} else {
		id = event.ID(Client, string(event.KindAction), callID)
		a = event.Action{Type: ToolType(m.ToolName), Tool: m.ToolName}
	}
	a.ToolUseID = callID
	ok := !m.IsError
	a.Success = &ok
	out, size := m.resultText()
	a.Output, a.OutputSize = clipOutput(out), size
	if m.IsError {
		a.Error = clipError(out)
	}
	return []event.Event{p.action(id, t, &a)}
}

// resultText reads a tool result's content (text and image blocks, or a string): the text to
// keep (a little more than maxOutput, for the scrubber's margin) and the full size.
func (m *message) resultText() (string, int64) {
	const keep = maxOutput + 1024
	if len(m.Content) > 0 {
		s, n, _ := jsonscan.StringPrefix(m.Content, keep)
		return s, n
	}
	var sb strings.Builder
	var size int64
	for _, b := range m.Blocks {
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
func (p *Parser) bashExecution(m *message, key string, t time.Time) []event.Event {
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
	return []event.Event{p.action(id, t, a)}
}

// ---------------------------------------------------------------------------------------------
// Paths and small helpers

// relPath makes a file path relative to the project when it lies inside it; a relative path is
// relative to the directory pi ran in. pi drops a leading "@" from paths.
func (p *Parser) relPath(file string) string {
	file = strings.TrimPrefix(strings.TrimSpace(file), "@")
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if p.st.Cwd == "" || !filepath.IsAbs(p.st.Cwd) || strings.HasPrefix(file, "~") {
			return filepath.Clean(file)
		}
		file = filepath.Join(p.st.Cwd, file)
	}
	file = filepath.Clean(file)
	if root := p.project(); root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." &&
			!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

func num(v []byte) int64 { return transcript.Count(v) }
