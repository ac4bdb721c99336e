package trae

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxSeen    = 2048
	maxModels  = 16
	maxPart    = 63
)

// trajectoryState is what a trajectory parser keeps between reads: JSON, small.
type trajectoryState struct {
	Session string   `json:"session,omitempty"`
	Models  []string `json:"models,omitempty"`
	Seen    []string `json:"seen,omitempty"`
}

// trajectoryParser reads one trae-agent trajectory.
type trajectoryParser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	st      trajectoryState
	emitted transcript.Emitted
	stats   transcript.Stats
	cwd     string
	proj    string
}

func newTrajectoryParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*trajectoryParser, error) {
	p := &trajectoryParser{src: src, prices: prices}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("trae parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *trajectoryParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *trajectoryParser) Stats() transcript.Stats { return p.stats.Clone() }

type trajectory struct {
	Task            string          `json:"task"`
	StartTime       string          `json:"start_time"`
	Provider        string          `json:"provider"`
	Model           string          `json:"model"`
	LLMInteractions []interaction   `json:"llm_interactions"`
	AgentSteps      []agentStep     `json:"agent_steps"`
	FinalResult     json.RawMessage `json:"final_result"`
}

type llmMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type interaction struct {
	Timestamp     string       `json:"timestamp"`
	Provider      string       `json:"provider"`
	Model         string       `json:"model"`
	InputMessages []llmMessage `json:"input_messages"`
	Response      *struct {
		Content json.RawMessage `json:"content"`
		Model   string          `json:"model"`
		Usage   *struct {
			Input         json.RawMessage `json:"input_tokens"`
			Output        json.RawMessage `json:"output_tokens"`
			CacheCreation json.RawMessage `json:"cache_creation_input_tokens"`
			CacheRead     json.RawMessage `json:"cache_read_input_tokens"`
			Reasoning     json.RawMessage `json:"reasoning_tokens"`
		} `json:"usage"`
		ToolCalls []toolCall `json:"tool_calls"`
	} `json:"response"`
}

type toolCall struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type toolResult struct {
	CallID  string          `json:"call_id"`
	Success *bool           `json:"success"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

type agentStep struct {
	StepNumber  json.RawMessage `json:"step_number"`
	Timestamp   string          `json:"timestamp"`
	State       string          `json:"state"`
	ToolResults []toolResult    `json:"tool_results"`
	Error       json.RawMessage `json:"error"`
}

// Record reads the whole document.
func (p *trajectoryParser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var d trajectory
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.trajectory(&d), &p.st.Seen, maxSeen), nil
}

func (p *trajectoryParser) trajectory(d *trajectory) []event.Event {
	start, ok := parseTime(d.StartTime)
	if !ok {
		return nil // not started yet: nothing to place in time
	}
	if p.st.Session == "" {
		h := sha256.Sum256([]byte(d.StartTime + "\x00" + d.Task))
		base := transcript.FirstNonEmpty(strings.TrimSuffix(filepath.Base(p.src.Path), ".json"), "trajectory")
		p.st.Session = base + "-" + hex.EncodeToString(h[:4])
	}
	for _, it := range d.LLMInteractions {
		if cwd := projectRoot(it.InputMessages); cwd != "" {
			p.cwd = cwd
			break
		}
	}
	if p.cwd != "" {
		p.proj = project.Root(p.cwd)
	}
	results := map[string]*toolResult{}
	var evs []event.Event
	ses := p.newEvent(event.KindSession, event.ID(Client, "session", p.st.Session, "started"), start)
	ses.Session = &event.Session{State: event.SessionStarted, Cwd: p.cwd, TranscriptPath: p.src.Path, StartedAt: start, Model: strings.TrimSpace(d.Model)}
	evs = append(evs, ses)
	if task := strings.TrimSpace(d.Task); task != "" {
		ev := p.newEvent(event.KindAction, event.ID(Client, "prompt", p.st.Session), start)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(task, maxTarget), Transcript: p.src.Path}
		evs = append(evs, ev)
		evs = append(evs, p.message(0, 0, start, event.Message{Role: event.RoleUser, Text: task})...)
	}
	for i := range d.AgentSteps {
		s := &d.AgentSteps[i]
		for j := range s.ToolResults {
			if r := &s.ToolResults[j]; r.CallID != "" {
				results[r.CallID] = r
			}
		}
		if msg := jsonText(s.Error); strings.TrimSpace(msg) != "" {
			t, ok := parseTime(s.Timestamp)
			if !ok {
				t = start
			}
			no := false
			ev := p.newEvent(event.KindAction, event.ID(Client, "error", p.st.Session, string(bytes.TrimSpace(s.StepNumber))), t)
			ev.Action = &event.Action{Type: event.ActionAPIError, Tool: s.State, Success: &no, Error: transcript.Clip(strings.TrimSpace(msg), maxError), Transcript: p.src.Path}
			evs = append(evs, ev)
		}
	}
	t := start
	for i := range d.LLMInteractions {
		it := &d.LLMInteractions[i]
		if ts, ok := parseTime(it.Timestamp); ok {
			t = ts
		}
		if it.Response == nil {
			continue
		}
		r := it.Response
		idx := i + 1 // 0 is the task's
		model := strings.TrimSpace(transcript.FirstNonEmpty(r.Model, it.Model, d.Model))
		if transcript.NewModel(&p.st.Models, model, maxModels) {
			ev := p.newEvent(event.KindSession, event.ID(Client, "session", p.st.Session, "model", model), t)
			ev.Session = &event.Session{State: event.SessionActive, Cwd: p.cwd, TranscriptPath: p.src.Path, Model: model}
			evs = append(evs, ev)
		}
		if u := r.Usage; u != nil {
			provider := strings.ToLower(strings.TrimSpace(transcript.FirstNonEmpty(it.Provider, d.Provider)))
			tok := event.Tokens{Input: transcript.Count(u.Input), Output: transcript.Count(u.Output), CacheRead: transcript.Count(u.CacheRead),
				CacheCreation: transcript.Count(u.CacheCreation), Reasoning: transcript.Count(u.Reasoning)}
			if provider != "anthropic" {
				tok.Input = max(tok.Input-tok.CacheRead, 0) // input includes the cached part
			}
			tok.Reasoning = min(tok.Reasoning, tok.Output)
			if tu := transcript.PricedUsage(p.prices(), model, "", tok, 0, t); tu != nil {
				ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", p.st.Session, strconv.Itoa(i)), t)
				ev.TokenUsage = tu
				evs = append(evs, ev)
			}
		}
		evs = append(evs, p.message(idx, 0, t, event.Message{Role: event.RoleAssistant, Text: jsonText(r.Content), Model: model})...)
		for j := range r.ToolCalls {
			c := &r.ToolCalls[j]
			if c.CallID == "" && c.Name == "" {
				continue
			}
			callID := transcript.FirstNonEmpty(c.CallID, strconv.Itoa(i)+":"+strconv.Itoa(j))
			a := p.call(c, results[c.CallID], model)
			ev := p.newEvent(event.KindAction, event.ID(Client, "action", p.st.Session, callID), t)
			ev.Action = a
			evs = append(evs, ev)
			evs = append(evs, p.message(idx, j+1, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: c.Name, ToolUseID: c.CallID, Model: model})...)
		}
	}
	return evs
}

func (p *trajectoryParser) call(c *toolCall, res *toolResult, model string) *event.Action {
	args := bytes.TrimSpace(c.Arguments)
	var in map[string]any
	_ = json.Unmarshal(args, &in)
	ty, target := toolOf(c.Name, in, p.cwd, p.proj)
	a := &event.Action{Type: ty, Tool: c.Name, Target: transcript.ClipTarget(target, maxTarget), ToolUseID: c.CallID, Model: model,
		InputHash: transcript.InputHash(args), Transcript: p.src.Path}
	if res != nil && res.Success != nil {
		ok := *res.Success
		a.Success = &ok
		out, errText := jsonText(res.Result), strings.TrimSpace(jsonText(res.Error))
		a.OutputSize = int64(len(out))
		a.Output = transcript.Clip(out, maxOutput)
		if !ok {
			a.Error = transcript.Clip(transcript.FirstNonEmpty(errText, out, "failed"), maxError)
		}
	}
	return a
}

// projectRoot reads the "[Project root path]:\n<path>" trae-agent writes into its first user
// message.
func projectRoot(msgs []llmMessage) string {
	const mark = "[Project root path]:"
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		text := jsonText(m.Content)
		i := strings.Index(text, mark)
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(text[i+len(mark):], " \t\r\n")
		line, _, _ := strings.Cut(rest, "\n")
		if line = strings.TrimSpace(line); filepath.IsAbs(line) {
			return filepath.Clean(line)
		}
	}
	return ""
}

func (p *trajectoryParser) message(record, part int, t time.Time, m event.Message) []event.Event {
	m.Text = transcript.Clip(strings.TrimSpace(m.Text), maxMessage)
	if m.Text == "" && m.Role != event.RoleToolCall {
		return nil
	}
	if m.Role == event.RoleToolCall && m.Tool == "" && m.ToolUseID == "" {
		return nil
	}
	m.Seq = int64(record)*64 + int64(min(part, maxPart))
	ev := p.newEvent(event.KindMessage, event.ID(Client, "message", p.st.Session, strconv.Itoa(record), strconv.Itoa(part)), t)
	ev.Message = &m
	return []event.Event{ev}
}

func (p *trajectoryParser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.proj, V: event.SchemaVersion}
}

// parseTime reads a trajectory time: Python's isoformat, local time without a zone (read in the
// machine's zone), or RFC 3339.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	t, err := time.ParseInLocation("2006-01-02T15:04:05.999999999", s, time.Local)
	if err != nil || t.Year() <= 1970 || t.Year() >= 2262 {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// jsonText is a JSON value as text: a string as it is, null as "", anything else as its JSON.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
