package kimi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
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

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what its state keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxModels  = 16
	maxCalls   = 128
	maxAgents  = 64 // relayed subagents whose compactions are counted
	maxDepth   = 4  // nested SubagentEvents
)

// state is what a parser keeps between lines: JSON, small, no transcript text.
type state struct {
	Session string   `json:"session,omitempty"`
	Agent   string   `json:"agent,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Models  []string `json:"models,omitempty"`
	Ms      int64    `json:"ms,omitempty"` // the last record time seen, unix ms
	Epoch   int      `json:"epoch,omitempty"`
	// Relayed counts the compactions of the subagents relayed into this wire, most recent last:
	// a relayed call's id carries its agent's epoch, as the subagent's own wire gives it.
	Relayed []agentEpoch `json:"relayed,omitempty"`
	Calls   []call       `json:"calls,omitempty"` // calls awaiting their results, oldest first
}

// agentEpoch is how many times a relayed subagent's context was compacted.
type agentEpoch struct {
	Agent string `json:"agent"`
	Epoch int    `json:"epoch"`
}

// call is a tool call awaiting its result, known by its agent, epoch and tool-call id.
type call struct {
	ID     string           `json:"id"`
	Agent  string           `json:"agent,omitempty"`
	Epoch  int              `json:"epoch,omitempty"`
	Tool   string           `json:"tool,omitempty"`
	Type   event.ActionType `json:"type,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Ms     int64            `json:"ms,omitempty"`
}

// Parser reads one wire file.
type Parser struct {
	src    transcript.Source
	model  string
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
}

func newParser(src transcript.Source, l layout, cwd, model string, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, model: model, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("kimi-cli parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(l.session, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
		p.st.Agent = l.agent
	}
	if p.st.Cwd == "" && cwd != "" {
		p.st.Cwd = filepath.Clean(cwd)
		if filepath.IsAbs(p.st.Cwd) {
			p.st.Project = project.Root(p.st.Cwd)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// record is one wire line: the metadata header or a timestamped message.
type record struct {
	Type      string          `json:"type"`
	Timestamp json.RawMessage `json:"timestamp"`
	Message   *envelope       `json:"message"`
}

type envelope struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// scope is whose message a record is: the file's agent, or a subagent's relayed into it.
type scope struct {
	agent   string
	relayed bool // relayed by a SubagentEvent: usage and actions only
	off     int64
	t       time.Time
}

// Record parses one line.
func (p *Parser) Record(off int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, nil
	case !utf8.Valid(raw):
		return nil, transcript.Malformed(Client, "line at %d is not UTF-8", off)
	case raw[0] != '{':
		return nil, transcript.Malformed(Client, "line at %d is not a JSON object", off)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, transcript.Malformed(Client, "line at %d does not parse: %v", off, err)
	}
	if r.Message == nil {
		if r.Type != "metadata" {
			p.stats.CountUnknown("record " + r.Type)
		}
		return nil, nil
	}
	t, ok := unixTime(r.Timestamp)
	if ok {
		p.st.Ms = t.UnixMilli()
	} else if p.st.Ms > 0 {
		t = time.UnixMilli(p.st.Ms).UTC()
	} else {
		return nil, nil // no time yet for anything
	}
	if !p.st.Started && p.st.Agent == "" {
		p.st.Started = true
		evs = append(evs, p.sessionEvent(event.SessionStarted, "", 0, t))
	}
	more, err := p.message(r.Message, scope{agent: p.st.Agent, off: off, t: t}, 0)
	if err != nil {
		return nil, err
	}
	return append(evs, more...), nil
}

// Payloads of the messages read.
type (
	turnBegin struct {
		UserInput json.RawMessage `json:"user_input"`
	}
	contentPart struct {
		Type  string `json:"type"`
		Text  string `json:"text"`
		Think string `json:"think"`
	}
	toolCall struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	toolResult struct {
		ToolCallID  string `json:"tool_call_id"`
		ReturnValue struct {
			IsError bool            `json:"is_error"`
			Output  json.RawMessage `json:"output"`
			Message string          `json:"message"`
		} `json:"return_value"`
	}
	statusUpdate struct {
		TokenUsage *struct {
			InputOther         json.RawMessage `json:"input_other"`
			Output             json.RawMessage `json:"output"`
			InputCacheRead     json.RawMessage `json:"input_cache_read"`
			InputCacheCreation json.RawMessage `json:"input_cache_creation"`
		} `json:"token_usage"`
		MessageID string `json:"message_id"`
	}
	subagentEvent struct {
		ParentToolCallID string    `json:"parent_tool_call_id"`
		TaskToolCallID   string    `json:"task_tool_call_id"`
		AgentID          string    `json:"agent_id"`
		Event            *envelope `json:"event"`
	}
)

// known are the wire message types that yield no event.
var known = map[string]bool{
	"TurnEnd": true, "StepBegin": true, "CompactionEnd": true, "MCPLoadingBegin": true,
	"MCPLoadingEnd": true, "HookTriggered": true, "HookResolved": true, "Notification": true,
	"PlanDisplay": true, "ToolCallPart": true, "ApprovalRequest": true, "ApprovalResponse": true,
	"ApprovalRequestResolved": true, "QuestionRequest": true, "QuestionResponse": true,
	"ToolCallRequest": true, "HookRequest": true,
}

// message turns one wire message into events.
func (p *Parser) message(m *envelope, sc scope, depth int) ([]event.Event, error) {
	decode := func(v any) error {
		if len(m.Payload) == 0 || string(m.Payload) == "null" {
			return transcript.Malformed(Client, "%s at %d has no payload", m.Type, sc.off)
		}
		if err := json.Unmarshal(m.Payload, v); err != nil {
			return transcript.Malformed(Client, "%s at %d does not decode: %v", m.Type, sc.off, err)
		}
		return nil
	}
	switch m.Type {
	case "TurnBegin", "SteerInput":
		var b turnBegin
		if err := decode(&b); err != nil {
			return nil, err
		}
		if sc.relayed {
			return nil, nil
		}
		return p.prompt(partsText(b.UserInput), sc), nil
	case "ContentPart":
		var c contentPart
		if err := decode(&c); err != nil {
			return nil, err
		}
		if sc.relayed {
			return nil, nil
		}
		switch c.Type {
		case "text":
			return p.textMessage(event.RoleAssistant, sc, 0, c.Text), nil
		case "think":
			return p.textMessage(event.RoleThinking, sc, 0, c.Think), nil
		}
		return nil, nil
	case "ToolCall":
		var c toolCall
		if err := decode(&c); err != nil {
			return nil, err
		}
		return p.call(&c, sc), nil
	case "ToolResult":
		var r toolResult
		if err := decode(&r); err != nil {
			return nil, err
		}
		return p.result(&r, sc), nil
	case "StatusUpdate":
		var s statusUpdate
		if err := decode(&s); err != nil {
			return nil, err
		}
		return p.usage(&s, sc), nil
	case "StepInterrupted":
		if sc.relayed {
			return nil, nil
		}
		ev := p.newEvent(event.KindAction, p.lineID("interrupted", sc), sc.t)
		ev.Action = &event.Action{Type: event.ActionTurnAborted, AgentID: sc.agent, Sidechain: sc.agent != "",
			Model: p.model, Transcript: p.src.Path}
		return []event.Event{ev}, nil
	case "CompactionBegin":
		if sc.relayed {
			p.compacted(sc.agent)
			return nil, nil
		}
		p.st.Epoch++
		ev := p.newEvent(event.KindAction, p.lineID("compaction", sc), sc.t)
		ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: sc.agent, Sidechain: sc.agent != "",
			Model: p.model, Transcript: p.src.Path}
		evs := []event.Event{ev}
		if sc.agent == "" {
			evs = append(evs, p.sessionEvent(event.SessionActive, "", p.st.Epoch, sc.t))
		}
		return evs, nil
	case "SubagentEvent":
		var s subagentEvent
		if err := decode(&s); err != nil {
			return nil, err
		}
		if s.Event == nil || depth >= maxDepth {
			return nil, nil
		}
		agent := strings.TrimSpace(s.AgentID)
		if agent == "" {
			agent = "task:" + transcript.FirstNonEmpty(s.ParentToolCallID, s.TaskToolCallID)
		}
		return p.message(s.Event, scope{agent: agent, relayed: true, off: sc.off, t: sc.t}, depth+1)
	}
	if !known[m.Type] {
		p.stats.CountUnknown(m.Type)
	}
	return nil, nil
}

// prompt is what the user typed: a user_prompt action and a user message for the session's own
// wire, a user message of the agent for a subagent's (its task).
func (p *Parser) prompt(text string, sc scope) []event.Event {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	evs := p.textMessage(event.RoleUser, sc, 0, text)
	if sc.agent == "" {
		ev := p.newEvent(event.KindAction, p.lineID("prompt", sc), sc.t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), Transcript: p.src.Path}
		evs = append([]event.Event{ev}, evs...)
	}
	return evs
}

// partsText is a user input's text: a string, or its text parts joined ("[image]" for media).
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return partsOf(raw)
}

// partsOf joins the text of content parts; media parts are "[image]", "[audio]", "[video]".
func partsOf(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, pt := range parts {
		switch pt.Type {
		case "text":
			if strings.TrimSpace(pt.Text) != "" {
				out = append(out, pt.Text)
			}
		case "image_url":
			out = append(out, "[image]")
		case "audio_url":
			out = append(out, "[audio]")
		case "video_url":
			out = append(out, "[video]")
		}
	}
	return strings.Join(out, "\n")
}

func (p *Parser) call(c *toolCall, sc scope) []event.Event {
	id := strings.TrimSpace(c.ID)
	if id == "" {
		return nil
	}
	name := strings.TrimSpace(c.Function.Name)
	var in map[string]any
	_ = json.Unmarshal([]byte(c.Function.Arguments), &in)
	ty, target := p.toolOf(name, in)
	target = clipTarget(target)
	a := &event.Action{Type: ty, Tool: name, Target: target, ToolUseID: id, AgentID: sc.agent, Sidechain: sc.agent != "",
		Model: p.model, InputHash: inputHash(c.Function.Arguments), Transcript: p.src.Path}
	epoch := p.epochOf(sc)
	ev := p.newEvent(event.KindAction, p.actionID(sc.agent, epoch, id), sc.t)
	ev.Action = a
	p.remember(call{ID: id, Agent: sc.agent, Epoch: epoch, Tool: name, Type: ty, Target: transcript.Memo(target),
		Ms: sc.t.UnixMilli()})
	evs := []event.Event{ev}
	if !sc.relayed {
		evs = append(evs, p.messageEvent(sc, 0, event.Message{Role: event.RoleToolCall, Text: target, Tool: name,
			ToolUseID: id, AgentID: sc.agent, Sidechain: sc.agent != "", Model: p.model}))
	}
	return evs
}

func (p *Parser) remember(c call) {
	for i := range p.st.Calls {
		if p.st.Calls[i].same(c.Agent, c.Epoch, c.ID) {
			p.st.Calls[i] = c
			return
		}
	}
	p.st.Calls = append(p.st.Calls, c)
	if n := len(p.st.Calls); n > maxCalls {
		p.st.Calls = append([]call(nil), p.st.Calls[n-maxCalls:]...)
	}
}

func (c *call) same(agent string, epoch int, id string) bool {
	return c.ID == id && c.Agent == agent && c.Epoch == epoch
}

// take removes and returns the call a result answers.
func (p *Parser) take(agent string, epoch int, id string) (call, bool) {
	for i := range p.st.Calls {
		if p.st.Calls[i].same(agent, epoch, id) {
			c := p.st.Calls[i]
			p.st.Calls = append(p.st.Calls[:i:i], p.st.Calls[i+1:]...)
			return c, true
		}
	}
	return call{}, false
}

func (p *Parser) result(r *toolResult, sc scope) []event.Event {
	id := strings.TrimSpace(r.ToolCallID)
	if id == "" {
		return nil
	}
	epoch := p.epochOf(sc)
	c, found := p.take(sc.agent, epoch, id)
	rv := &r.ReturnValue
	out := outputText(rv.Output)
	ty := event.ActionUnknown
	if found {
		ty = c.Type
		if ty == event.ActionUnknown && !builtin[c.Tool] && isParts(rv.Output) {
			ty = event.ActionMCPCall // an MCP tool's result: content parts
		}
	}
	ok := !rv.IsError
	a := &event.Action{Type: ty, Tool: c.Tool, Target: string(c.Target), ToolUseID: id, AgentID: sc.agent,
		Sidechain: sc.agent != "", Success: &ok, Model: p.model, Transcript: p.src.Path}
	if ty == event.ActionMCPCall && a.Target == "" {
		a.Target = clipTarget(c.Tool)
	}
	if !ok {
		a.Error = clipError(joinNonEmpty(strings.TrimSpace(rv.Message), strings.TrimSpace(out)))
		if a.Error == "" {
			a.Error = "the tool failed"
		}
	}
	if out == "" {
		out = rv.Message
	}
	a.OutputSize = int64(len(out))
	a.Output = clipOutput(out)
	if found && c.Ms > 0 {
		if d := sc.t.UnixMilli() - c.Ms; d >= 0 {
			a.DurationMs = d
		}
	}
	ev := p.newEvent(event.KindAction, p.actionID(sc.agent, epoch, id), sc.t)
	ev.Action = a
	return []event.Event{ev}
}

// isParts reports whether a tool output is a list of content parts (not a string).
func isParts(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

// outputText is a tool output's text: the string, or its parts' text ("[image]" for media).
func outputText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if raw[0] == '[' {
		return partsOf(raw)
	}
	return string(raw)
}

func (p *Parser) usage(s *statusUpdate, sc scope) []event.Event {
	u := s.TokenUsage
	if u == nil {
		return nil
	}
	tok := event.Tokens{Input: transcript.Count(u.InputOther), Output: transcript.Count(u.Output),
		CacheRead: transcript.Count(u.InputCacheRead), CacheCreation: transcript.Count(u.InputCacheCreation)}
	msgID := strings.TrimSpace(s.MessageID)
	tu := transcript.PricedUsage(p.prices(), p.model, msgID, tok, 0, sc.t)
	if tu == nil {
		return nil
	}
	tu.AgentID = sc.agent
	var id string
	if msgID != "" {
		id = event.ID(Client, "usage", p.st.Session, msgID)
	} else {
		id = event.ID(Client, "usage", p.st.Session, sc.agent, "line", strconv.FormatInt(sc.off, 10))
	}
	var evs []event.Event
	if transcript.NewModel(&p.st.Models, p.model, maxModels) {
		evs = append(evs, p.sessionEvent(event.SessionActive, p.model, p.st.Epoch, sc.t))
	}
	ev := p.newEvent(event.KindTokenUsage, id, sc.t)
	ev.TokenUsage = tu
	return append(evs, ev)
}

// builtin are Kimi CLI's own tools: an unknown name among them is no MCP tool.
var builtin = map[string]bool{
	"Shell": true, "ReadFile": true, "ReadMediaFile": true, "WriteFile": true, "StrReplaceFile": true,
	"Glob": true, "Grep": true, "SearchWeb": true, "FetchURL": true, "Task": true, "Agent": true,
	"CreateSubagent": true, "SetTodoList": true, "Think": true, "SendDMail": true, "AskUserQuestion": true,
	"EnterPlanMode": true, "ExitPlanMode": true, "TaskList": true, "TaskOutput": true, "TaskStop": true,
}

// toolOf maps a tool call to its action type and target.
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "Shell":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "ReadFile", "ReadMediaFile":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "path", "file_path"))
	case "WriteFile":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "path", "file_path"))
	case "StrReplaceFile":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "path", "file_path"))
	case "Glob":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "directory"); dir != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchFiles, t
	case "Grep":
		t := transcript.Arg(in, "pattern")
		if dir := transcript.Arg(in, "path"); dir != "" && dir != "." {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "SearchWeb":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "FetchURL":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "Task", "Agent":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "prompt")
	case "SetTodoList":
		return event.ActionTodoUpdate, ""
	case "AskUserQuestion":
		if qs, ok := in["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				return event.ActionAskUser, transcript.Arg(q, "question")
			}
		}
		return event.ActionAskUser, ""
	}
	return event.ActionUnknown, ""
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, envelope

func (p *Parser) sessionEvent(st, model string, epoch int, t time.Time) event.Event {
	key := "started"
	switch {
	case st == event.SessionStarted:
	case model != "":
		key = "model\x00" + model
	default:
		key = "epoch\x00" + strconv.Itoa(epoch)
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: st, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model, Epoch: epoch}
	if st == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

func (p *Parser) messageEvent(sc scope, part int, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, sc.agent,
		strconv.FormatInt(sc.off, 10), strconv.Itoa(part)), sc.t)
	m.Seq = sc.off*64 + int64(part)
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, sc scope, part int, text string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	model := ""
	if role != event.RoleUser {
		model = p.model
	}
	return []event.Event{p.messageEvent(sc, part, event.Message{Role: role, Text: text, AgentID: sc.agent,
		Sidechain: sc.agent != "", Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

// actionID names a tool call's action: by its agent ("" the session's own), the agent's
// compaction epoch and the tool-call id. Kimi K2 numbers its calls functions.<name>:<n> from 0 in
// every conversation (a subagent's has its own), and may start again once the context is
// compacted: the id alone names several calls. The session's own calls before any compaction
// keep the id they had before agents and epochs were told apart.
func (p *Parser) actionID(agent string, epoch int, toolCallID string) string {
	if agent == "" && epoch == 0 {
		return event.ID(Client, string(event.KindAction), p.st.Session, toolCallID)
	}
	return event.ID(Client, string(event.KindAction), p.st.Session, agent, strconv.Itoa(epoch), toolCallID)
}

// epochOf is the compaction epoch of the agent whose message sc is: the file's own (its
// CompactionBegin lines), or that of a subagent relayed into it (its relayed CompactionBegin).
func (p *Parser) epochOf(sc scope) int {
	if !sc.relayed {
		return p.st.Epoch
	}
	for _, r := range p.st.Relayed {
		if r.Agent == sc.agent {
			return r.Epoch
		}
	}
	return 0
}

// compacted counts a relayed subagent's compaction, keeping the maxAgents most recent agents.
func (p *Parser) compacted(agent string) {
	epoch := 1
	for i, r := range p.st.Relayed {
		if r.Agent == agent {
			epoch = r.Epoch + 1
			p.st.Relayed = append(p.st.Relayed[:i:i], p.st.Relayed[i+1:]...)
			break
		}
	}
	p.st.Relayed = append(p.st.Relayed, agentEpoch{Agent: agent, Epoch: epoch})
	if n := len(p.st.Relayed); n > maxAgents {
		p.st.Relayed = append([]agentEpoch(nil), p.st.Relayed[n-maxAgents:]...)
	}
}

// lineID names an action read from one line (a prompt, an interruption, a compaction).
func (p *Parser) lineID(what string, sc scope) string {
	return event.ID(Client, string(event.KindAction), p.st.Session, sc.agent, what, strconv.FormatInt(sc.off, 10))
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

// unixTime reads a wire timestamp: unix seconds, a float (or a numeric string).
func unixTime(raw json.RawMessage) (time.Time, bool) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 31536000 || f > 9e9 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(), true // Python's time.time(): µs
}

func inputHash(args string) string {
	if strings.TrimSpace(args) == "" {
		return ""
	}
	h := sha256.Sum256([]byte(args))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func joinNonEmpty(ss ...string) string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
