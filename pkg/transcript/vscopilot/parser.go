package vscopilot

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
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

// Limits on what leaves the parser and what its State keeps.
const (
	maxTarget    = 500
	maxError     = 2 << 10
	maxOutput    = 8 << 10
	maxMessage   = 64 << 10
	maxStarted   = 256
	maxModels    = 64
	maxSeq       = 63
	statusError  = 2 // OTLP's STATUS_CODE_ERROR
	maxResultDep = 8
)

// state is what a parser keeps between lines: JSON, small (ids and model names, no text).
type state struct {
	Started []string `json:"started,omitempty"` // conversations whose start was emitted, newest last
	Models  []string `json:"models,omitempty"`  // "<conversation> <model>" pairs announced, newest last
}

// Parser reads one trace file.
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
			return nil, fmt.Errorf("copilot-vs parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

type export struct {
	ResourceSpans *[]struct {
		ScopeSpans []struct {
			Spans []span `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type span struct {
	TraceID    string `json:"traceId"`
	SpanID     string `json:"spanId"`
	Name       string `json:"name"`
	Start      nanos  `json:"startTimeUnixNano"`
	End        nanos  `json:"endTimeUnixNano"`
	Attributes []attr `json:"attributes"`
	Status     struct {
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
	} `json:"status"`

	attrs map[string]string
}

type attr struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string         `json:"stringValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
		BoolValue   *bool           `json:"boolValue"`
	} `json:"value"`
}

// chatMessage is one message of gen_ai.input.messages or gen_ai.output.messages.
type chatMessage struct {
	Role  string `json:"role"`
	Parts []struct {
		Type      string          `json:"type"`
		Content   string          `json:"content"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"parts"`
}

// Record reads one line: one export batch.
func (p *Parser) Record(off int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if !utf8.Valid(raw) || raw[0] != '{' {
		return nil, transcript.Malformed(Client, "trace line is not a JSON object")
	}
	var x export
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, transcript.Malformed(Client, "trace line does not decode: %v", err)
	}
	if x.ResourceSpans == nil {
		p.stats.CountUnknown("no resourceSpans")
		return nil, nil
	}
	seq := off * 64
	for _, rs := range *x.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for i := range ss.Spans {
				evs = append(evs, p.span(&ss.Spans[i], &seq)...)
			}
		}
	}
	return evs, nil
}

func (p *Parser) span(s *span, seq *int64) []event.Event {
	s.attrs = make(map[string]string, len(s.Attributes))
	for _, a := range s.Attributes {
		s.attrs[a.Key] = a.value()
	}
	conv := strings.TrimSpace(s.attrs["gen_ai.conversation.id"])
	if conv == "" {
		conv = p.src.SessionID
	}
	if conv == "" {
		return nil
	}
	if isConversationID(conv) {
		conv = strings.ToLower(conv)
	}
	start, end := s.Start.time(), s.End.time()
	if start.IsZero() {
		start = end
	}
	if end.IsZero() {
		end = start
	}
	if start.IsZero() {
		return nil // no time: nothing can be placed
	}
	c := &conversation{p: p, id: conv, seq: seq}
	c.start(start)
	switch {
	case s.attrs["gen_ai.tool.name"] != "":
		c.tool(s, start, end)
	case s.attrs["gen_ai.operation.name"] == "chat" || strings.HasPrefix(s.Name, "chat "):
		c.chat(s, start, end)
	case s.attrs["gen_ai.operation.name"] == "invoke_agent" || strings.HasPrefix(s.Name, "invoke_agent"):
	default:
		p.stats.CountUnknown("span " + transcript.FirstNonEmpty(s.attrs["gen_ai.operation.name"], s.Name))
	}
	return c.evs
}

// conversation gathers the events of one span of one conversation.
type conversation struct {
	p   *Parser
	id  string
	seq *int64
	evs []event.Event
}

func (c *conversation) start(t time.Time) {
	if slices.Contains(c.p.st.Started, c.id) {
		return
	}
	c.p.st.Started = appendBounded(c.p.st.Started, c.id, maxStarted)
	ev := c.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), c.id, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, TranscriptPath: c.p.src.Path, StartedAt: t}
	c.evs = append(c.evs, ev)
}

func (c *conversation) model(model string, t time.Time) {
	key := c.id + " " + model
	if model == "" || slices.Contains(c.p.st.Models, key) {
		return
	}
	c.p.st.Models = appendBounded(c.p.st.Models, key, maxModels)
	ev := c.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), c.id, "model\x00"+model), t)
	ev.Session = &event.Session{State: event.SessionActive, TranscriptPath: c.p.src.Path, Model: model}
	c.evs = append(c.evs, ev)
}

func (c *conversation) chat(s *span, start, end time.Time) {
	model := transcript.FirstNonEmpty(s.attrs["gen_ai.response.model"], s.attrs["gen_ai.request.model"])
	respID := strings.TrimSpace(s.attrs["gen_ai.response.id"])
	turn := strings.TrimSpace(s.attrs["copilot_chat.root_request_id"])
	c.model(model, end)
	if prompt := lastUserText(s.attrs["gen_ai.input.messages"]); prompt != "" {
		key := transcript.FirstNonEmpty(turn, "text "+textHash(prompt))
		ev := c.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), c.id, "prompt", key), start)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: turn, Transcript: c.p.src.Path}
		c.evs = append(c.evs, ev)
		c.text(event.ID(Client, string(event.KindMessage), c.id, "prompt", key), event.RoleUser, prompt, turn, "", start)
	}
	var out []chatMessage
	if raw := s.attrs["gen_ai.output.messages"]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	for mi, m := range out {
		if m.Role != "assistant" {
			continue
		}
		for pi, part := range m.Parts {
			idKey := []string{Client, string(event.KindMessage), c.id, s.TraceID, s.SpanID, strconv.Itoa(mi), strconv.Itoa(pi)}
			switch part.Type {
			case "text":
				c.text(event.ID(idKey...), event.RoleAssistant, part.Content, respID, model, end)
			case "reasoning", "thinking":
				c.text(event.ID(idKey...), event.RoleThinking, part.Content, respID, model, end)
			case "tool_call":
				if part.ID == "" && part.Name == "" {
					continue
				}
				args := argsOf(part.Arguments)
				ty, target := toolOf(part.Name, args)
				a := &event.Action{Type: ty, Tool: part.Name, Target: clipTarget(target), ToolUseID: part.ID, MessageID: respID,
					Model: model, InputHash: inputHash(args), Transcript: c.p.src.Path}
				c.call(s, part.ID, a, end)
			}
		}
	}
	in, hasIn := s.count("gen_ai.usage.input_tokens")
	outTok, hasOut := s.count("gen_ai.usage.output_tokens")
	if !hasIn && !hasOut {
		return
	}
	read, _ := s.count("gen_ai.usage.cache_read.input_tokens")
	write, _ := s.count("gen_ai.usage.cache_creation.input_tokens")
	reasoning, _ := s.count("gen_ai.usage.reasoning.output_tokens")
	tok := event.Tokens{Input: max(in-read-write, 0), Output: outTok, CacheRead: read, CacheCreation: write, Reasoning: min(reasoning, outTok)}
	if u := transcript.PricedUsage(c.p.prices(), model, respID, tok, 0, end); u != nil {
		u.RequestID = turn
		ev := c.newEvent(event.KindTokenUsage, event.ID(Client, "usage", c.id, s.TraceID, s.SpanID), end)
		ev.TokenUsage = u
		c.evs = append(c.evs, ev)
	}
}

func (c *conversation) tool(s *span, start, end time.Time) {
	name := s.attrs["gen_ai.tool.name"]
	callID := strings.TrimSpace(s.attrs["gen_ai.tool.call.id"])
	args := argsOf(json.RawMessage(s.attrs["gen_ai.tool.call.arguments"]))
	ty, target := toolOf(name, args)
	a := &event.Action{Type: ty, Tool: name, Target: clipTarget(target), ToolUseID: callID, InputHash: inputHash(args),
		Transcript: c.p.src.Path, DurationMs: max(end.Sub(start).Milliseconds(), 0)}
	raw, hasResult := s.attrs["gen_ai.tool.call.result"]
	out := resultText(raw)
	failed := s.status() == statusError || s.attrs["error.type"] != ""
	if failed || hasResult {
		ok := !failed
		a.Success = &ok
		if failed {
			a.Error = clipError(transcript.FirstNonEmpty(s.Status.Message, s.attrs["error.type"], out, "tool error"))
		}
		a.Output = clipOutput(out)
		a.OutputSize = int64(len(out))
	}
	c.call(s, callID, a, end)
}

// call emits a tool call's action and its tool_call message, under the call id when it has one.
func (c *conversation) call(s *span, callID string, a *event.Action, t time.Time) {
	key := callID
	if key == "" {
		key = "span " + s.TraceID + " " + s.SpanID
	}
	ev := c.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), c.id, key), t)
	ev.Action = a
	m := c.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), c.id, "tool_call", key), t)
	m.Message = &event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool, ToolUseID: callID, MessageID: a.MessageID,
		Model: a.Model, Seq: c.next()}
	c.evs = append(c.evs, ev, m)
}

func (c *conversation) text(id, role, text, msgID, model string, t time.Time) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	ev := c.newEvent(event.KindMessage, id, t)
	ev.Message = &event.Message{Role: role, Text: text, MessageID: msgID, Model: model, Seq: c.next()}
	c.evs = append(c.evs, ev)
}

// next numbers a line's messages: its byte offset × 64 plus their order in it.
func (c *conversation) next() int64 {
	n := *c.seq
	if n%64 < maxSeq {
		*c.seq = n + 1
	}
	return n
}

func (c *conversation) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client, SessionID: c.id, V: event.SchemaVersion}
}

// lastUserText is the text of the last user message of gen_ai.input.messages: the prompt.
func lastUserText(raw string) string {
	if raw == "" {
		return ""
	}
	var msgs []chatMessage
	if json.Unmarshal([]byte(raw), &msgs) != nil {
		return ""
	}
	for _, m := range slices.Backward(msgs) {
		if m.Role != "user" {
			continue
		}
		var parts []string
		for _, part := range m.Parts {
			if (part.Type == "text" || part.Type == "") && strings.TrimSpace(part.Content) != "" {
				parts = append(parts, strings.TrimSpace(part.Content))
			}
		}
		if text := strings.Join(parts, "\n"); text != "" {
			return text
		}
	}
	return ""
}

// argsOf reads a call's arguments: a JSON object, or JSON text holding one.
func argsOf(raw json.RawMessage) map[string]any {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		raw = []byte(s)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// resultText is a tool result's text: a JSON result's Content, Text, Output, Result or Value
// (nested values followed), else the raw text.
func resultText(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return strings.TrimSpace(raw)
	}
	if s := textOf(v, 0); s != "" {
		return s
	}
	return strings.TrimSpace(raw)
}

func textOf(v any, depth int) string {
	if depth > maxResultDep {
		return ""
	}
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case []any:
		var parts []string
		for _, it := range x {
			if s := textOf(it, depth+1); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n\n")
	case map[string]any:
		for _, k := range []string{"Content", "content", "Text", "text", "Output", "output", "Result", "result", "Value", "value"} {
			if s := textOf(x[k], depth+1); s != "" {
				return s
			}
		}
	}
	return ""
}

// patchFile finds the first file a patch names.
var patchFile = regexp.MustCompile(`(?m)^\*\*\*\s+(?:Add|Update|Delete)\s+File:\s+(.+)$`)

// toolOf maps a tool call to its action type and target (see the package doc).
func toolOf(name string, in map[string]any) (event.ActionType, string) {
	path := func() string { return transcript.Arg(in, "filename", "file", "path", "filePath", "file_path") }
	switch name {
	case "get_file", "read_file":
		return event.ActionReadFile, path()
	case "create_file":
		return event.ActionWriteFile, path()
	case "apply_patch", "edit_file", "replace_string_in_file", "insert_edit_into_file":
		if p := path(); p != "" {
			return event.ActionEditFile, p
		}
		if m := patchFile.FindStringSubmatch(transcript.Arg(in, "patch", "diff", "input")); m != nil {
			return event.ActionEditFile, strings.TrimSpace(m[1])
		}
		return event.ActionEditFile, ""
	case "file_search", "list_dir":
		if q := strList(in, "queries"); q != "" {
			return event.ActionSearchFiles, q
		}
		return event.ActionSearchFiles, transcript.Arg(in, "query", "pattern", "path")
	case "text_search", "code_search", "grep_search", "semantic_search":
		if q := strList(in, "queries"); q != "" {
			return event.ActionSearchText, q
		}
		return event.ActionSearchText, transcript.Arg(in, "query", "pattern")
	case "get_web_pages", "fetch_webpage":
		if u, ok := in["urls"].([]any); ok && len(u) > 0 {
			if s, ok := u[0].(string); ok {
				return event.ActionWebFetch, s
			}
		}
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "run_command_in_terminal", "run_command", "runInTerminal", "run_in_terminal":
		return event.ActionRunCommand, transcript.Arg(in, "command", "cmd")
	case "run_build":
		return event.ActionRunCommand, "build"
	}
	if strings.HasPrefix(name, "mcp_") {
		rest := strings.TrimLeft(strings.TrimPrefix(name, "mcp"), "_")
		server, tool, _ := strings.Cut(rest, "__")
		if tool == "" {
			return event.ActionMCPCall, server
		}
		return event.ActionMCPCall, server + "/" + tool
	}
	return event.ActionUnknown, ""
}

func strList(m map[string]any, key string) string {
	list, _ := m[key].([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			out = append(out, strings.TrimSpace(s))
		}
	}
	return strings.Join(out, ", ")
}

// value is an attribute's value as text.
func (a *attr) value() string {
	v := &a.Value
	switch {
	case v.StringValue != nil:
		return *v.StringValue
	case len(v.IntValue) > 0:
		return strings.Trim(string(v.IntValue), `"`)
	case len(v.DoubleValue) > 0:
		return strings.Trim(string(v.DoubleValue), `"`)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	}
	return ""
}

// count reads a token count attribute: a non-negative integer, else absent.
func (s *span) count(key string) (int64, bool) {
	v := strings.TrimSpace(s.attrs[key])
	if v == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f || f < 0 || f > 1e12 {
		return 0, false
	}
	return int64(f), true
}

// status is the span's status code (0 unset, 1 ok, 2 error), written as a number or its name.
func (s *span) status() int {
	c := strings.Trim(strings.TrimSpace(string(s.Status.Code)), `"`)
	switch c {
	case "2", "STATUS_CODE_ERROR":
		return statusError
	case "1", "STATUS_CODE_OK":
		return 1
	}
	return 0
}

// nanos reads a Unix time in nanoseconds written as a number or a decimal string.
type nanos int64

func (n *nanos) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(string(b)), `"`), 10, 64)
	if err != nil || v < 0 {
		v = 0
	}
	*n = nanos(v)
	return nil
}

// time is the instant, zero outside 1971..2261 (see transcript.ParseTime).
func (n nanos) time() time.Time {
	if n < 31536000*1e9 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

func appendBounded(list []string, v string, limit int) []string {
	list = append(list, v)
	if len(list) > limit {
		list = slices.Clone(list[len(list)-limit:])
	}
	return list
}

func inputHash(args map[string]any) string {
	if len(args) == 0 {
		return ""
	}
	b, err := json.Marshal(args)
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }
