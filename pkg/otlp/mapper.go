package otlp

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/observerhq/observer/pkg/client"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
)

// Source is the Source of every event the receiver makes, and APITurn.Origin of its turns.
const Source = "otlp"

// Client names, as the rest of observer spells them (pkg/client).
const (
	ClientClaude = client.ClaudeCode
	ClientCodex  = client.Codex
)

// claudeService is the service.name of Claude Code's telemetry.
const claudeService = "claude-code"

// Bounds of the texts kept, as the transcript readers keep them.
const (
	maxOutput = 8192
	maxError  = 2000
	maxTarget = 1000
)

// mapper turns log records into events. It remembers the sessions it has announced (one session
// event each per process) and the metric totals per session for the cross-check.
type mapper struct {
	cfg Config

	mu       sync.Mutex
	sessions map[string]bool
	// metricTokens sums claude_code.token.usage per session, by type, for doctor's cross-check:
	// the metric carries no request id, so it is never counted as turns (the api_request logs
	// are, one per request).
	metricTokens map[string]int64
}

func newMapper(cfg Config) mapper {
	return mapper{cfg: cfg, sessions: map[string]bool{}, metricTokens: map[string]int64{}}
}

// record is one log record with what every mapping needs.
type record struct {
	name    string // event name without the client prefix: api_request, sse_event, tool_result, ...
	client  string
	session string
	t       time.Time
	attrs   pcommon.Map
}

func (m *mapper) logs(ld plog.Logs) []event.Event {
	var evs []event.Event
	for _, rl := range ld.ResourceLogs().All() {
		service := str(rl.Resource().Attributes(), "service.name")
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				rec, ok := readRecord(service, lr)
				if !ok {
					continue
				}
				evs = append(evs, m.record(rec)...)
			}
		}
	}
	return evs
}

// readRecord names a log record's client and event, and reads its session and time.
func readRecord(service string, lr plog.LogRecord) (record, bool) {
	a := lr.Attributes()
	// The event.name attribute first: Codex fills the record's own event name with a source
	// location ("event otel/src/events/session_telemetry.rs:1187").
	name := first(str(a, "event.name"), lr.EventName())
	if name == "" && lr.Body().Type() == pcommon.ValueTypeStr {
		name = lr.Body().Str()
	}
	rec := record{attrs: a}
	switch {
	case strings.HasPrefix(name, "claude_code."):
		rec.client, rec.name = ClientClaude, strings.TrimPrefix(name, "claude_code.")
	case strings.HasPrefix(name, "codex."):
		rec.client, rec.name = ClientCodex, strings.TrimPrefix(name, "codex.")
	case service == claudeService:
		// Claude Code's event.name attribute drops the prefix its body keeps.
		rec.client, rec.name = ClientClaude, name
	default:
		return rec, false
	}
	switch rec.client {
	case ClientClaude:
		rec.session = str(a, "session.id")
	case ClientCodex:
		rec.session = str(a, "conversation.id")
	}
	switch {
	case lr.Timestamp() != 0:
		rec.t = lr.Timestamp().AsTime()
	default:
		if t, ok := transcript.ParseTime(str(a, "event.timestamp")); ok {
			rec.t = t
		} else if lr.ObservedTimestamp() != 0 {
			rec.t = lr.ObservedTimestamp().AsTime()
		} else {
			rec.t = time.Now()
		}
	}
	rec.t = rec.t.UTC()
	return rec, true
}

func (m *mapper) newEvent(kind event.Kind, id string, rec record) event.Event {
	ev := event.New(kind, Source)
	ev.ID, ev.Time, ev.Client, ev.SessionID = id, rec.t, rec.client, rec.session
	ev.Host, ev.User = m.cfg.Host, m.cfg.User
	return ev
}

// record maps one log record; records it has no use for map to nothing.
func (m *mapper) record(rec record) []event.Event {
	var evs []event.Event
	if rec.session != "" {
		m.mu.Lock()
		first := !m.sessions[rec.client+"\x00"+rec.session]
		m.sessions[rec.client+"\x00"+rec.session] = true
		m.mu.Unlock()
		if first {
			ev := m.newEvent(event.KindSession, event.ID(rec.client, Source, "session", rec.session), rec)
			ev.Session = &event.Session{State: event.SessionActive, Model: str(rec.attrs, "model")}
			evs = append(evs, ev)
		}
	}
	var ev *event.Event
	switch rec.client + "/" + rec.name {
	case ClientClaude + "/api_request", ClientClaude + "/api_error":
		ev = m.claudeTurn(rec)
	case ClientClaude + "/tool_result", ClientClaude + "/tool_decision":
		ev = m.claudeTool(rec)
	case ClientCodex + "/sse_event":
		ev = m.codexTurn(rec)
	case ClientCodex + "/api_request":
		ev = m.codexError(rec)
	case ClientCodex + "/tool_result", ClientCodex + "/tool_decision":
		ev = m.codexTool(rec)
	}
	if ev != nil {
		evs = append(evs, *ev)
	}
	return evs
}

// claudeTurn: claude_code.api_request carries the API's usage of one request (cache writes as one
// bucket: the 5-minute and 1-hour split is not reported) and its request id; api_error a failed
// request.
func (m *mapper) claudeTurn(rec record) *event.Event {
	a := rec.attrs
	reqID := str(a, "request_id")
	key := first(reqID, fmt.Sprint(rec.t.UnixNano(), "/", str(a, "event.sequence")))
	ev := m.newEvent(event.KindAPITurn, event.ID(rec.client, Source, "turn", rec.session, key), rec)
	t := &event.APITurn{Provider: "anthropic", Endpoint: "/v1/messages", Model: str(a, "model"), RequestID: reqID,
		LatencyMs: float64(num(a, "duration_ms")), Status: 200, Origin: Source}
	if rec.name == "api_error" {
		t.Status = int(first(num(a, "status_code"), 0))
		if t.Status == 0 {
			t.Status = 599 // the request got no answer (a network error)
		}
		t.ErrorClass = "api_error"
		t.ErrorMessage = transcript.Clip(str(a, "error"), maxError)
	} else {
		t.Input, t.Output = num(a, "input_tokens"), num(a, "output_tokens")
		t.CacheRead, t.CacheCreation = num(a, "cache_read_tokens"), num(a, "cache_creation_tokens")
	}
	m.price(t)
	if t.CacheCreation > 0 && t.Reliability == event.ReliabilityAccurate {
		// Claude Code reports cache writes as one bucket: priced at the 5-minute rate, a turn that
		// wrote to the 1-hour cache costs more than this says.
		t.Reliability = event.ReliabilityApproximate
	}
	ev.APITurn = t
	return &ev
}

// codexTurn: codex.sse_event with event.kind response.completed comes twice per response; the one
// with token counts is the usage (input includes cached tokens, reasoning is inside output).
func (m *mapper) codexTurn(rec record) *event.Event {
	a := rec.attrs
	if str(a, "event.kind") != "response.completed" {
		return nil
	}
	if _, ok := a.Get("input_token_count"); !ok {
		return nil
	}
	in, cached := num(a, "input_token_count"), num(a, "cached_token_count")
	out := num(a, "output_token_count")
	key := fmt.Sprint(str(a, "event.timestamp"), "/", rec.t.UnixNano(), "/", in, "/", out)
	ev := m.newEvent(event.KindAPITurn, event.ID(rec.client, Source, "turn", rec.session, key), rec)
	t := &event.APITurn{Provider: "openai", Endpoint: "/v1/responses", Model: str(a, "model"), Status: 200, Origin: Source}
	t.Input, t.CacheRead = max(in-cached, 0), cached
	t.Output, t.Reasoning = out, num(a, "reasoning_token_count")
	t.LatencyMs = float64(num(a, "duration_ms"))
	m.price(t)
	ev.APITurn = t
	return &ev
}

// codexError: codex.api_request says how each HTTP attempt ended; a success is already counted by
// its sse_event, a failure is recorded as a turn without tokens.
func (m *mapper) codexError(rec record) *event.Event {
	a := rec.attrs
	status := int(num(a, "http.response.status_code"))
	errText := str(a, "error.message")
	if status > 0 && status < 400 && errText == "" {
		return nil
	}
	if status == 0 && errText == "" {
		return nil
	}
	key := fmt.Sprint(str(a, "event.timestamp"), "/", rec.t.UnixNano(), "/", str(a, "attempt"))
	ev := m.newEvent(event.KindAPITurn, event.ID(rec.client, Source, "turn", rec.session, "error", key), rec)
	t := &event.APITurn{Provider: "openai", Endpoint: "/v1" + first(str(a, "endpoint"), "/responses"), Model: str(a, "model"),
		Status: first(status, 599), ErrorClass: "api_error", ErrorMessage: transcript.Clip(errText, maxError),
		LatencyMs: float64(num(a, "duration_ms")), Origin: Source}
	ev.APITurn = t
	return &ev
}

// claudeTool: tool_decision and tool_result of one tool_use_id are one action, with the id the
// transcript reader gives it, so the writer merges what each path knows.
func (m *mapper) claudeTool(rec record) *event.Event {
	a := rec.attrs
	useID := str(a, "tool_use_id")
	if useID == "" {
		return nil
	}
	tool := str(a, "tool_name")
	ev := m.newEvent(event.KindAction, event.ID(ClientClaude, string(event.KindAction), useID), rec)
	act := &event.Action{Type: claudecode.ToolType(tool), Tool: tool, ToolUseID: useID}
	if rec.name == "tool_result" {
		ok := boolean(a, "success")
		act.Success = &ok
		act.DurationMs = num(a, "duration_ms")
		act.OutputSize = num(a, "tool_result_size_bytes")
		if !ok {
			act.Error = transcript.Clip(str(a, "error"), maxError)
		}
	}
	ev.Action = act
	return &ev
}

// codexTools maps Codex's tool names to the taxonomy (the transcript reader refines a command
// into a read or an edit from its arguments; the first type stored that is not unknown stays).
var codexTools = map[string]event.ActionType{
	"exec_command": event.ActionRunCommand, "shell": event.ActionRunCommand, "shell_command": event.ActionRunCommand,
	"local_shell": event.ActionRunCommand, "write_stdin": event.ActionRunCommand,
	"apply_patch": event.ActionEditFile, "update_plan": event.ActionTodoUpdate, "view_image": event.ActionReadFile,
	"web_search": event.ActionWebSearch, "spawn_agent": event.ActionSpawnSubagent,
}

// codexTool: tool_decision and tool_result of one call_id are one action, with the id Codex's
// transcript reader gives it (keyed by the conversation, which is the rollout's root session).
func (m *mapper) codexTool(rec record) *event.Event {
	a := rec.attrs
	callID := str(a, "call_id")
	if callID == "" || rec.session == "" {
		return nil
	}
	tool := str(a, "tool_name")
	typ, ok := codexTools[tool]
	if !ok {
		typ = event.ActionUnknown
		if str(a, "mcp_server") != "" {
			typ = event.ActionMCPCall
		}
	}
	ev := m.newEvent(event.KindAction, event.ID(ClientCodex, string(event.KindAction), rec.session, callID), rec)
	act := &event.Action{Type: typ, Tool: tool, ToolUseID: callID}
	if args := str(a, "arguments"); args != "" && typ == event.ActionRunCommand {
		act.Target = transcript.ClipTarget(commandOf(args), maxTarget)
	}
	if rec.name == "tool_result" {
		success := boolean(a, "success")
		act.Success = &success
		act.DurationMs = num(a, "duration_ms")
		out := str(a, "output")
		act.OutputSize = int64(len(out))
		act.Output = transcript.Clip(out, maxOutput)
		if !success {
			act.Error = transcript.Clip(out, maxError)
		}
	}
	ev.Action = act
	return &ev
}

// commandOf reads the command line of a Codex shell call's JSON arguments (cmd or command, a
// string or a list).
func commandOf(args string) string {
	m := pcommon.NewMap()
	var raw map[string]any
	if err := json.Unmarshal([]byte(args), &raw); err != nil {
		return ""
	}
	m.FromRaw(raw)
	for _, k := range []string{"cmd", "command"} {
		v, ok := m.Get(k)
		if !ok {
			continue
		}
		if v.Type() == pcommon.ValueTypeSlice {
			var parts []string
			for _, p := range v.Slice().All() {
				parts = append(parts, p.AsString())
			}
			return strings.Join(parts, " ")
		}
		return v.AsString()
	}
	return ""
}

func (m *mapper) price(t *event.APITurn) {
	t.Reliability = event.ReliabilityAccurate
	if m.cfg.Coster == nil || t.Model == "" {
		if t.Input+t.Output+t.CacheRead+t.CacheCreation > 0 {
			t.Reliability = event.ReliabilityUnknown
		}
		return
	}
	usd, known := m.cfg.Coster.Cost(t.Model, t.Tokens)
	t.CostUSD = usd
	if !known {
		t.Reliability = event.ReliabilityUnknown
	}
}

// metrics reads Claude Code's token.usage delta sums into the per-session cross-check totals.
// No event comes of them: the api_request logs are the turns.
func (m *mapper) metrics(md pmetric.Metrics) []event.Event {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, mt := range sm.Metrics().All() {
				if mt.Name() != "claude_code.token.usage" || mt.Type() != pmetric.MetricTypeSum {
					continue
				}
				for _, dp := range mt.Sum().DataPoints().All() {
					v := dp.IntValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
						v = int64(math.Round(dp.DoubleValue()))
					}
					m.mu.Lock()
					m.metricTokens[str(dp.Attributes(), "session.id")] += v
					m.mu.Unlock()
				}
			}
		}
	}
	return nil
}

// MetricTokens returns the tokens Claude Code's token.usage metric reported for a session so far
// (every type summed), for a cross-check against the turns.
func (r *Receiver) MetricTokens(session string) int64 {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	return r.m.metricTokens[session]
}

// str reads an attribute as a string, whatever its type ("" when absent).
func str(a pcommon.Map, k string) string {
	v, ok := a.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// num reads an attribute that is a number or a numeric string (0 when absent or not a number, or
// negative).
func num(a pcommon.Map, k string) int64 {
	v, ok := a.Get(k)
	if !ok {
		return 0
	}
	var n int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		n = v.Int()
	case pcommon.ValueTypeDouble:
		n = int64(math.Round(v.Double()))
	case pcommon.ValueTypeStr:
		s := strings.TrimSpace(v.Str())
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			n = i
		} else if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			n = int64(math.Round(f))
		}
	}
	return max(n, 0)
}

// boolean reads a bool or "true"/"false".
func boolean(a pcommon.Map, k string) bool {
	v, ok := a.Get(k)
	if !ok {
		return false
	}
	if v.Type() == pcommon.ValueTypeBool {
		return v.Bool()
	}
	b, _ := strconv.ParseBool(v.AsString())
	return b
}

// first returns the first of its arguments that is not the zero value.
func first[T comparable](vs ...T) T {
	var zero T
	for _, v := range vs {
		if v != zero {
			return v
		}
	}
	return zero
}
