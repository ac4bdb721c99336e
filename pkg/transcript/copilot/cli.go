package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what a parser keeps and emits.
const (
	maxTarget  = 500      // runes
	maxError   = 2048     // bytes
	maxOutput  = 8192     // bytes
	maxPending = 128      // tool calls waiting for their outcome
	maxMessage = 64 << 10 // bytes of a message's text
)

// Parser turns the lines of one Copilot CLI event log into events. It is not safe for concurrent
// use.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table

	st    cliState
	stats transcript.Stats
	off   int64 // the byte offset of the line being read: its messages' Seq
}

var _ transcript.Parser = (*Parser)(nil)

// cliState is everything a parser needs to resume after the last line it was given. It is JSON.
type cliState struct {
	V         int    `json:"v"`
	SessionID string `json:"sid,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Root      string `json:"root,omitempty"`  // the project
	Model     string `json:"model,omitempty"` // the session's current model
	Epoch     int    `json:"epoch,omitempty"`
	LastTime  int64  `json:"t,omitempty"` // unix nanoseconds of the last time seen
	// Recorded: per model, what the usage records (one per API call) of the run since the last
	// shutdown, start or resume counted; the run's shutdown sums repeat them.
	Recorded map[string]modelUsage       `json:"recorded,omitempty"`
	Pending  transcript.Pending[pending] `json:"pending,omitempty"`
}

// pending is a tool call whose outcome may still come.
type pending struct {
	CallID  string           `json:"id"`
	Type    event.ActionType `json:"type"`
	Tool    string           `json:"tool,omitempty"`
	Target  transcript.Memo  `json:"target,omitempty"`
	Msg     string           `json:"msg,omitempty"`
	Req     string           `json:"req,omitempty"`
	Model   string           `json:"model,omitempty"`
	Agent   string           `json:"agent,omitempty"`
	Time    int64            `json:"t"`                 // unix ms of the call (its start when seen)
	Started bool             `json:"started,omitempty"` // tool.execution_start was read
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c pending) PendingID() string { return c.CallID }

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src, prices: pricing.Source(a.Prices, a.CurrentPrices)}
	if p.src.Client == "" {
		p.src.Client = ClientCLI
	}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("copilot-cli: bad parser state for " + src.Path + ": " + err.Error())
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
	return transcript.Malformed(ClientCLI, format, args...)
}

// Record parses one complete line.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	p.off = max(off, 0)
	evs, err := p.record(line)
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// record is one line: {type, data, id, timestamp, parentId, agentId, ephemeral}.
type record struct {
	Type      *string         `json:"type"`
	Data      json.RawMessage `json:"data"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	AgentID   string          `json:"agentId"`
}

// known lists the persisted event types this package reads for nothing (see the package doc).
var known = map[string]bool{
	"system.message": true, "system.notification": true, "session.info": true, "session.warning": true,
	"session.mode_changed": true, "session.plan_changed": true, "session.workspace_file_changed": true,
	"session.handoff": true, "session.truncation": true, "session.context_changed": true,
	"session.compaction_start": true, "session.task_complete": true, "session.remote_steerable_changed": true,
	"assistant.turn_start": true, "assistant.turn_end": true, "assistant.reasoning": true,
	"subagent.started": true, "subagent.completed": true, "subagent.failed": true,
	"subagent.selected": true, "subagent.deselected": true, "hook.start": true, "hook.end": true,
	"skill.invoked": true,
	// ephemeral: never on disk, known should one appear
	"session.idle": true, "session.title_changed": true, "session.snapshot_rewind": true,
	"session.usage_info": true, "pending_messages.modified": true, "assistant.intent": true,
	"assistant.reasoning_delta": true, "assistant.streaming_delta": true, "assistant.message_delta": true,
	"assistant.usage": true, "tool.execution_partial_result": true, "tool.execution_progress": true,
	"permission.requested": true, "permission.completed": true, "user_input.requested": true,
	"user_input.completed": true, "elicitation.requested": true, "elicitation.completed": true,
	"sampling.requested": true, "sampling.completed": true, "mcp.oauth_required": true,
	"mcp.oauth_completed": true, "external_tool.requested": true, "external_tool.completed": true,
	"command.queued": true, "command.execute": true, "command.completed": true, "commands.changed": true,
	"capabilities.changed": true, "exit_plan_mode.requested": true, "exit_plan_mode.completed": true,
	"session.tools_updated": true, "session.background_tasks_changed": true, "session.skills_loaded": true,
	"session.custom_agents_updated": true, "session.mcp_servers_loaded": true,
	"session.mcp_server_status_changed": true, "session.extensions_loaded": true,
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
		return nil, malformed("line is not a JSON object (a line cut short?)")
	}
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, malformed("%v (a line half-written?)", err)
	}
	if r.Type == nil {
		p.stats.CountUnknown("(no type)")
		return nil, nil
	}
	typ := *r.Type
	handle, ok := handlers[typ]
	if !ok {
		if !known[typ] {
			p.stats.CountUnknown(typ)
		}
		return nil, nil
	}
	t, hasTime := p.recordTime(r.Timestamp)
	if !hasTime {
		return nil, malformed("%s has no timestamp", typ)
	}
	if len(r.Data) == 0 || r.Data[0] != '{' {
		return nil, malformed("%s has no data object", typ)
	}
	if p.st.SessionID == "" && typ != "session.start" {
		p.st.SessionID = fallbackSessionID(p.src.Path)
	}
	return handle(p, &r, t)
}

// handlers read the event types that yield events.
var handlers = map[string]func(*Parser, *record, time.Time) ([]event.Event, error){
	"session.start":               (*Parser).sessionStart,
	"session.resume":              (*Parser).sessionResume,
	"session.model_change":        (*Parser).modelChange,
	"session.error":               (*Parser).sessionError,
	"session.compaction_complete": (*Parser).compaction,
	"session.shutdown":            (*Parser).shutdown,
	"session.usage_record":        (*Parser).usageRecord,
	"abort":                       (*Parser).abort,
	"user.message":                (*Parser).userMessage,
	"assistant.message":           (*Parser).assistantMessage,
	"tool.user_requested":         (*Parser).toolStart,
	"tool.execution_start":        (*Parser).toolStart,
	"tool.execution_complete":     (*Parser).toolComplete,
}

// fallbackSessionID names the session of a log that has no session.start and is named otherwise
// than the CLI names them: its file's name (its directory's for an events.jsonl).
func fallbackSessionID(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if name == "events" {
		name = filepath.Base(filepath.Dir(path))
	}
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "unknown"
	}
	return name
}

// recordTime parses a record's timestamp, falling back to the last time seen.
func (p *Parser) recordTime(s string) (time.Time, bool) {
	if t, ok := transcript.ParseTime(s); ok {
		p.st.LastTime = t.UnixNano()
		return t, true
	}
	if p.st.LastTime != 0 {
		return time.Unix(0, p.st.LastTime).UTC(), true
	}
	return time.Time{}, false
}

// decode reads a record's data into v; a data object that does not fit is malformed.
func decode(r *record, v any) error {
	if err := json.Unmarshal(r.Data, v); err != nil {
		return malformed("%s data does not decode: %v", *r.Type, err)
	}
	return nil
}

// key names a record in ids: its uuid, else a hash of its data.
func key(r *record) string {
	if r.ID != "" {
		return r.ID
	}
	return "h:" + shortHash(*r.Type+string(r.Data))
}

// ---------------------------------------------------------------------------------------------
// Envelope and sessions

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: ClientCLI, SessionID: p.st.SessionID,
		Project: p.st.Root, V: event.SchemaVersion}
}

func (p *Parser) action(id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = p.src.Path
	ev := p.newEvent(event.KindAction, id, t)
	ev.Action = a
	return ev
}

func (p *Parser) id(kind event.Kind, parts ...string) string {
	return event.ID(append([]string{ClientCLI, string(kind), p.st.SessionID}, parts...)...)
}

// setCwd records the session's working directory and its project.
func (p *Parser) setCwd(cwd, gitRoot string) {
	if cwd == "" {
		return
	}
	p.st.Cwd = cwd
	root := project.Root(cwd)
	if root == filepath.Clean(cwd) && gitRoot != "" {
		root = filepath.Clean(gitRoot) // the cwd is not on this machine: take the CLI's word
	}
	p.st.Root = root
}

type workContext struct {
	Cwd     string `json:"cwd"`
	GitRoot string `json:"gitRoot"`
	Branch  string `json:"branch"`
}

func (p *Parser) sessionStart(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		SessionID     string      `json:"sessionId"`
		StartTime     string      `json:"startTime"`
		SelectedModel string      `json:"selectedModel"`
		Context       workContext `json:"context"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	p.st.Recorded = nil // a new process: a run killed before its shutdown left its sums behind
	if d.SessionID != "" {
		p.st.SessionID = d.SessionID // the log's own word over its file's name
	}
	if p.st.SessionID == "" {
		return nil, malformed("session.start has no sessionId")
	}
	p.setCwd(d.Context.Cwd, d.Context.GitRoot)
	if d.SelectedModel != "" {
		p.st.Model = d.SelectedModel
	}
	start := t
	if st, ok := transcript.ParseTime(d.StartTime); ok {
		start = st
	}
	ev := p.newEvent(event.KindSession, p.id(event.KindSession, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: d.Context.Cwd, GitBranch: d.Context.Branch,
		Model: d.SelectedModel, TranscriptPath: p.src.Path, StartedAt: start}
	return []event.Event{ev}, nil
}

func (p *Parser) sessionResume(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		SelectedModel string      `json:"selectedModel"`
		Context       workContext `json:"context"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	p.st.Recorded = nil // a new process (see sessionStart)
	p.setCwd(d.Context.Cwd, d.Context.GitRoot)
	if d.SelectedModel != "" {
		p.st.Model = d.SelectedModel
	}
	ev := p.newEvent(event.KindSession, p.id(event.KindSession, "resume", key(r)), t)
	ev.Session = &event.Session{State: event.SessionActive, Cwd: d.Context.Cwd, GitBranch: d.Context.Branch,
		Model: d.SelectedModel, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

// modelChange reports the model the session switched to (the CLI writes one at start, and again
// when only the reasoning effort changed: then nothing is new).
func (p *Parser) modelChange(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		NewModel string `json:"newModel"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	m := strings.TrimSpace(d.NewModel)
	if m == "" || m == p.st.Model {
		return nil, nil
	}
	p.st.Model = m
	ev := p.newEvent(event.KindSession, p.id(event.KindSession, "model", m, key(r)), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: m, Cwd: p.st.Cwd, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

func (p *Parser) sessionError(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		ErrorType string `json:"errorType"`
		Message   string `json:"message"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	msg := strings.TrimSpace(d.Message)
	if d.ErrorType != "" {
		msg = d.ErrorType + ": " + msg
	}
	return []event.Event{p.action(p.id(event.KindAction, "error", key(r)), t,
		&event.Action{Type: event.ActionAPIError, Tool: "session.error", Model: p.st.Model, Error: clipError(msg)})}, nil
}

func (p *Parser) abort(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		Reason string `json:"reason"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	return []event.Event{p.action(p.id(event.KindAction, "abort", key(r)), t,
		&event.Action{Type: event.ActionTurnAborted, Model: p.st.Model, Error: clipError(d.Reason)})}, nil
}

// compaction is a context compaction that succeeded: a context_compacted action and the
// session's next epoch.
func (p *Parser) compaction(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		Success             bool            `json:"success"`
		PreCompactionTokens json.RawMessage `json:"preCompactionTokens"`
		SummaryContent      string          `json:"summaryContent"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	if !d.Success {
		return nil, nil
	}
	p.st.Epoch++
	a := &event.Action{Type: event.ActionContextCompacted, Model: p.st.Model}
	if n := transcript.Count(d.PreCompactionTokens); n > 0 {
		a.Target = "tokens before: " + strconv.FormatInt(n, 10)
	}
	act := p.action(p.id(event.KindAction, "compaction", key(r)), t, a)
	ses := p.newEvent(event.KindSession, p.id(event.KindSession, "epoch", key(r)), t)
	ses.Session = &event.Session{State: event.SessionActive, Epoch: p.st.Epoch, TranscriptPath: p.src.Path}
	evs := []event.Event{act, ses}
	return append(evs, p.textMessage(r, 0, t, event.Message{Role: event.RoleSummary, Text: d.SummaryContent, Model: p.st.Model})...), nil
}

// ---------------------------------------------------------------------------------------------
// Prompts and tool calls

func (p *Parser) userMessage(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		Content                 string `json:"content"`
		IsAutopilotContinuation bool   `json:"isAutopilotContinuation"`
		Source                  string `json:"source"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	if strings.TrimSpace(d.Content) == "" || d.IsAutopilotContinuation || strings.HasPrefix(d.Source, "skill") {
		return nil, nil // the CLI's own words: autopilot's nudge, a skill's injected message
	}
	evs := []event.Event{p.action(p.id(event.KindAction, "prompt", key(r)), t,
		&event.Action{Type: event.ActionUserPrompt, Target: clipTarget(d.Content)})}
	return append(evs, p.textMessage(r, 0, t, event.Message{Role: event.RoleUser, Text: d.Content})...), nil
}

type toolRequest struct {
	ToolCallID    string          `json:"toolCallId"`
	Name          string          `json:"name"`
	Arguments     json.RawMessage `json:"arguments"`
	MCPServerName string          `json:"mcpServerName"`
}

func (p *Parser) assistantMessage(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		MessageID        string        `json:"messageId"`
		Content          string        `json:"content"`
		ReasoningText    string        `json:"reasoningText"`
		Model            string        `json:"model"` // 1.0.60 and on
		ToolRequests     []toolRequest `json:"toolRequests"`
		RequestID        string        `json:"requestId"`
		ParentToolCallID string        `json:"parentToolCallId"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	agent := d.ParentToolCallID
	if agent == "" {
		agent = r.AgentID
	}
	model := d.Model
	if model == "" && agent == "" {
		model = p.st.Model
	}
	said := event.Message{MessageID: d.MessageID, AgentID: agent, Sidechain: agent != "", Model: model}
	said.Role, said.Text = event.RoleThinking, d.ReasoningText
	evs := p.textMessage(r, 0, t, said)
	said.Role, said.Text = event.RoleAssistant, d.Content
	evs = append(evs, p.textMessage(r, 1, t, said)...)
	for i, tr := range d.ToolRequests {
		callID := tr.ToolCallID
		if callID == "" {
			callID = key(r) + "#" + strconv.Itoa(i)
		}
		call := p.call(callID, tr.Name, tr.Arguments, tr.MCPServerName != "", d.MessageID, d.RequestID, d.Model, agent, t)
		evs = append(evs, call, p.callMessage(r, 2+i, call))
	}
	return evs, nil
}

// call is one tool call: its action, and the call remembered for its outcome.
func (p *Parser) call(callID, tool string, raw json.RawMessage, mcp bool, msg, req, model, agent string, t time.Time) event.Event {
	a := readArgs(raw)
	if model == "" && agent == "" {
		model = p.st.Model // a sub-agent's model is named by the message (1.0.60 on) or the outcome only
	}
	act := &event.Action{Type: cliType(tool, mcp, a), Tool: tool, Target: clipTarget(cliTarget(tool, a, p.rel)),
		ToolUseID: callID, MessageID: msg, RequestID: req, AgentID: agent, Sidechain: agent != "",
		InputHash: hashInput(raw), Model: model}
	p.st.Pending.Renew(pending{CallID: callID, Type: act.Type, Tool: tool, Target: transcript.Memo(act.Target), Msg: msg, Req: req,
		Model: act.Model, Agent: agent, Time: t.UnixMilli()}, maxPending)
	return p.action(p.id(event.KindAction, callID), t, act)
}

// toolStart reads tool.execution_start and tool.user_requested: the start of a call announced by
// a message, or a call no message announced (a tool the user ran).
func (p *Parser) toolStart(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		ToolCallID       string          `json:"toolCallId"`
		ToolName         string          `json:"toolName"`
		Arguments        json.RawMessage `json:"arguments"`
		MCPServerName    string          `json:"mcpServerName"`
		ParentToolCallID string          `json:"parentToolCallId"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	if d.ToolCallID == "" {
		return nil, malformed("%s has no toolCallId", *r.Type)
	}
	if c := p.find(d.ToolCallID); c != nil {
		if *r.Type == "tool.execution_start" && !c.Started {
			c.Started, c.Time = true, t.UnixMilli()
		}
		return nil, nil
	}
	agent := d.ParentToolCallID
	if agent == "" {
		agent = r.AgentID
	}
	ev := p.call(d.ToolCallID, d.ToolName, d.Arguments, d.MCPServerName != "", "", "", "", agent, t)
	if *r.Type == "tool.execution_start" {
		p.find(d.ToolCallID).Started = true
	}
	return []event.Event{ev, p.callMessage(r, 0, ev)}, nil
}

// toolComplete reads a call's outcome, under the call's id.
func (p *Parser) toolComplete(r *record, t time.Time) ([]event.Event, error) {
	var d struct {
		ToolCallID string `json:"toolCallId"`
		Success    *bool  `json:"success"`
		Model      string `json:"model"`
		Result     *struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
		ParentToolCallID string `json:"parentToolCallId"`
	}
	if err := decode(r, &d); err != nil {
		return nil, err
	}
	if d.ToolCallID == "" {
		return nil, malformed("tool.execution_complete has no toolCallId")
	}
	a := event.Action{Type: event.ActionUnknown, ToolUseID: d.ToolCallID, Model: d.Model}
	if c := p.take(d.ToolCallID); c != nil {
		a.Type, a.Tool, a.Target, a.MessageID, a.RequestID, a.AgentID = c.Type, c.Tool, string(c.Target), c.Msg, c.Req, c.Agent
		if a.Model == "" {
			a.Model = c.Model
		}
		if ms := t.UnixMilli() - c.Time; ms > 0 && ms < 7*24*3600*1000 {
			a.DurationMs = ms
		}
	} else if d.ParentToolCallID != "" {
		a.AgentID = d.ParentToolCallID
	}
	a.Sidechain = a.AgentID != ""
	ok := d.Success == nil || *d.Success
	if d.Success == nil && d.Error != nil {
		ok = false
	}
	a.Success = &ok
	if d.Result != nil {
		var s string
		if json.Unmarshal(d.Result.Content, &s) == nil {
			a.Output, a.OutputSize = clipOutput(s), int64(len(s))
		}
	}
	if !ok {
		msg := "failed"
		if d.Error != nil && strings.TrimSpace(d.Error.Message) != "" {
			msg = d.Error.Message
		}
		a.Error = clipError(msg)
	}
	return []event.Event{p.action(p.id(event.KindAction, d.ToolCallID), t, &a)}, nil
}

// find returns the waiting call of a tool call id, or nil.
func (p *Parser) find(callID string) *pending {
	for i := len(p.st.Pending) - 1; i >= 0; i-- {
		if p.st.Pending[i].CallID == callID {
			return &p.st.Pending[i]
		}
	}
	return nil
}

// take returns the waiting call of a tool call id and forgets it.
func (p *Parser) take(callID string) *pending {
	for i := len(p.st.Pending) - 1; i >= 0; i-- {
		if p.st.Pending[i].CallID == callID {
			c := p.st.Pending[i]
			p.st.Pending = append(p.st.Pending[:i], p.st.Pending[i+1:]...)
			return &c
		}
	}
	return nil
}

// rel makes a path relative to the project when it lies inside it.
func (p *Parser) rel(file string) string { return relPath(file, p.st.Cwd, p.st.Root) }

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

// ---------------------------------------------------------------------------------------------
// Messages

// message returns a message event of a record: id event.ID("copilot-cli", "message", session id,
// record id, block), Seq the line's offset × 64 + block, at the record's time.
func (p *Parser) message(r *record, block int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, p.id(event.KindMessage, key(r), strconv.Itoa(block)), t)
	m.Seq = p.off*64 + int64(min(block, 63))
	ev.Message = &m
	return ev
}

// textMessage is message for a text (scrubbed, cut): none when it is empty.
func (p *Parser) textMessage(r *record, block int, t time.Time, m event.Message) []event.Event {
	m.Text = clipMessage(m.Text)
	if m.Text == "" {
		return nil
	}
	return []event.Event{p.message(r, block, t, m)}
}

// callMessage places a call's action in the conversation: its text is the action's target.
func (p *Parser) callMessage(r *record, block int, call event.Event) event.Event {
	a := call.Action
	return p.message(r, block, call.Time, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool,
		ToolUseID: a.ToolUseID, MessageID: a.MessageID, AgentID: a.AgentID, Sidechain: a.Sidechain, Model: a.Model})
}

func clipMessage(s string) string { return transcript.Clip(strings.TrimSpace(s), maxMessage) }
