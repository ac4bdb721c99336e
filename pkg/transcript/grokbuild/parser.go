package grokbuild

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser and what State keeps.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxPending = 64
	maxModels  = 16
	maxBlock   = 63
)

// ticksPerUSD is Grok Build's cost scale.
const ticksPerUSD = 1e10

// call is a tool call waiting for its result: its id, tool name and kinds; no input, no title.
type call struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	Kind string `json:"kind,omitempty"`
	NS   string `json:"ns,omitempty"`
}

// state is what a parser keeps between lines: JSON, small, no transcript text.
type state struct {
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Model   string   `json:"model,omitempty"`
	Models  []string `json:"models,omitempty"`
	Calls   []call   `json:"calls,omitempty"`
}

// Parser reads one updates.jsonl.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
}

func newParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("grok-build parser state for %s: %w", src.Path, err)
		}
	}
	if p.st.Session == "" {
		sess := filepath.Dir(src.Path)
		if src.AgentID != "" {
			sess = filepath.Dir(filepath.Dir(sess)) // <session>/subagents/<id>
		}
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, filepath.Base(sess))
		if src.Path != "" {
			transcript.SetCwd(&p.st.Cwd, &p.st.Project, CwdOf(filepath.Dir(sess)))
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

type line struct {
	Timestamp json.RawMessage `json:"timestamp"`
	Method    string          `json:"method"`
	Params    struct {
		Update json.RawMessage `json:"update"`
		Meta   struct {
			EventID          string          `json:"eventId"`
			AgentTimestampMs json.RawMessage `json:"agentTimestampMs"`
		} `json:"_meta"`
	} `json:"params"`
}

type update struct {
	Kind    string          `json:"sessionUpdate"`
	Content json.RawMessage `json:"content"` // a chunk's {type, text}; a tool update's blocks
	Meta    struct {
		ModelID  string   `json:"modelId"`
		HostTurn bool     `json:"hostTurn"`
		Tool     *xaiTool `json:"x.ai/tool"`
	} `json:"_meta"`
	ToolCallID   string          `json:"toolCallId"` // no title: the ACP title is text ("Run `make`")
	ToolKind     string          `json:"kind"`
	Status       string          `json:"status"`
	RawInput     json.RawMessage `json:"rawInput"`
	RawOutput    json.RawMessage `json:"rawOutput"`
	PromptID     string          `json:"prompt_id"`
	StopReason   string          `json:"stop_reason"`
	Usage        *promptUsage    `json:"usage"`
	ModelID      string          `json:"model_id"`
	NewModelID   string          `json:"new_model_id"`
	TokensBefore *int64          `json:"tokens_before"`
}

type xaiTool struct {
	Name      string          `json:"name"`
	Kind      string          `json:"kind"`
	Namespace string          `json:"namespace"`
	Input     json.RawMessage `json:"input"`
}

type usageModel struct {
	Input         flexInt  `json:"inputTokens"`
	Output        flexInt  `json:"outputTokens"`
	CachedRead    flexInt  `json:"cachedReadTokens"`
	Reasoning     flexInt  `json:"reasoningTokens"`
	CostUSDTicks  *flexInt `json:"costUsdTicks"`
	CostIsPartial bool     `json:"costIsPartial"`
}

type promptUsage struct {
	usageModel
	ModelUsage map[string]usageModel `json:"modelUsage"`
	Incomplete bool                  `json:"usageIsIncomplete"`
}

// Record parses one updates.jsonl line.
func (p *Parser) Record(off int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, nil
	case !utf8.Valid(raw):
		return nil, transcript.Malformed(Client, "line at offset %d is not UTF-8", off)
	case raw[0] != '{':
		return nil, transcript.Malformed(Client, "line at offset %d is not a JSON object", off)
	}
	var l line
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, transcript.Malformed(Client, "line at offset %d does not parse: %v", off, err)
	}
	switch l.Method {
	case "session/update", "_x.ai/session/update":
	default:
		p.stats.CountUnknown("method " + l.Method)
		return nil, nil
	}
	var k struct {
		Kind string `json:"sessionUpdate"`
	}
	if len(l.Params.Update) == 0 || json.Unmarshal(l.Params.Update, &k) != nil || k.Kind == "" {
		return nil, transcript.Malformed(Client, "line at offset %d has no session update", off)
	}
	if !handled[k.Kind] {
		return nil, nil // a plan, a mode or command list, a hook, a retry, a subagent's progress...
	}
	var u update
	if err := json.Unmarshal(l.Params.Update, &u); err != nil {
		return nil, transcript.Malformed(Client, "%s at offset %d does not decode: %v", k.Kind, off, err)
	}
	t, ok := lineTime(l.Params.Meta.AgentTimestampMs, l.Timestamp)
	if !ok {
		return nil, nil // no time to place it at
	}
	key := transcript.FirstNonEmpty(l.Params.Meta.EventID, "o"+strconv.FormatInt(off, 10))
	seq := off * 64
	if !p.st.Started && p.src.AgentID == "" { // a subagent's file does not start its parent's session
		p.st.Started = true
		evs = append(evs, p.sessionEvent(event.SessionStarted, "", t))
	}
	switch u.Kind {
	case "user_message_chunk":
		if m := strings.TrimSpace(u.Meta.ModelID); m != "" {
			p.st.Model = m
			evs = append(evs, p.modelEvent(m, t)...)
		}
		text, ok := chunkText(u.Content)
		if u.Meta.HostTurn || !ok {
			return evs, nil
		}
		prompt := strings.TrimSpace(userQuery(text))
		if prompt == "" {
			return evs, nil
		}
		ev := p.newEvent(event.KindAction, p.lineID("prompt", key), t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key,
			AgentID: p.src.AgentID, Sidechain: p.src.AgentID != "", Transcript: p.src.Path}
		evs = append(evs, ev)
		evs = append(evs, p.textMessage(event.RoleUser, key, seq, t, prompt)...)
	case "agent_message_chunk", "agent_thought_chunk":
		text, ok := chunkText(u.Content)
		if !ok {
			return evs, nil
		}
		role := event.RoleAssistant
		if u.Kind == "agent_thought_chunk" {
			role = event.RoleThinking
		}
		evs = append(evs, p.textMessage(role, key, seq, t, text)...)
	case "tool_call":
		if u.ToolCallID == "" {
			return evs, nil
		}
		c := p.remember(&u)
		a := p.action(c, &u)
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, u.ToolCallID), t)
		ev.Action = a
		evs = append(evs, ev, p.message(key, 0, seq, t, event.Message{Role: event.RoleToolCall, Text: a.Target,
			Tool: c.Tool, ToolUseID: u.ToolCallID, Model: p.st.Model}))
		if ok, known := outcome(u.Status, u.RawOutput); known {
			p.withOutcome(a, ok, &u)
			p.forget(u.ToolCallID)
		}
	case "tool_call_update":
		ok, known := outcome(u.Status, u.RawOutput)
		if u.ToolCallID == "" || !known {
			return evs, nil
		}
		c := p.remember(&u)
		p.forget(u.ToolCallID)
		ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, u.ToolCallID), t)
		ev.Action = p.withOutcome(p.action(c, &u), ok, &u)
		evs = append(evs, ev)
	case "turn_completed":
		if u.StopReason == "cancelled" {
			ev := p.newEvent(event.KindAction, p.lineID("aborted", transcript.FirstNonEmpty(u.PromptID, key)), t)
			ev.Action = &event.Action{Type: event.ActionTurnAborted, MessageID: u.PromptID, AgentID: p.src.AgentID,
				Sidechain: p.src.AgentID != "", Transcript: p.src.Path}
			evs = append(evs, ev)
		}
		if u.Usage != nil && p.src.AgentID == "" {
			evs = append(evs, p.usage(u.PromptID, key, u.Usage, t)...)
		}
	case "model_changed", "model_auto_switched":
		if m := strings.TrimSpace(transcript.FirstNonEmpty(u.ModelID, u.NewModelID)); m != "" {
			p.st.Model = m
			evs = append(evs, p.modelEvent(m, t)...)
		}
	case "auto_compact_completed":
		ev := p.newEvent(event.KindAction, p.lineID("compacted", key), t)
		ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: p.src.AgentID, Sidechain: p.src.AgentID != "",
			Transcript: p.src.Path}
		if u.TokensBefore != nil {
			ev.Action.Target = "tokens before: " + strconv.FormatInt(*u.TokensBefore, 10)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// handled are the session updates this reader reads.
var handled = map[string]bool{"user_message_chunk": true, "agent_message_chunk": true, "agent_thought_chunk": true,
	"tool_call": true, "tool_call_update": true, "turn_completed": true, "model_changed": true,
	"model_auto_switched": true, "auto_compact_completed": true}

// lineTime is a line's time: _meta.agentTimestampMs, else the envelope's timestamp in seconds.
func lineTime(ms, secs json.RawMessage) (time.Time, bool) {
	var n flexInt
	if len(ms) > 0 && json.Unmarshal(ms, &n) == nil && n > 31536000000 && n < 9e12 {
		return time.UnixMilli(int64(n)).UTC(), true
	}
	if len(secs) > 0 && json.Unmarshal(secs, &n) == nil && n > 31536000 && n < 9e9 {
		return time.Unix(int64(n), 0).UTC(), true
	}
	return time.Time{}, false
}

// remember returns the call u names, recording its tool the first time it is seen.
func (p *Parser) remember(u *update) call {
	for _, c := range p.st.Calls {
		if c.ID == u.ToolCallID {
			return c
		}
	}
	c := call{ID: u.ToolCallID}
	if u.Meta.Tool != nil {
		c.Tool = strings.TrimSpace(u.Meta.Tool.Name)
		c.Kind, c.NS = word(u.Meta.Tool.Kind), word(u.Meta.Tool.Namespace)
	}
	if c.Kind == "" {
		c.Kind = word(u.ToolKind)
	}
	if c.Tool == "" {
		// Without x.ai/tool's name the call is known by its kind, never by its title: the ACP
		// title is text for people, often the command itself, and the state would keep it.
		c.Tool = transcript.FirstNonEmpty(c.Kind, "tool")
	}
	if len(c.Tool) > 128 {
		c.Tool = transcript.CutBytes(c.Tool, 128)
	}
	p.st.Calls = append(p.st.Calls, c)
	if n := len(p.st.Calls); n > maxPending {
		p.st.Calls = append([]call(nil), p.st.Calls[n-maxPending:]...)
	}
	return c
}

// word returns s when it is a short identifier (a tool kind or namespace), else "".
func word(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 32 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return ""
		}
	}
	return s
}

func (p *Parser) forget(id string) {
	for i, c := range p.st.Calls {
		if c.ID == id {
			p.st.Calls = append(p.st.Calls[:i:i], p.st.Calls[i+1:]...)
			return
		}
	}
}

// action is a tool call's action without its outcome.
func (p *Parser) action(c call, u *update) *event.Action {
	in := map[string]any{}
	_ = json.Unmarshal(u.RawInput, &in)
	if u.Meta.Tool != nil {
		var norm map[string]any
		if json.Unmarshal(u.Meta.Tool.Input, &norm) == nil {
			for k, v := range norm {
				if _, ok := in[k]; !ok {
					in[k] = v
				}
			}
		}
	}
	ty, target := toolOf(c, in)
	if ty == event.ActionReadFile || ty == event.ActionWriteFile || ty == event.ActionEditFile {
		target = p.relPath(target)
	}
	return &event.Action{Type: ty, Tool: c.Tool, Target: clipTarget(target), ToolUseID: c.ID, Model: p.st.Model,
		AgentID: p.src.AgentID, Sidechain: p.src.AgentID != "", InputHash: transcript.InputHash(u.RawInput), Transcript: p.src.Path}
}

func (p *Parser) withOutcome(a *event.Action, ok bool, u *update) *event.Action {
	out := resultText(u.RawOutput, u)
	a.Success = &ok
	a.OutputSize = int64(len(out))
	a.Output = clipOutput(out)
	if !ok {
		a.Error = clipError(transcript.FirstNonEmpty(out, u.Status))
	}
	return a
}

// outcome reads a tool call's status: completed succeeded (unless its command exited non-zero),
// failed failed; pending and in_progress are no outcome yet.
func outcome(status string, raw json.RawMessage) (ok, known bool) {
	switch strings.ToLower(status) {
	case "completed":
		var r struct {
			ExitCode  *flexInt `json:"exit_code"`
			ExitCode2 *flexInt `json:"exitCode"`
		}
		if json.Unmarshal(raw, &r) == nil {
			for _, c := range []*flexInt{r.ExitCode, r.ExitCode2} {
				if c != nil && *c != 0 {
					return false, true
				}
			}
		}
		return true, true
	case "failed":
		return false, true
	}
	return false, false
}

// resultText is a tool result's text: rawOutput's text fields, else the content blocks' text, else
// rawOutput's JSON.
func resultText(raw json.RawMessage, u *update) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if inner, ok := obj["Content"]; ok { // {"Content": {content, ...}}
			var o2 map[string]json.RawMessage
			if json.Unmarshal(inner, &o2) == nil {
				obj = o2
			}
		}
		var parts []string
		for _, k := range []string{"stdout", "stderr", "output", "content", "text", "error", "message"} {
			var v string
			if json.Unmarshal(obj[k], &v) == nil && strings.TrimSpace(v) != "" {
				parts = append(parts, v)
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, "\n")
		}
	}
	if t := blocksText(u); t != "" {
		return t
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

// blocksText joins the text of a tool update's content blocks ({type "content", content {type
// "text", text}}).
func blocksText(u *update) string {
	var blocks []struct {
		Type    string `json:"type"`
		Content struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(u.Content, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "content" && b.Content.Type == "text" && strings.TrimSpace(b.Content.Text) != "" {
			parts = append(parts, b.Content.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// chunkText is a message chunk's text ({type "text", text}); other content (an image) is none.
func chunkText(raw json.RawMessage) (string, bool) {
	var c struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Type != "text" {
		return "", false
	}
	return c.Text, true
}

// toolOf maps a tool call to its action type and target.
func toolOf(c call, in map[string]any) (event.ActionType, string) {
	name := strings.ToLower(c.Tool)
	switch name {
	case "read_file", "codex_read_file":
		return event.ActionReadFile, transcript.Arg(in, "target_file", "path", "file_path")
	case "write":
		return event.ActionWriteFile, transcript.Arg(in, "file_path", "target_file", "path")
	case "search_replace", "apply_patch", "hashline_edit", "edit":
		return event.ActionEditFile, transcript.Arg(in, "file_path", "target_file", "path")
	case "run_terminal_command", "bash", "run_command", "shell":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "grep", "grep_files":
		return event.ActionSearchText, grepTarget(in)
	case "list_dir", "glob":
		return event.ActionSearchFiles, transcript.Arg(in, "target_directory", "directory", "pattern", "path")
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "web_fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "task":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "prompt")
	case "todo_write":
		return event.ActionTodoUpdate, ""
	case "ask_user_question":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	if rest, ok := strings.CutPrefix(c.Tool, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return event.ActionMCPCall, server + "/" + tool
	}
	if c.NS == "mcp" {
		return event.ActionMCPCall, transcript.FirstNonEmpty(transcript.Arg(in, "tool_name"), c.Tool)
	}
	switch c.Kind {
	case "read":
		return event.ActionReadFile, transcript.Arg(in, "path", "target_file", "file_path")
	case "write":
		return event.ActionWriteFile, transcript.Arg(in, "path", "file_path")
	case "edit", "delete", "move":
		return event.ActionEditFile, transcript.Arg(in, "path", "file_path", "target_file")
	case "execute":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "search":
		return event.ActionSearchText, grepTarget(in)
	case "list_dir", "list":
		return event.ActionSearchFiles, transcript.Arg(in, "directory", "target_directory", "path")
	case "web_search":
		return event.ActionWebSearch, transcript.Arg(in, "query")
	case "web_fetch", "fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "task":
		return event.ActionSpawnSubagent, transcript.Arg(in, "description", "prompt")
	case "plan", "think":
		return event.ActionTodoUpdate, ""
	case "ask_user":
		return event.ActionAskUser, transcript.Arg(in, "question")
	}
	return event.ActionUnknown, ""
}

func grepTarget(in map[string]any) string {
	t := transcript.Arg(in, "pattern", "query")
	if dir := transcript.Arg(in, "path"); dir != "" && t != "" {
		t += " in " + dir
	}
	return t
}

// userQuery is the text inside <user_query>...</user_query>, or the whole text.
func userQuery(s string) string {
	_, rest, ok := strings.Cut(s, "<user_query>")
	if !ok {
		return s
	}
	inner, _, _ := strings.Cut(rest, "</user_query>")
	return inner
}

// usage is a turn's token_usage events: one per model of modelUsage, else one for the totals.
func (p *Parser) usage(promptID, key string, u *promptUsage, t time.Time) []event.Event {
	turn := transcript.FirstNonEmpty(promptID, key)
	byModel := u.ModelUsage
	if len(byModel) == 0 {
		byModel = map[string]usageModel{transcript.FirstNonEmpty(p.st.Model, "grok-build"): u.usageModel}
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	var evs []event.Event
	for _, model := range models {
		m := byModel[model]
		evs = append(evs, p.modelEvent(model, t)...)
		in, cached := max(int64(m.Input), 0), max(int64(m.CachedRead), 0)
		cached = min(cached, in)
		out := max(int64(m.Output), 0)
		tok := event.Tokens{Input: in - cached, CacheRead: cached, Output: out, Reasoning: min(max(int64(m.Reasoning), 0), out)}
		clientUSD := 0.0
		if m.CostUSDTicks != nil && !m.CostIsPartial && !u.Incomplete && !u.CostIsPartial {
			clientUSD = float64(*m.CostUSDTicks) / ticksPerUSD
		}
		tu := transcript.PricedUsage(p.prices(), model, promptID, tok, clientUSD, t)
		if tu == nil {
			continue
		}
		ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", p.st.Session, turn, model), t)
		ev.TokenUsage = tu
		evs = append(evs, ev)
	}
	return evs
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) sessionEvent(state, model string, t time.Time) event.Event {
	key := "started"
	if state != event.SessionStarted {
		key = "model\x00" + model
	}
	if p.src.AgentID != "" {
		key += "\x00" + p.src.AgentID
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: state, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	if state == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

// modelEvent reports a model new to the session. A subagent's file reports none: a session event
// would make the subagent's model and file the session's (its actions and messages carry it).
func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if p.src.AgentID != "" || !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	return []event.Event{p.sessionEvent(event.SessionActive, model, t)}
}

func (p *Parser) message(key string, blk int, seq int64, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, p.src.AgentID, key, strconv.Itoa(blk)), t)
	m.Seq = seq + int64(min(blk, maxBlock))
	m.AgentID, m.Sidechain = p.src.AgentID, p.src.AgentID != ""
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role, key string, seq int64, t time.Time, text string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	model := ""
	if role != event.RoleUser {
		model = p.st.Model
	}
	return []event.Event{p.message(key, 0, seq, t, event.Message{Role: role, Text: text, MessageID: key, Model: model})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

// lineID names an action read from one line of the file (a prompt, an aborted turn, a
// compaction): by the session, the agent whose file it is, what it is and the line's key (its
// eventId, else its offset; a subagent's file counts its own).
func (p *Parser) lineID(what, key string) string {
	if p.src.AgentID == "" {
		return event.ID(Client, string(event.KindAction), p.st.Session, what, key)
	}
	return event.ID(Client, string(event.KindAction), p.st.Session, p.src.AgentID, what, key)
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

// flexInt reads a count written as a number or a numeric string; anything else is 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(string(b)), `"`), 64)
	if err != nil || f != f || f > 1e15 || f < -1e15 {
		f = 0
	}
	*n = flexInt(f)
	return nil
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
