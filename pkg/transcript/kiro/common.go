package kiro

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves a parser and what its state keeps.
const (
	maxTarget  = 500      // runes
	maxError   = 2 << 10  // bytes
	maxOutput  = 8 << 10  // bytes
	maxMessage = 64 << 10 // bytes
	maxPending = 128      // tool calls waiting for their result, per session
	maxModels  = 16
	maxPart    = 63
	maxSeen    = 1024
	maxKey     = 128 // bytes of a client id kept in state
)

// scope is the session a parser's events belong to and how they are stamped.
type scope struct {
	path    string // the file (or database) read, for Transcript and TranscriptPath
	session string // the session events carry: the root session for a subagent
	agent   string // the subagent whose record it is; "" for the session's own
	cwd     string
	project string
}

func (s *scope) setCwd(cwd string) { transcript.SetCwd(&s.cwd, &s.project, cwd) }

func (s *scope) relPath(file string) string { return transcript.RelPath(file, s.cwd, s.project) }

func (s *scope) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: s.session, Project: s.project, V: event.SchemaVersion}
}

// owner is the conversation ids are keyed by: the subagent's own, else the session's.
func (s *scope) owner() string {
	if s.agent != "" {
		return s.agent
	}
	return s.session
}

func (s *scope) sessionEvent(state, model, parent string, t time.Time) event.Event {
	key := "started"
	if state != event.SessionStarted {
		key = "model\x00" + model
	}
	ev := s.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), s.session, key), t)
	ev.Session = &event.Session{State: state, Cwd: s.cwd, TranscriptPath: s.path, Model: model, ParentSessionID: parent}
	if state == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

// modelEvent reports a model once per session (an active session event naming it).
func (s *scope) modelEvent(models *[]string, model string, t time.Time) []event.Event {
	if s.agent != "" || !transcript.NewModel(models, model, maxModels) {
		return nil
	}
	return []event.Event{s.sessionEvent(event.SessionActive, model, "", t)}
}

func (s *scope) titleEvent(title string, t time.Time) event.Event {
	ev := s.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), s.session, "title", title), t)
	ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TranscriptPath: s.path}
	return ev
}

func (s *scope) message(key string, part int, seq int64, t time.Time, m event.Message) event.Event {
	ev := s.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), s.owner(), key, strconv.Itoa(part)), t)
	m.Seq = seq
	m.AgentID = s.agent
	ev.Message = &m
	return ev
}

func (s *scope) textMessage(role, key string, part int, seq int64, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{s.message(key, part, seq, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

// prompt is a prompt the user typed: a user_prompt action and a user message. A subagent's first
// prompt is its parent's task: a user message, no prompt.
func (s *scope) prompt(key string, seq int64, t time.Time, text, msgID string, task bool) []event.Event {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	var evs []event.Event
	if !task {
		ev := s.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), s.owner(), "prompt", key), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(text), MessageID: msgID, AgentID: s.agent,
			Transcript: s.path}
		evs = append(evs, ev)
	}
	return append(evs, s.textMessage(event.RoleUser, key, 0, seq, t, text, msgID, "")...)
}

// summary is a compaction: a summary message and a context_compacted action, keyed by the
// summary's text.
func (s *scope) summary(text string, seq int64, t time.Time) []event.Event {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	key := "summary\x00" + hashText(text)
	ev := s.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), s.owner(), key), t)
	ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: s.agent, Transcript: s.path}
	return append([]event.Event{ev}, s.textMessage(event.RoleSummary, key, 0, seq, t, text, "", "")...)
}

// call is a tool call as a parser reads it: its action (id, type, target) and, once read, its
// result.
type call struct {
	ID     string // the client's tool-use id
	Name   string // the raw tool name
	Input  json.RawMessage
	Msg    string // the message that made the call
	Model  string
	Result *result
}

// result is the outcome of a tool call.
type result struct {
	OK     bool
	Known  bool
	Output string
	Size   int64
	Error  string
}

// actionID is the id of the action of a tool call.
func (s *scope) actionID(toolUseID string) string {
	return event.ID(Client, string(event.KindAction), s.owner(), toolUseID)
}

// action is the action event of a tool call, with its result when it has one.
func (s *scope) action(c *call, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	ty, target := s.toolOf(c.Name, in)
	a := &event.Action{Type: ty, Tool: c.Name, Target: clipTarget(target), ToolUseID: c.ID, MessageID: c.Msg,
		AgentID: s.agent, Model: c.Model, InputHash: transcript.InputHash(c.Input), Transcript: s.path}
	s.outcome(a, c.Result)
	ev := s.newEvent(event.KindAction, s.actionID(c.ID), t)
	ev.Action = a
	return ev
}

// outcome sets a's outcome from r.
func (s *scope) outcome(a *event.Action, r *result) {
	if r == nil || !r.Known {
		return
	}
	ok := r.OK
	a.Success = &ok
	a.Output, a.OutputSize = clipOutput(r.Output), r.Size
	if !ok {
		a.Error = clipError(transcript.FirstNonEmpty(r.Error, r.Output, "failed"))
	}
}

// callMessage is the tool_call message of a call, in its place among the messages.
func (s *scope) callMessage(c *call, key string, part int, seq int64, t time.Time, target string) event.Event {
	return s.message(key, part, seq, t, event.Message{Role: event.RoleToolCall, Text: target, Tool: c.Name,
		ToolUseID: c.ID, MessageID: c.Msg, Model: c.Model})
}

// pending is a tool call a line reader keeps until its result: the action's type and target
// (the target as a memo: no text in the state).
type pending struct {
	ID     string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"`
	Model  string           `json:"model,omitempty"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c pending) PendingID() string { return c.ID }

// take returns and forgets the pending call id.
func take(list *transcript.Pending[pending], id string) (pending, bool) {
	for i := len(*list) - 1; i >= 0; i-- {
		if (*list)[i].ID == id {
			p := (*list)[i]
			*list = append((*list)[:i], (*list)[i+1:]...)
			return p, true
		}
	}
	return pending{}, false
}

// resultEvent is the action event of a result read on a later line than its call: the call's
// type and target when the call is known, the outcome in any case, under the call's id.
func (s *scope) resultEvent(list *transcript.Pending[pending], toolUseID, tool string, r *result, t time.Time) event.Event {
	a := &event.Action{Type: event.ActionUnknown, Tool: tool, ToolUseID: toolUseID, AgentID: s.agent, Transcript: s.path}
	if p, ok := take(list, toolUseID); ok {
		a.Type, a.Tool, a.Target, a.MessageID, a.Model = p.Type, p.Tool, string(p.Target), p.Msg, p.Model
	}
	s.outcome(a, r)
	ev := s.newEvent(event.KindAction, s.actionID(toolUseID), t)
	ev.Action = a
	return ev
}

// ---------------------------------------------------------------------------------------------
// Helpers

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }
func clipError(s string) string  { return transcript.Clip(strings.TrimSpace(s), maxError) }
func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

// keyOf keeps a client id short enough for the state (a hash of a longer one).
func keyOf(s string) string {
	if len(s) <= maxKey {
		return s
	}
	return "#" + hashText(s)
}

func hashText(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

// msTime reads unix milliseconds; zero when out of range.
func msTime(ms int64) (time.Time, bool) {
	if ms > 31536000000 && ms < 9e12 {
		return time.UnixMilli(ms).UTC(), true
	}
	return time.Time{}, false
}

// anyTime reads a time written as RFC 3339, unix seconds (Kiro's v2 log, a float) or unix
// milliseconds (a number or a numeric string).
func anyTime(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return time.Time{}, false
	}
	var s string
	if raw[0] == '"' {
		if json.Unmarshal(raw, &s) != nil {
			return time.Time{}, false
		}
		if t, ok := transcript.ParseTime(strings.TrimSpace(s)); ok {
			return t, true
		}
	} else {
		s = string(raw)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f != f || f <= 0 {
		return time.Time{}, false
	}
	if f < 1e11 { // seconds
		if f < 31536000 || f > 9e9 {
			return time.Time{}, false
		}
		return time.UnixMilli(int64(f * 1000)).UTC(), true
	}
	return msTime(int64(f))
}

// resultText reads a tool result's content as the three stores write it: a string; a list of
// {"Text": ...} / {"Json": ...} blocks (the v1 store); a list of {"kind": "text"|"json", "data":
// ...} blocks (the v2 log); or any JSON. It returns the text, whether a JSON block reported a
// non-zero exit status (a shell command that failed), and that status's stderr.
func resultText(raw json.RawMessage) (text string, failed bool, stderr string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", false, ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false, ""
	}
	var blocks []map[string]json.RawMessage
	if json.Unmarshal(raw, &blocks) != nil {
		out, f, e := jsonResult(raw)
		return out, f, e
	}
	var parts []string
	for _, b := range blocks {
		var kind string
		_ = json.Unmarshal(b["kind"], &kind)
		switch {
		case b["Text"] != nil:
			_ = json.Unmarshal(b["Text"], &s)
			parts = append(parts, s)
		case b["Json"] != nil:
			out, f, e := jsonResult(b["Json"])
			parts, failed, stderr = append(parts, out), failed || f, transcript.FirstNonEmpty(stderr, e)
		case kind == "text":
			s = ""
			_ = json.Unmarshal(b["data"], &s)
			parts = append(parts, s)
		case kind == "json":
			out, f, e := jsonResult(b["data"])
			parts, failed, stderr = append(parts, out), failed || f, transcript.FirstNonEmpty(stderr, e)
		}
	}
	return strings.Join(parts, "\n"), failed, stderr
}

// jsonResult reads a JSON tool result: a shell command's {exit_status, stdout, stderr} as its
// output and outcome, anything else as its JSON text.
func jsonResult(raw json.RawMessage) (string, bool, string) {
	var r struct {
		ExitStatus json.RawMessage `json:"exit_status"`
		Stdout     *string         `json:"stdout"`
		Stderr     string          `json:"stderr"`
	}
	if json.Unmarshal(raw, &r) == nil && r.Stdout != nil {
		code := strings.Trim(strings.TrimSpace(string(r.ExitStatus)), `"`)
		failed := code != "" && code != "0" && code != "null"
		out := *r.Stdout
		if r.Stderr != "" {
			out = strings.TrimRight(out, "\n") + "\n" + r.Stderr
		}
		return out, failed, r.Stderr
	}
	return string(bytes.TrimSpace(raw)), false, ""
}
