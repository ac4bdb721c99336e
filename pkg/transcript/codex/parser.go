package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the producing component codex events name in their source field.
const Component = "observer-watch"

// Limits on what a parser keeps and emits.
const (
	maxTarget      = 500  // runes
	maxError       = 2048 // bytes
	maxOutput      = 8192 // bytes
	maxPending     = 64   // calls waiting for a result
	maxSmallMaps   = 32   // web searches and exec processes remembered
	maxChainLength = 16   // fork ancestors followed on disk
)

// Parser turns the lines of one rollout into events. It is not safe for concurrent use.
type Parser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	resolve func(id string) string // the session a session was forked from, read from disk

	st    state
	stats transcript.Stats

	projCwd, proj string // project.Root cache
}

var _ transcript.Parser = (*Parser)(nil)

// state is everything a parser needs to resume after the last line it was given. It is JSON.
type state struct {
	V         int    `json:"v"`
	SessionID string `json:"sid,omitempty"`
	Root      string `json:"root,omitempty"`      // session at the start of the fork chain
	RootOpen  bool   `json:"root_open,omitempty"` // the root may itself be a fork: follow further
	MetaSeen  bool   `json:"meta,omitempty"`      // the file's own session_meta was read
	Legacy    bool   `json:"legacy,omitempty"`    // bare format (no envelope)

	Originator string `json:"orig,omitempty"`
	CLIVersion string `json:"cli,omitempty"`

	Cwd      string `json:"cwd,omitempty"`
	Model    string `json:"model,omitempty"`
	Turn     string `json:"turn,omitempty"`
	LastTime int64  `json:"t,omitempty"` // unix nanoseconds of the last timestamp seen

	Base       *counts `json:"base,omitempty"`      // last cumulative total
	PrevLast   *counts `json:"prev_last,omitempty"` // last_token_usage of the last token_count
	SinceUsage bool    `json:"since,omitempty"`     // a response item came after the last token_count
	Records    bool    `json:"records,omitempty"`   // usage comes from token_usage_record lines

	Ctx string         `json:"ctx,omitempty"` // context of content-keyed actions
	Occ map[string]int `json:"occ,omitempty"` // occurrences of each content in Ctx

	Pending      []pending `json:"pending,omitempty"`
	WebSearches  []kv      `json:"ws,omitempty"`   // shortHash of a query -> web_search_end call id
	ExecSessions []kv      `json:"exec,omitempty"` // unified-exec process id -> exec call id

	SessionModel string `json:"smodel,omitempty"` // model last reported in a session event
	Epoch        int    `json:"epoch,omitempty"`

	// PromptForm is where this session's prompts come from, the first form seen: event_msg
	// user_message (Codex up to 0.16x) or event_msg item_completed with a UserMessage item (0.171).
	// A prompt written in both forms is counted once.
	PromptForm string `json:"pform,omitempty"`

	// Line counts the lines read, so that a message's Seq follows its line in the file.
	Line int64 `json:"ln,omitempty"`
}

type kv struct {
	K string `json:"k"`
	V string `json:"v"`
}

// pending is a tool call whose result may still come.
type pending struct {
	CallID string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Time   int64            `json:"t"`
	Cmd    transcript.Memo  `json:"cmd,omitempty"`  // exec call classified as a read or patch: its command
	Exec   string           `json:"exec,omitempty"` // write_stdin: the exec call it writes to
	Done   bool             `json:"done,omitempty"` // a final result was seen
}

// Meta is what a rollout says about the client that wrote it.
type Meta struct {
	SessionID  string // the file's session
	Root       string // the session at the start of its fork chain
	Originator string // codex_cli_rs, codex_vscode, codex-tui, codex_exec, Codex Desktop, ...
	CLIVersion string
	Model      string // latest model
	Cwd        string
}

// Meta returns what the parser learned about the session so far.
func (p *Parser) Meta() Meta {
	return Meta{SessionID: p.st.SessionID, Root: p.rootID(), Originator: p.st.Originator,
		CLIVersion: p.st.CLIVersion, Model: p.st.Model, Cwd: p.st.Cwd}
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// envelope is one rollout line.
type envelope struct {
	Timestamp  json.RawMessage `json:"timestamp"`
	Type       *string         `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType json.RawMessage `json:"record_type"`
	ID         json.RawMessage `json:"id"`
}

func malformed(format string, args ...any) error {
	return transcript.Malformed(Client, format, args...)
}

// Record parses one complete line.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	p.st.Line++
	evs, err := p.record(off, line)
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

func (p *Parser) record(_ int64, line []byte) ([]event.Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, malformed("line is not UTF-8")
	}
	if line[0] != '{' {
		return nil, malformed("line is not a JSON object")
	}
	var env envelope
	if err := json.Unmarshal(line, &env); err != nil {
		return nil, malformed("%v", err)
	}
	t, hasTime := p.lineTime(env.Timestamp)

	if env.Payload == nil || env.Type == nil {
		return p.bare(line, &env, t, hasTime)
	}
	if len(env.Payload) > 0 && env.Payload[0] != '{' {
		if string(env.Payload) == "null" {
			p.stats.CountUnknown(*env.Type + "/null")
			return nil, nil
		}
		return nil, malformed("%s payload is not an object", *env.Type)
	}
	switch typ := *env.Type; typ {
	case "session_meta":
		return p.sessionMeta(env.Payload, t, hasTime)
	case "turn_context":
		return p.turnContext(env.Payload, t, hasTime)
	case "response_item":
		return p.responseItem(env.Payload, t, hasTime)
	case "event_msg":
		return p.eventMsg(env.Payload, t, hasTime)
	case "compacted":
		return p.compacted(env.Payload, t, hasTime)
	case "token_usage_record":
		return p.usageRecord(env.Payload, t, hasTime)
	default:
		p.stats.CountUnknown(typ)
		return nil, nil
	}
}

// bare handles lines of the format without an envelope.
func (p *Parser) bare(line []byte, env *envelope, t time.Time, hasTime bool) ([]event.Event, error) {
	switch {
	case env.RecordType != nil:
		return nil, nil // {"record_type":"state"}: a marker of the bare format
	case env.Type == nil && env.ID != nil:
		p.st.Legacy = true
		return p.sessionMeta(line, t, hasTime)
	case env.Type == nil:
		return nil, malformed("record has no type")
	case responseItemTypes[*env.Type]:
		p.st.Legacy = true
		return p.responseItem(line, t, hasTime)
	default:
		p.stats.CountUnknown(*env.Type)
		return nil, nil
	}
}

var responseItemTypes = map[string]bool{
	"message": true, "reasoning": true, "function_call": true, "function_call_output": true,
	"custom_tool_call": true, "custom_tool_call_output": true, "local_shell_call": true,
	"web_search_call": true, "ghost_snapshot": true, "compaction": true,
}

// lineTime parses the line's timestamp, falling back to the last one seen.
func (p *Parser) lineTime(raw json.RawMessage) (time.Time, bool) {
	var s string
	if len(raw) > 0 && json.Unmarshal(raw, &s) == nil && s != "" {
		if t, ok := transcript.ParseTime(s); ok {
			p.st.LastTime = t.UnixNano()
			return t, true
		}
	}
	if p.st.LastTime != 0 {
		return time.Unix(0, p.st.LastTime).UTC(), true
	}
	return time.Time{}, false
}

// needTime reports an error for a line that would produce events but has no usable time.
func needTime(hasTime bool, what string) error {
	if hasTime {
		return nil
	}
	return malformed("%s has no timestamp", what)
}

// ---------------------------------------------------------------------------------------------
// Envelope and ids

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

// rootID returns the session at the start of the file's fork chain, following the chain on disk
// when the file did not carry its ancestors' session_meta lines.
func (p *Parser) rootID() string {
	if p.st.RootOpen && p.resolve != nil {
		seen := map[string]bool{p.st.Root: true}
		for range maxChainLength {
			parent := p.resolve(p.st.Root)
			if parent == "" || seen[parent] {
				break
			}
			seen[parent] = true
			p.st.Root = parent
		}
		p.st.RootOpen = false
	}
	if p.st.Root != "" {
		return p.st.Root
	}
	return p.st.SessionID
}

func (p *Parser) callID(callID string) string {
	return event.ID(Client, string(event.KindAction), p.rootID(), callID)
}

// contentID keys an action that has no id of its own by its content, the context it appears in
// (turn and last cumulative total) and its occurrence in that context. A copy of the same history
// in a fork yields the same ids; the byte offset would not.
func (p *Parser) contentID(kind, content string) string {
	return p.contentKey(kind, content).id(event.KindAction)
}

// contentKey is what contentID hashes: the root, the kind, the context, the content's hash and its
// occurrence in the context. A record that yields an action and a message keys both with one
// contentKey, so the message takes no occurrence of its own.
func (p *Parser) contentKey(kind, content string) idKey {
	ctx := p.st.Turn + "|" + p.totalKey()
	if ctx != p.st.Ctx || p.st.Occ == nil {
		p.st.Ctx, p.st.Occ = ctx, map[string]int{}
	}
	h := shortHash(kind + "\x00" + content)
	p.st.Occ[h]++
	return idKey{p.rootID(), kind, ctx, h, strconv.Itoa(p.st.Occ[h])}
}

// idKey is the parts of a content-keyed event id after the client and kind.
type idKey []string

func (k idKey) id(kind event.Kind, more ...string) string {
	return event.ID(append(append([]string{Client, string(kind)}, k...), more...)...)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func (p *Parser) action(id string, t time.Time, a *event.Action) event.Event {
	ev := p.newEvent(event.KindAction, id, t)
	if a.Model == "" {
		a.Model = p.st.Model
	}
	a.Transcript = p.src.Path
	ev.Action = a
	return ev
}

// ---------------------------------------------------------------------------------------------
// session_meta and turn_context

type sessionMeta struct {
	ID           string          `json:"id"`
	Timestamp    string          `json:"timestamp"`
	Cwd          string          `json:"cwd"`
	Originator   string          `json:"originator"`
	CLIVersion   string          `json:"cli_version"`
	ForkedFromID string          `json:"forked_from_id"`
	Source       json.RawMessage `json:"source"`
	Git          *struct {
		Branch string `json:"branch"`
	} `json:"git"`
}

// parent returns the session this one was forked from or spawned by.
func (m *sessionMeta) parent() string {
	if m.ForkedFromID != "" {
		return m.ForkedFromID
	}
	var src struct {
		Subagent json.RawMessage `json:"subagent"`
	}
	if len(m.Source) == 0 || m.Source[0] != '{' || json.Unmarshal(m.Source, &src) != nil || len(src.Subagent) == 0 {
		return ""
	}
	var sub struct {
		ThreadSpawn struct {
			ParentThreadID string `json:"parent_thread_id"`
		} `json:"thread_spawn"`
	}
	if src.Subagent[0] == '{' && json.Unmarshal(src.Subagent, &sub) == nil {
		return sub.ThreadSpawn.ParentThreadID
	}
	return ""
}

func (p *Parser) sessionMeta(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var m sessionMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, malformed("session_meta: %v", err)
	}
	parent := m.parent()
	if p.st.MetaSeen {
		// A copied ancestor's meta (a fork replays its parent's rollout): extend the chain.
		if p.st.RootOpen && m.ID != "" && strings.EqualFold(m.ID, p.st.Root) {
			if parent != "" && !strings.EqualFold(parent, p.st.Root) {
				p.st.Root = parent
			} else {
				p.st.RootOpen = false
			}
		}
		return nil, nil
	}
	p.st.MetaSeen = true
	if p.st.SessionID == "" {
		p.st.SessionID = m.ID
	}
	p.st.Root = p.st.SessionID
	if parent != "" && !strings.EqualFold(parent, p.st.SessionID) {
		p.st.Root, p.st.RootOpen = parent, true
	}
	p.st.Originator, p.st.CLIVersion = m.Originator, m.CLIVersion
	if m.Cwd != "" {
		p.st.Cwd = m.Cwd
	}
	started, err := time.Parse(time.RFC3339Nano, m.Timestamp)
	if err == nil {
		started = started.UTC()
		if !hasTime {
			t, hasTime = started, true
			p.st.LastTime = t.UnixNano()
		}
	}
	if err := needTime(hasTime, "session_meta"); err != nil {
		return nil, err
	}
	s := &event.Session{State: event.SessionStarted, Cwd: m.Cwd, TranscriptPath: p.src.Path,
		ParentSessionID: parent, StartedAt: started}
	if m.Git != nil {
		s.GitBranch = m.Git.Branch
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "started"), t)
	ev.Session = s
	return []event.Event{ev}, nil
}

type turnContext struct {
	Cwd    string `json:"cwd"`
	Model  string `json:"model"`
	TurnID string `json:"turn_id"`
}

func (p *Parser) turnContext(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var tc turnContext
	if err := json.Unmarshal(raw, &tc); err != nil {
		return nil, malformed("turn_context: %v", err)
	}
	if tc.Cwd != "" {
		p.st.Cwd = tc.Cwd
	}
	if tc.TurnID != "" {
		p.st.Turn = tc.TurnID
	}
	if tc.Model == "" {
		return nil, nil
	}
	p.st.Model = tc.Model
	if tc.Model == p.st.SessionModel || !hasTime {
		return nil, nil
	}
	p.st.SessionModel = tc.Model
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "model", tc.Model), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: tc.Model, Cwd: p.st.Cwd, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

// compacted is a context compaction: the history was replaced by a summary.
func (p *Parser) compacted(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var c struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, malformed("compacted: %v", err)
	}
	if err := needTime(hasTime, "compacted"); err != nil {
		return nil, err
	}
	p.st.Epoch++
	k := p.contentKey("compacted", c.Message)
	act := p.action(k.id(event.KindAction), t, &event.Action{Type: event.ActionContextCompacted})
	ses := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "epoch",
		strconv.Itoa(p.st.Epoch)), t)
	ses.Session = &event.Session{State: event.SessionActive, Epoch: p.st.Epoch, TranscriptPath: p.src.Path}
	return append([]event.Event{act, ses}, p.summaryMessage(k, c.Message, t)...), nil
}

// ---------------------------------------------------------------------------------------------
// event_msg

type eventMsg struct {
	Type             string          `json:"type"`
	Message          json.RawMessage `json:"message"`
	Info             *tokenInfo      `json:"info"`
	RateLimits       *rateLimits     `json:"rate_limits"`
	CallID           string          `json:"call_id"`
	TurnID           string          `json:"turn_id"`
	Command          json.RawMessage `json:"command"`
	Cwd              string          `json:"cwd"`
	ProcessID        json.RawMessage `json:"process_id"`
	ExitCode         json.RawMessage `json:"exit_code"`
	Duration         json.RawMessage `json:"duration"`
	DurationMs       json.RawMessage `json:"duration_ms"`
	Stdout           string          `json:"stdout"`
	Stderr           string          `json:"stderr"`
	AggregatedOutput string          `json:"aggregated_output"`
	FormattedOutput  string          `json:"formatted_output"`
	Success          *bool           `json:"success"`
	Changes          json.RawMessage `json:"changes"`
	Reason           json.RawMessage `json:"reason"`
	Invocation       *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	Result     json.RawMessage `json:"result"`
	ThreadID   string          `json:"thread_id"`
	ThreadName *string         `json:"thread_name"`
	Item       *struct {
		Type    string          `json:"type"`
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
	} `json:"item"`
}

// prompt yields the user_prompt action of an envelope-format session, from form ("user_message"
// or "item"), unless the session's prompts come from the other form.
func (p *Parser) prompt(msg, form, messageID string, t time.Time, hasTime bool) ([]event.Event, error) {
	if p.st.Legacy || (p.st.PromptForm != "" && p.st.PromptForm != form) {
		return nil, nil
	}
	if err := needTime(hasTime, form); err != nil {
		return nil, err
	}
	p.st.PromptForm = form
	k := p.contentKey("user_prompt", msg)
	return append([]event.Event{p.action(k.id(event.KindAction), t,
		&event.Action{Type: event.ActionUserPrompt, Target: clipTarget(promptText(msg))})},
		p.userMessage(k, msg, messageID, t)...), nil
}

// knownEvents are event_msg types that carry nothing this package reports.
var knownEvents = map[string]bool{
	"agent_message": true, "agent_reasoning": true, "agent_reasoning_raw_content": true,
	"agent_message_delta": true, "agent_reasoning_delta": true, "agent_reasoning_section_break": true,
	"exec_command_begin": true, "exec_command_output_delta": true, "terminal_interaction": true,
	"patch_apply_begin": true, "mcp_tool_call_begin": true, "web_search_begin": true,
	"turn_diff": true, "plan_update": true, "entered_review_mode": true, "exited_review_mode": true,
	"undo_started": true, "undo_completed": true, "warning": true, "background_event": true,
	"context_compacted": true, "item_started": true, "view_image_tool_call": true,
	"session_name_updated": true, "session_configured": true,
	"shutdown_complete": true, "deprecation_notice": true, "exec_approval_request": true,
	"apply_patch_approval_request": true, "elicitation_request": true, "request_user_input": true,
	"thread_rolled_back": true, "collab_agent_spawn_begin": true, "collab_agent_spawn_end": true,
	"collab_agent_interaction_begin": true, "collab_agent_interaction_end": true,
	"collab_waiting_begin": true, "collab_waiting_end": true, "collab_close_begin": true, "collab_close_end": true,
	"image_generation_begin": true, "image_generation_end": true,
}

func (p *Parser) eventMsg(raw json.RawMessage, t time.Time, hasTime bool) ([]event.Event, error) {
	var e eventMsg
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, malformed("event_msg: %v", err)
	}
	switch e.Type {
	case "token_count":
		evs, err := p.tokenCount(e.Info, t, hasTime)
		if err == nil && hasTime {
			evs = append(evs, p.limits(e.RateLimits, t)...)
		}
		return evs, err
	case "task_started":
		if e.TurnID != "" {
			p.st.Turn = e.TurnID
		}
		return nil, nil
	case "web_search_end":
		var q struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal(raw, &q)
		if e.CallID != "" {
			p.st.WebSearches = putKV(p.st.WebSearches, shortHash(q.Query), e.CallID)
		}
		return nil, nil
	case "user_message":
		return p.prompt(jsonText(e.Message), "user_message", "", t, hasTime)
	case "item_completed":
		// Codex 0.171 reports the turn's items as they complete; a UserMessage is the prompt.
		// The other items (commands, agent messages) are read from their response_item lines.
		if e.Item == nil || e.Item.Type != "UserMessage" {
			return nil, nil
		}
		return p.prompt(contentText(e.Item.Content), "item", e.Item.ID, t, hasTime)
	case "task_complete":
		if err := needTime(hasTime, "task_complete"); err != nil {
			return nil, err
		}
		a := &event.Action{Type: event.ActionTaskComplete}
		if ms, ok := jsonInt(e.DurationMs); ok && ms > 0 {
			a.DurationMs = ms
		}
		key := e.TurnID
		if key == "" {
			key = string(raw)
		}
		return []event.Event{p.action(p.contentID("task_complete", key), t, a)}, nil
	case "turn_aborted":
		if err := needTime(hasTime, "turn_aborted"); err != nil {
			return nil, err
		}
		reason := jsonText(e.Reason)
		key := e.TurnID + "\x00" + reason
		return []event.Event{p.action(p.contentID("turn_aborted", key), t,
			&event.Action{Type: event.ActionTurnAborted, Error: clipError(reason)})}, nil
	case "error", "stream_error":
		if err := needTime(hasTime, e.Type); err != nil {
			return nil, err
		}
		msg := jsonText(e.Message)
		return []event.Event{p.action(p.contentID(e.Type, msg), t,
			&event.Action{Type: event.ActionAPIError, Tool: e.Type, Error: clipError(msg)})}, nil
	case "thread_name_updated":
		return p.threadName(&e, t, hasTime)
	case "exec_command_end":
		return p.execEnd(&e, t, hasTime)
	case "patch_apply_end":
		return p.patchEnd(&e, t, hasTime)
	case "mcp_tool_call_end":
		return p.mcpEnd(&e, t, hasTime)
	default:
		if !knownEvents[e.Type] {
			p.stats.CountUnknown("event_msg/" + e.Type)
		}
		return nil, nil
	}
}

// threadName reads a thread_name_updated: the name Codex gave the thread (see Sessions in the
// package doc). A fork's copy of its parent's names the parent's thread: not this session's.
func (p *Parser) threadName(e *eventMsg, t time.Time, hasTime bool) ([]event.Event, error) {
	if e.ThreadName == nil || e.ThreadID != "" && !strings.EqualFold(e.ThreadID, p.st.SessionID) {
		return nil, nil
	}
	title, ok := event.CleanTitle(*e.ThreadName)
	if !ok {
		return nil, nil
	}
	if err := needTime(hasTime, "thread_name_updated"); err != nil {
		return nil, err
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.SessionID, "title",
		strconv.FormatInt(t.UnixNano(), 10), title), t)
	ev.Session = &event.Session{Title: title, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

// promptText returns what the user typed: the text after Codex's "## My request for Codex:" marker
// when an IDE wrapped the prompt with context.
func promptText(s string) string {
	const marker = "## My request for Codex:"
	if i := strings.LastIndex(s, marker); i >= 0 {
		return strings.TrimSpace(s[i+len(marker):])
	}
	return strings.TrimSpace(s)
}

// ---------------------------------------------------------------------------------------------
// Small JSON helpers

// jsonText returns a JSON string's value, or the raw JSON of anything else ("" for null).
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// jsonInt reads a JSON number (or a numeric string) as an int64.
func jsonInt(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		if f > 9e18 || f < -9e18 {
			return 0, false
		}
		return int64(f), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			return n, true
		}
	}
	return 0, false
}

// jsonDurationMs reads a Rust Duration ({"secs":..,"nanos":..}), a number of seconds, or a string
// such as "1.5s", as milliseconds.
func jsonDurationMs(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, false
	}
	var d struct {
		Secs  *float64 `json:"secs"`
		Nanos float64  `json:"nanos"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &d) == nil && d.Secs != nil {
		return clampMs(*d.Secs*1000 + d.Nanos/1e6)
	}
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return clampMs(f * 1000)
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if dur, err := time.ParseDuration(strings.TrimSpace(s)); err == nil {
			return dur.Milliseconds(), dur >= 0
		}
	}
	return 0, false
}

func clampMs(ms float64) (int64, bool) {
	if ms < 0 || ms > 1e15 || ms != ms {
		return 0, false
	}
	return int64(ms + 0.5), true
}

func putKV(list []kv, k, v string) []kv {
	for i := range list {
		if list[i].K == k {
			list[i].V = v
			return list
		}
	}
	list = append(list, kv{k, v})
	if len(list) > maxSmallMaps {
		list = list[len(list)-maxSmallMaps:]
	}
	return list
}

func getKV(list []kv, k string) (string, bool) {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].K == k {
			return list[i].V, true
		}
	}
	return "", false
}
