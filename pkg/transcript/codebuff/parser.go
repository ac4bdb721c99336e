package codebuff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// Limits on what leaves the parser.
const (
	maxTarget   = 500
	maxError    = 2 << 10
	maxOutput   = 8 << 10
	maxMessage  = 64 << 10
	maxModels   = 16
	maxBlock    = 63
	maxDepth    = 8         // nesting of agent blocks read
	maxRunState = 256 << 20 // bytes of run-state.json read for the chat's directory
)

// local is the time zone a time of day ("3:04 PM") is read in: the machine's, as the CLI wrote it.
var local = time.Local

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string `json:"session,omitempty"`
	Cwd     string `json:"cwd,omitempty"`
	Project string `json:"project,omitempty"`
	// RunState is set once run-state.json was read for the directory.
	RunState bool     `json:"run_state,omitempty"`
	Started  bool     `json:"started,omitempty"`
	Models   []string `json:"models,omitempty"`
	// Marks say how many of the chat's first messages had all their events reported (see
	// progress.go); Seen are the fingerprints of the events of the messages after the newest
	// mark, as they were last emitted.
	Marks []mark   `json:"marks,omitempty"`
	Seen  []string `json:"seen,omitempty"`
}

// Parser reads one chat's chat-messages.json.
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
			return nil, fmt.Errorf("codebuff parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// message is a ChatMessage; every field is read leniently (see str, num).
type message struct {
	ID        json.RawMessage `json:"id"`
	Variant   json.RawMessage `json:"variant"`
	Role      json.RawMessage `json:"role"`
	Content   json.RawMessage `json:"content"`
	Blocks    json.RawMessage `json:"blocks"`
	Timestamp json.RawMessage `json:"timestamp"`
	CreatedAt json.RawMessage `json:"createdAt"`
	Credits   json.RawMessage `json:"credits"`
	Metadata  json.RawMessage `json:"metadata"`
}

type metadata struct {
	Model     json.RawMessage `json:"model"`
	ModelID   json.RawMessage `json:"modelId"`
	Usage     json.RawMessage `json:"usage"`
	Codebuff  json.RawMessage `json:"codebuff"`
	RunState  json.RawMessage `json:"runState"`
	Timestamp json.RawMessage `json:"timestamp"`
}

type block struct {
	Type            json.RawMessage `json:"type"`
	Content         json.RawMessage `json:"content"`
	TextType        json.RawMessage `json:"textType"`
	ToolCallID      json.RawMessage `json:"toolCallId"`
	ToolName        json.RawMessage `json:"toolName"`
	Input           json.RawMessage `json:"input"`
	Output          json.RawMessage `json:"output"`
	OutputRaw       json.RawMessage `json:"outputRaw"`
	AgentID         json.RawMessage `json:"agentId"`
	AgentType       json.RawMessage `json:"agentType"`
	AgentName       json.RawMessage `json:"agentName"`
	Status          json.RawMessage `json:"status"`
	InitialPrompt   json.RawMessage `json:"initialPrompt"`
	Blocks          json.RawMessage `json:"blocks"`
	Questions       json.RawMessage `json:"questions"`
	Answers         json.RawMessage `json:"answers"`
	Skipped         json.RawMessage `json:"skipped"`
	SpawnToolCallID json.RawMessage `json:"spawnToolCallId"`
}

// runState is the part of an SDK RunState the parser reads: the chat's directory.
type runState struct {
	Cwd          json.RawMessage `json:"cwd"`
	SessionState struct {
		Cwd         json.RawMessage `json:"cwd"`
		FileContext struct {
			Cwd         json.RawMessage `json:"cwd"`
			ProjectRoot json.RawMessage `json:"projectRoot"`
		} `json:"fileContext"`
		ProjectContext struct {
			Cwd json.RawMessage `json:"cwd"`
		} `json:"projectContext"`
	} `json:"sessionState"`
}

func (r *runState) cwd() string {
	return transcript.FirstNonEmpty(str(r.SessionState.FileContext.Cwd), str(r.SessionState.ProjectContext.Cwd),
		str(r.SessionState.Cwd), str(r.Cwd), str(r.SessionState.FileContext.ProjectRoot))
}

// Record reads the whole document. The messages a mark of the State covers (the chat still
// begins with them) yield no events again; the others' events are emitted when new or changed.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	msgs, err := decode(raw)
	if err != nil {
		return nil, err
	}
	kept, done := resume(p.st.Marks, msgs)
	final := max(done, len(msgs)-tailKeep)
	evs, tail := p.chat(msgs, done, final)
	evs = p.keep(evs, tail)
	p.st.Marks = advance(p.st.Marks[:kept:kept], msgs, final)
	return evs, nil
}

// decode reads the document: a JSON array of messages. An empty document, one that is not UTF-8,
// not an array or that does not parse (caught while the CLI rewrote it) is ErrMalformed.
func decode(raw []byte) ([]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return nil, transcript.Malformed(Client, "chat is empty (being written?)")
	case !utf8.Valid(raw):
		return nil, transcript.Malformed(Client, "chat is not UTF-8")
	case raw[0] != '[':
		return nil, transcript.Malformed(Client, "chat is not a JSON array of messages")
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return nil, transcript.Malformed(Client, "chat does not parse (written while read, or damaged): %v", err)
	}
	return msgs, nil
}

// chatMessage is one message as the chat needs it.
type chatMessage struct {
	m    message
	meta metadata
	ok   bool
}

// chat returns the events of the messages from done on, and the index among them of the first
// event of a message from final on (the messages whose events are checked again at the next
// read). The messages before done only move the clock.
func (p *Parser) chat(raws []json.RawMessage, done, final int) ([]event.Event, int) {
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(p.src.SessionID, filepath.Base(filepath.Dir(p.src.Path)))
	}
	msgs := make([]chatMessage, len(raws))
	for i, raw := range raws {
		if json.Unmarshal(raw, &msgs[i].m) != nil {
			p.stats.CountUnknown("message not an object")
			continue
		}
		msgs[i].ok = true
		_ = json.Unmarshal(msgs[i].m.Metadata, &msgs[i].meta)
		if p.st.Cwd == "" && len(msgs[i].meta.RunState) > 0 {
			var rs runState
			_ = json.Unmarshal(msgs[i].meta.RunState, &rs)
			p.setCwd(rs.cwd())
		}
	}
	if p.st.Cwd == "" && !p.st.RunState {
		p.readRunState()
	}
	start, hasStart := chatTime(p.st.Session)
	var evs []event.Event
	clock := newClock(start, hasStart)
	t := start
	tail := -1
	for i := range msgs {
		if i == final {
			tail = len(evs)
		}
		r := &msgs[i]
		if !r.ok {
			continue
		}
		if ts, ok := clock.at(r.m.Timestamp, r.m.CreatedAt, r.meta.Timestamp); ok {
			t = ts
		}
		if i < done {
			continue // reported: its events are what they were
		}
		if t.IsZero() {
			continue // no time for it yet: a chat whose id is no time and whose first messages have none
		}
		if !p.st.Started {
			p.st.Started = true
			at := t
			if hasStart {
				at = start
			}
			evs = append(evs, p.sessionEvent(event.SessionStarted, "", at))
		}
		key := transcript.FirstNonEmpty(str(r.m.ID), "#"+strconv.Itoa(i))
		variant := transcript.FirstNonEmpty(str(r.m.Variant), str(r.m.Role))
		switch variant {
		case "user":
			if prompt := strings.TrimSpace(str(r.m.Content)); prompt != "" {
				ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "prompt", key), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleUser, i, 0, t, prompt, key, "", "")...)
			}
		case "ai", "agent", "assistant":
			evs = append(evs, p.reply(r, i, key, t)...)
		case "error":
			if text := strings.TrimSpace(str(r.m.Content)); text != "" {
				ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, "error", key), t)
				f := false
				ev.Action = &event.Action{Type: event.ActionAPIError, Success: &f, Error: clipError(text), MessageID: key, Transcript: p.src.Path}
				evs = append(evs, ev)
			}
		default:
			p.stats.CountUnknown("variant " + variant)
		}
	}
	if tail < 0 {
		tail = len(evs)
	}
	return evs, tail
}

// reply reads an AI message: its usage, if it has one, and its blocks.
func (p *Parser) reply(r *chatMessage, i int, key string, t time.Time) []event.Event {
	var evs []event.Event
	model, tok := r.meta.usage()
	if tok != (event.Tokens{}) {
		evs = append(evs, p.modelEvent(model, t)...)
		credits := num(r.m.Credits)
		if u := transcript.PricedUsage(p.prices(), model, key, tok, credits/100, t); u != nil {
			ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", p.st.Session, key), t)
			ev.TokenUsage = u
			evs = append(evs, ev)
		}
	}
	var blocks []json.RawMessage
	_ = json.Unmarshal(r.m.Blocks, &blocks)
	if len(blocks) == 0 {
		return append(evs, p.textMessage(event.RoleAssistant, i, 0, t, str(r.m.Content), key, model, "")...)
	}
	w := walker{p: p, msg: i, key: key, model: model, t: t, spawned: map[string]bool{}}
	w.collect(blocks, 0)
	w.walk(blocks, "", 0)
	return append(evs, w.evs...)
}

// walker reads the blocks of one AI message, numbering them depth first.
type walker struct {
	p       *Parser
	msg     int
	key     string
	model   string
	t       time.Time
	n       int
	spawned map[string]bool // spawn_agents calls that agent blocks stand for
	evs     []event.Event
}

func decodeBlock(raw json.RawMessage) (block, bool) {
	var b block
	return b, json.Unmarshal(raw, &b) == nil
}

// collect notes the spawn_agents calls the agent blocks name.
func (w *walker) collect(blocks []json.RawMessage, depth int) {
	if depth > maxDepth {
		return
	}
	for _, raw := range blocks {
		b, ok := decodeBlock(raw)
		if !ok || str(b.Type) != "agent" {
			continue
		}
		if id := str(b.SpawnToolCallID); id != "" {
			w.spawned[id] = true
		}
		var inner []json.RawMessage
		if json.Unmarshal(b.Blocks, &inner) == nil {
			w.collect(inner, depth+1)
		}
	}
}

func (w *walker) walk(blocks []json.RawMessage, agent string, depth int) {
	if depth > maxDepth {
		return
	}
	p := w.p
	for _, raw := range blocks {
		blk := w.n
		w.n++
		b, ok := decodeBlock(raw)
		if !ok {
			p.stats.CountUnknown("block not an object")
			continue
		}
		switch typ := str(b.Type); typ {
		case "text":
			role := event.RoleAssistant
			if str(b.TextType) == "reasoning" {
				role = event.RoleThinking
			}
			w.evs = append(w.evs, p.textMessage(role, w.msg, blk, w.t, str(b.Content), w.key, w.model, agent)...)
		case "plan":
			w.evs = append(w.evs, p.textMessage(event.RoleAssistant, w.msg, blk, w.t, str(b.Content), w.key, w.model, agent)...)
		case "tool":
			id, name := str(b.ToolCallID), str(b.ToolName)
			if id == "" || (w.spawned[id] && (name == "spawn_agents" || name == "spawn_agent_inline")) {
				continue
			}
			a := p.toolAction(&b, w.key, agent)
			w.add(id, blk, a, agent)
		case "agent":
			id := str(b.AgentID)
			if id == "" {
				continue
			}
			a := agentAction(&b, w.key, agent)
			w.add(id, blk, a, agent)
			var inner []json.RawMessage
			if json.Unmarshal(b.Blocks, &inner) == nil && len(inner) > 0 {
				w.walk(inner, id, depth+1)
			} else {
				w.evs = append(w.evs, p.textMessage(event.RoleAssistant, w.msg, w.n, w.t, str(b.Content), w.key, "", id)...)
				w.n++
			}
		case "ask-user":
			id := str(b.ToolCallID)
			if id == "" {
				continue
			}
			w.add(id, blk, askAction(&b, w.key, agent), agent)
		case "mode-divider", "image", "html", "agent-list", "gate-state":
		default:
			p.stats.CountUnknown("block " + typ)
		}
	}
}

// add appends a call's action and its tool_call message.
func (w *walker) add(id string, blk int, a *event.Action, agent string) {
	p := w.p
	a.ToolUseID, a.Transcript, a.AgentID, a.Sidechain = id, p.src.Path, agent, agent != ""
	a.Target = clipTarget(a.Target)
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), p.st.Session, id), w.t)
	ev.Action = a
	w.evs = append(w.evs, ev, p.message(w.msg, blk, w.t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool,
		ToolUseID: id, MessageID: w.key, Model: w.model, AgentID: agent, Sidechain: agent != ""}))
}

// toolAction is a tool block's action with its outcome (see the package doc).
func (p *Parser) toolAction(b *block, key, agent string) *event.Action {
	name := str(b.ToolName)
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	typ, target := p.toolOf(name, in)
	a := &event.Action{Type: typ, Tool: transcript.CutBytes(name, 200), Target: target, MessageID: key, InputHash: transcript.InputHash(b.Input)}
	if typ == event.ActionUnknown && name == "" {
		a.Tool = "tool"
	}
	ok, errText, out, known := outcome(b.OutputRaw, b.Output)
	if known {
		a.Success = &ok
		if !ok {
			a.Error = clipError(transcript.FirstNonEmpty(errText, out, "failed"))
		}
		a.Output = clipOutput(out)
		a.OutputSize = int64(len(out))
	}
	return a
}

// agentAction is an agent block's spawn_subagent action.
func agentAction(b *block, key, agent string) *event.Action {
	typ := str(b.AgentType)
	a := &event.Action{Type: event.ActionSpawnSubagent, Tool: transcript.CutBytes(transcript.FirstNonEmpty(typ, "spawn_agents"), 200),
		Target: transcript.FirstNonEmpty(str(b.InitialPrompt), str(b.AgentName), typ), MessageID: key}
	switch str(b.Status) {
	case "complete":
		t := true
		a.Success = &t
	case "failed", "cancelled":
		f := false
		a.Success = &f
		a.Error = str(b.Status)
	}
	if out := strings.TrimSpace(str(b.Content)); out != "" && a.Success != nil {
		a.Output = clipOutput(out)
		a.OutputSize = int64(len(out))
	}
	return a
}

// askAction is an ask-user block's action: answered, skipped, or waiting.
func askAction(b *block, key, agent string) *event.Action {
	var qs []struct {
		Question json.RawMessage `json:"question"`
	}
	_ = json.Unmarshal(b.Questions, &qs)
	a := &event.Action{Type: event.ActionAskUser, Tool: "ask_user", MessageID: key}
	if len(qs) > 0 {
		a.Target = str(qs[0].Question)
	}
	var answers []json.RawMessage
	switch {
	case string(bytes.TrimSpace(b.Skipped)) == "true":
		f := false
		a.Success, a.Error = &f, "skipped by user"
	case json.Unmarshal(b.Answers, &answers) == nil && len(answers) > 0:
		t := true
		a.Success = &t
	}
	return a
}

// outcome reads a tool block's result: ok, the error, the output text, and whether there is a
// result at all.
func outcome(rawOut, textOut json.RawMessage) (ok bool, errText, out string, known bool) {
	text := str(textOut)
	val := bytes.TrimSpace(rawOut)
	if len(val) == 0 || string(val) == "null" {
		val = nil
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			val = []byte(t)
		}
	}
	if val == nil && text == "" && len(bytes.TrimSpace(textOut)) == 0 {
		return false, "", "", false
	}
	ok = true
	var anyv any
	if val != nil && json.Unmarshal(val, &anyv) == nil {
		for _, obj := range resultObjects(anyv) {
			if e := transcript.FirstNonEmpty(strAny(obj["errorMessage"]), strAny(obj["error"])); e != "" {
				ok, errText = false, e
			}
			if code, isNum := obj["exitCode"].(float64); isNum && code != 0 {
				ok = false
				errText = transcript.FirstNonEmpty(errText, strAny(obj["stderr"]), "exit code "+strconv.FormatFloat(code, 'f', -1, 64))
			}
			if out == "" {
				out = transcript.FirstNonEmpty(strAny(obj["stdout"]), strAny(obj["content"]), strAny(obj["message"]))
			}
		}
		if s, isStr := anyv.(string); isStr && out == "" {
			out = s
		}
	}
	if out == "" {
		out = text
	}
	if out == "" && val != nil {
		out = string(val)
	}
	return ok, errText, out, true
}

// resultObjects are the objects a result holds: itself, or the values of Codebuff's
// [{type "json", value}] list.
func resultObjects(v any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if inner, isObj := x["value"].(map[string]any); isObj && x["type"] == "json" {
			return []map[string]any{inner}
		}
		return []map[string]any{x}
	case []any:
		var out []map[string]any
		for _, e := range x {
			if m, isObj := e.(map[string]any); isObj {
				if inner, isObj := m["value"].(map[string]any); isObj {
					out = append(out, inner)
				} else {
					out = append(out, m)
				}
			}
		}
		return out
	}
	return nil
}

// toolOf maps a tool call to its action type and target.
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "run_terminal_command":
		return event.ActionRunCommand, str1(in, "command")
	case "git_status":
		return event.ActionRunCommand, "git status"
	case "read_files":
		return event.ActionReadFile, p.relPath(first(in, "paths", "path"))
	case "read_outline", "read_slices", "read_image":
		return event.ActionReadFile, p.relPath(first(in, "path", "paths", "filePath"))
	case "write_file", "propose_write_file":
		return event.ActionWriteFile, p.relPath(first(in, "path", "filePath"))
	case "str_replace", "propose_str_replace", "apply_patch", "apply_smart_patch", "replace_range", "rewrite_symbol",
		"edit_transaction", "propose_edit_transaction":
		return event.ActionEditFile, p.relPath(first(in, "path", "filePath", "file", "paths"))
	case "code_search", "find_files_matching_content", "query_index":
		t := str1(in, "pattern", "query")
		if dir := str1(in, "cwd", "path"); dir != "" && t != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "find_files":
		return event.ActionSearchFiles, str1(in, "prompt", "pattern")
	case "glob":
		return event.ActionSearchFiles, str1(in, "pattern")
	case "list_directory", "read_subtree":
		return event.ActionSearchFiles, p.relPath(first(in, "path", "paths"))
	case "web_search":
		return event.ActionWebSearch, str1(in, "query")
	case "read_docs":
		return event.ActionWebFetch, strings.TrimSpace(str1(in, "libraryTitle") + " " + str1(in, "topic"))
	case "spawn_agents", "spawn_agent_inline":
		if agents, ok := in["agents"].([]any); ok && len(agents) > 0 {
			if a, ok := agents[0].(map[string]any); ok {
				return event.ActionSpawnSubagent, transcript.FirstNonEmpty(str1(a, "prompt"), str1(a, "agent_type", "agentType"))
			}
		}
		return event.ActionSpawnSubagent, transcript.FirstNonEmpty(str1(in, "prompt"), str1(in, "agent_type", "agentType"))
	case "write_todos", "create_plan", "add_subgoal", "update_subgoal", "update_plan_status":
		return event.ActionTodoUpdate, ""
	case "ask_user":
		return event.ActionAskUser, ""
	case "end_turn", "task_completed":
		return event.ActionTaskComplete, ""
	}
	return event.ActionUnknown, ""
}

// usage is a message's token figures and model, where it has a usage object (see the package
// doc); zero Tokens when it has none.
func (m *metadata) usage() (string, event.Tokens) {
	var cb struct {
		Model json.RawMessage `json:"model"`
		Usage json.RawMessage `json:"usage"`
	}
	_ = json.Unmarshal(m.Codebuff, &cb)
	model := transcript.CutRunes(transcript.FirstNonEmpty(str(m.Model), str(m.ModelID), str(cb.Model)), 200)
	raw := m.Usage
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = cb.Usage
	}
	var u map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil {
		return model, event.Tokens{}
	}
	pick := func(keys ...string) int64 {
		for _, k := range keys {
			if n := transcript.Count(u[k]); n > 0 {
				return n
			}
		}
		return 0
	}
	details := func(keys ...string) int64 {
		for _, k := range keys {
			var d map[string]json.RawMessage
			if json.Unmarshal(u[k], &d) == nil {
				if n := max(transcript.Count(d["cachedTokens"]), transcript.Count(d["cached_tokens"])); n > 0 {
					return n
				}
			}
		}
		return 0
	}
	tok := event.Tokens{Output: pick("outputTokens", "output_tokens", "completionTokens", "completion_tokens")}
	write := pick("cacheCreationInputTokens", "cache_creation_input_tokens", "cachedTokensCreated", "cacheCreationTokens")
	read := pick("cacheReadInputTokens", "cache_read_input_tokens")
	if write > 0 || read > 0 {
		// Anthropic's shape: input is net of the cache.
		tok.Input = pick("inputTokens", "input_tokens", "promptTokens", "prompt_tokens")
		tok.CacheCreation, tok.CacheRead = write, read
		return model, tok
	}
	// OpenAI's shape: the prompt includes the cached tokens.
	prompt := pick("promptTokens", "prompt_tokens", "inputTokens", "input_tokens")
	cached := min(details("promptTokensDetails", "prompt_tokens_details"), prompt)
	tok.Input, tok.CacheRead = prompt-cached, cached
	return model, tok
}

// readRunState takes the chat's directory from run-state.json beside the chat, once it exists.
func (p *Parser) readRunState() {
	path := filepath.Join(filepath.Dir(p.src.Path), RunStateFile)
	f, err := os.Open(path)
	if err != nil {
		return // not written yet: tried again at the next read
	}
	defer f.Close()
	p.st.RunState = true
	data, err := io.ReadAll(io.LimitReader(f, maxRunState+1))
	if err != nil || len(data) > maxRunState {
		return
	}
	var rs runState
	_ = json.Unmarshal(data, &rs)
	p.setCwd(rs.cwd())
}

// ---------------------------------------------------------------------------------------------
// Times

// chatTime reads a chat id: the chat's start as an ISO time with ':' made '-'.
func chatTime(id string) (time.Time, bool) {
	for _, l := range []string{"2006-01-02T15-04-05.999Z", "2006-01-02T15-04-05Z"} {
		if t, err := time.Parse(l, id); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// clock places the messages' times of day on the chat's days.
type clock struct {
	day      time.Time // midnight of the current day, in local; zero when unknown
	prevHour int       // of the last time of day read, -1 after an absolute time
}

func newClock(start time.Time, ok bool) *clock {
	c := &clock{prevHour: -1}
	if ok {
		c.setDay(start)
	}
	return c
}

func (c *clock) setDay(t time.Time) {
	l := t.In(local)
	c.day = time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, local)
}

var timeOfDay = []string{"3:04 PM", "3:04:05 PM", "3:04PM", "15:04"}

// at reads the first of raws that is a time: an ISO time, unix milliseconds, or a time of day.
func (c *clock) at(raws ...json.RawMessage) (time.Time, bool) {
	for _, raw := range raws {
		if n, isNum := number(raw); isNum {
			if t, ok := unixTime(n); ok {
				c.setDay(t)
				c.prevHour = -1
				return t, true
			}
			continue
		}
		s := strings.TrimSpace(str(raw))
		if s == "" {
			continue
		}
		if t, ok := transcript.ParseTime(s); ok {
			c.setDay(t)
			c.prevHour = -1
			return t, true
		}
		if c.day.IsZero() {
			continue
		}
		for _, l := range timeOfDay {
			tod, err := time.Parse(l, strings.ToUpper(s))
			if err != nil {
				continue
			}
			if c.prevHour >= 0 && tod.Hour() < c.prevHour {
				c.day = c.day.AddDate(0, 0, 1)
			}
			c.prevHour = tod.Hour()
			t := time.Date(c.day.Year(), c.day.Month(), c.day.Day(), tod.Hour(), tod.Minute(), tod.Second(), 0, local)
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// unixTime reads unix milliseconds (or seconds, when small).
func unixTime(n float64) (time.Time, bool) {
	if n != n || n <= 0 || n > 9e15 {
		return time.Time{}, false
	}
	var t time.Time
	if n > 1e11 {
		t = time.UnixMilli(int64(n))
	} else {
		t = time.Unix(int64(n), 0)
	}
	if t.Year() <= 1970 || t.Year() >= 2262 {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// ---------------------------------------------------------------------------------------------
// Sessions, messages, helpers

func (p *Parser) setCwd(cwd string) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" || p.st.Cwd != "" || !filepath.IsAbs(cwd) || len(cwd) > 4096 {
		return
	}
	p.st.Cwd = filepath.Clean(cwd)
	p.st.Project = project.Root(p.st.Cwd)
}

func (p *Parser) sessionEvent(state, model string, t time.Time) event.Event {
	key := "started"
	if state != event.SessionStarted {
		key = "model\x00" + model
	}
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.st.Session, key), t)
	ev.Session = &event.Session{State: state, Cwd: p.st.Cwd, TranscriptPath: p.src.Path, Model: model}
	if state == event.SessionStarted {
		ev.Session.StartedAt = t
	}
	return ev
}

func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	return []event.Event{p.sessionEvent(event.SessionActive, model, t)}
}

func (p *Parser) message(record, blk int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, m.MessageID, strconv.Itoa(blk)), t)
	m.Seq = int64(record)*64 + int64(min(blk, maxBlock))
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role string, record, blk int, t time.Time, text, msgID, model, agent string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(record, blk, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model,
		AgentID: agent, Sidechain: agent != ""})}
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }

// str reads a JSON string; anything else is "".
func str(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// number reads a JSON number.
func number(raw json.RawMessage) (float64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// num reads a non-negative, sane amount (a number or a numeric string); anything else is 0.
func num(raw json.RawMessage) float64 {
	f, ok := number(raw)
	if !ok {
		f, _ = strconv.ParseFloat(strings.TrimSpace(str(raw)), 64)
	}
	if f != f || f < 0 || f > 1e9 {
		return 0
	}
	return f
}

func strAny(v any) string {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// str1 is the first of keys that is a non-empty string in m.
func str1(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s := strAny(m[k]); s != "" {
			return s
		}
	}
	return ""
}

// first is str1, or the first string of the first of keys that is a list.
func first(m map[string]any, keys ...string) string {
	for _, k := range keys {
		switch v := m[k].(type) {
		case string:
			if s := strings.TrimSpace(v); s != "" {
				return s
			}
		case []any:
			for _, e := range v {
				if s := strAny(e); s != "" {
					return s
				}
				if o, ok := e.(map[string]any); ok {
					if s := str1(o, "path", "filePath"); s != "" {
						return s
					}
				}
			}
		}
	}
	return ""
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
