package continuecli

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxSeen    = 1024
	maxModels  = 16
	maxRuns    = 256
	maxPart    = 63
)

// state is what a parser keeps between reads: JSON, small.
type state struct {
	Session string   `json:"session,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Project string   `json:"project,omitempty"`
	Started bool     `json:"started,omitempty"`
	Models  []string `json:"models,omitempty"`
	// N is the number of history items read so far; Runs are when they were first read:
	// [first item index, unix ms], in increasing index order; an item's time is that of the last
	// run starting at or before it.
	N    int64      `json:"n,omitempty"`
	Runs [][2]int64 `json:"runs,omitempty"`
	Seen []string   `json:"seen,omitempty"` // fingerprints of the events emitted lately
}

// Parser reads one session document.
type Parser struct {
	src     transcript.Source
	prices  func() *pricing.Table
	st      state
	emitted transcript.Emitted
	stats   transcript.Stats
	now     func() time.Time // the document's time when it cannot be read (tests set it)
}

func newParser(src transcript.Source, st []byte, prices func() *pricing.Table) (*Parser, error) {
	p := &Parser{src: src, prices: prices, now: time.Now}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, fmt.Errorf("continue-cli parser state for %s: %w", src.Path, err)
		}
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

// doc is a session document.
type doc struct {
	SessionID          string `json:"sessionId"`
	WorkspaceDirectory string `json:"workspaceDirectory"`
	History            []item `json:"history"`
}

type item struct {
	Message        message     `json:"message"`
	ToolCallStates []callState `json:"toolCallStates"`
}

type message struct {
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []toolCall      `json:"toolCalls"`
	Usage     *usage          `json:"usage"`
}

type toolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type callState struct {
	ToolCallID string `json:"toolCallId"`
	Status     string `json:"status"`
	Output     []struct {
		Content string `json:"content"`
	} `json:"output"`
}

type usage struct {
	PromptTokens     flexInt   `json:"prompt_tokens"`
	CompletionTokens flexInt   `json:"completion_tokens"`
	Model            string    `json:"model"`
	CostCents        flexFloat `json:"cost_cents"`
}

// Record reads the whole document. A document that does not parse emits nothing and leaves the
// state as it was.
func (p *Parser) Record(_ int64, raw []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	var d doc
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, err
	}
	return p.emitted.Keep(p.document(&d), &p.st.Seen, maxSeen), nil
}

func (p *Parser) unknown(kind string) {
	if p.stats.Unknown == nil {
		p.stats.Unknown = map[string]int64{}
	}
	p.stats.Unknown[kind]++
}

func (p *Parser) document(d *doc) []event.Event {
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(d.SessionID, p.src.SessionID, strings.TrimSuffix(filepath.Base(p.src.Path), ".json"))
	}
	transcript.SetCwd(&p.st.Cwd, &p.st.Project, d.WorkspaceDirectory)
	p.noteTimes(len(d.History))
	var evs []event.Event
	if !p.st.Started && len(d.History) > 0 {
		p.st.Started = true
		start, ok := p.created()
		if !ok {
			start = p.timeOf(0)
		}
		evs = append(evs, p.sessionEvent(event.SessionStarted, "", start))
	}
	states := map[string]*callState{}
	for i := range d.History {
		for j := range d.History[i].ToolCallStates {
			if s := &d.History[i].ToolCallStates[j]; s.ToolCallID != "" {
				states[s.ToolCallID] = s
			}
		}
	}
	for i := range d.History {
		m := &d.History[i].Message
		t := p.timeOf(i)
		key := strconv.Itoa(i)
		text := contentText(m.Content)
		switch m.Role {
		case "user":
			if prompt := strings.TrimSpace(text); prompt != "" {
				ev := p.newEvent(event.KindAction, p.actionID("prompt", key), t)
				ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), Transcript: p.src.Path}
				evs = append(evs, ev)
				evs = append(evs, p.textMessage(event.RoleUser, key, i, 0, t, prompt, "", "")...)
			}
		case "assistant":
			model, msgID := "", p.messageID(key)
			if m.Usage != nil {
				model = strings.TrimSpace(m.Usage.Model)
				evs = append(evs, p.modelEvent(model, t)...)
				if ev, ok := p.usage(key, msgID, model, m.Usage, t); ok {
					evs = append(evs, ev)
				}
			}
			evs = append(evs, p.textMessage(event.RoleAssistant, key, i, 0, t, text, msgID, model)...)
			for j := range m.ToolCalls {
				c := &m.ToolCalls[j]
				if c.ID == "" {
					continue
				}
				call := p.call(c, states[c.ID], msgID, model, t)
				evs = append(evs, call, p.callMessage(call.Action, key, i, j+1, t))
			}
		case "system", "tool", "thinking":
			// the system prompt, and tool results the toolCallStates hold already
		default:
			p.unknown("role " + m.Role)
		}
	}
	return evs
}

// contentText is a message's text: a string, or the text of its text parts.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var out []string
	for _, pt := range parts {
		if pt.Type == "text" && strings.TrimSpace(pt.Text) != "" {
			out = append(out, pt.Text)
		}
	}
	return strings.Join(out, "\n")
}

func (p *Parser) call(c *toolCall, s *callState, msgID, model string, t time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal([]byte(c.Function.Arguments), &in)
	ty, target := p.toolOf(c.Function.Name, in)
	a := &event.Action{Type: ty, Tool: c.Function.Name, Target: clipTarget(target), ToolUseID: c.ID, MessageID: msgID, Model: model,
		InputHash: inputHash(c.Function.Arguments), Transcript: p.src.Path}
	if s != nil {
		var parts []string
		for _, o := range s.Output {
			parts = append(parts, o.Content)
		}
		out := strings.Join(parts, "\n")
		switch s.Status {
		case "done":
			ok := true
			a.Success = &ok
		case "errored":
			ok := false
			a.Success = &ok
			a.Error = clipError(transcript.FirstNonEmpty(out, "the tool failed"))
		}
		if a.Success != nil {
			a.OutputSize = int64(len(out))
			a.Output = clipOutput(out)
		}
	}
	ev := p.newEvent(event.KindAction, p.actionID("call", c.ID), t)
	ev.Action = a
	return ev
}

// toolOf maps a tool call to its action type and target.
func (p *Parser) toolOf(name string, in map[string]any) (event.ActionType, string) {
	switch name {
	case "Read":
		return event.ActionReadFile, p.relPath(transcript.Arg(in, "filepath", "file_path", "path"))
	case "Write":
		return event.ActionWriteFile, p.relPath(transcript.Arg(in, "filepath", "file_path", "path"))
	case "Edit", "MultiEdit":
		return event.ActionEditFile, p.relPath(transcript.Arg(in, "file_path", "filepath", "path"))
	case "Bash":
		return event.ActionRunCommand, transcript.Arg(in, "command")
	case "Search":
		t := transcript.Arg(in, "pattern", "query")
		if dir := transcript.Arg(in, "path"); dir != "" {
			t += " in " + p.relPath(dir)
		}
		return event.ActionSearchText, t
	case "List":
		return event.ActionSearchFiles, p.relPath(transcript.Arg(in, "dirpath", "path"))
	case "Fetch":
		return event.ActionWebFetch, transcript.Arg(in, "url")
	case "Subagent":
		return event.ActionSpawnSubagent, transcript.FirstNonEmpty(transcript.Arg(in, "prompt", "description"), transcript.Arg(in, "subagent_name"))
	case "Checklist":
		return event.ActionTodoUpdate, ""
	case "AskQuestion":
		return event.ActionAskUser, transcript.Arg(in, "question")
	case "Exit", "ReportFailure":
		return event.ActionTaskComplete, transcript.Arg(in, "reason", "message")
	}
	return event.ActionUnknown, ""
}

func (p *Parser) usage(key, msgID, model string, u *usage, t time.Time) (event.Event, bool) {
	tok := event.Tokens{Input: max(int64(u.PromptTokens), 0), Output: max(int64(u.CompletionTokens), 0)}
	tu := transcript.PricedUsage(p.prices(), model, msgID, tok, float64(u.CostCents)/100, t)
	if tu == nil {
		return event.Event{}, false
	}
	ev := p.newEvent(event.KindTokenUsage, event.ID(Client, "usage", p.st.Session, key), t)
	ev.TokenUsage = tu
	return ev, true
}

// ---------------------------------------------------------------------------------------------
// Times

// noteTimes gives the items not read before (index N and after) the document's modification time.
func (p *Parser) noteTimes(n int) {
	if int64(n) <= p.st.N {
		return
	}
	ms := p.modTime().UnixMilli()
	if k := len(p.st.Runs); k == 0 || p.st.Runs[k-1][1] != ms {
		p.st.Runs = append(p.st.Runs, [2]int64{p.st.N, ms})
		if k := len(p.st.Runs); k > maxRuns {
			p.st.Runs = slices.Clone(p.st.Runs[k-maxRuns:])
		}
	}
	p.st.N = int64(n)
}

func (p *Parser) timeOf(i int) time.Time {
	ms := int64(0)
	for _, r := range p.st.Runs {
		if r[0] > int64(i) {
			break
		}
		ms = r[1]
	}
	if ms == 0 {
		return p.modTime()
	}
	return time.UnixMilli(ms).UTC()
}

// modTime is the document's modification time (now, when it cannot be read).
func (p *Parser) modTime() time.Time {
	if fi, err := os.Stat(p.src.Path); err == nil {
		return fi.ModTime().UTC()
	}
	return p.now().UTC()
}

// created is the session's creation time from the sessions' index beside the document.
func (p *Parser) created() (time.Time, bool) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(p.src.Path), indexFile))
	if err != nil {
		return time.Time{}, false
	}
	var idx []struct {
		SessionID   string          `json:"sessionId"`
		DateCreated json.RawMessage `json:"dateCreated"`
	}
	if json.Unmarshal(data, &idx) != nil {
		return time.Time{}, false
	}
	for _, e := range idx {
		if e.SessionID != p.st.Session {
			continue
		}
		var n flexInt
		if json.Unmarshal(e.DateCreated, &n) == nil && n > 31536000000 && n < 9e12 {
			return time.UnixMilli(int64(n)).UTC(), true
		}
		if t, ok := transcript.ParseTime(strings.Trim(string(e.DateCreated), `"`)); ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// ---------------------------------------------------------------------------------------------
// Sessions

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

// modelEvent reports a model the session had not reported yet.
func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if !transcript.NewModel(&p.st.Models, model, maxModels) {
		return nil
	}
	return []event.Event{p.sessionEvent(event.SessionActive, model, t)}
}

// ---------------------------------------------------------------------------------------------
// Messages

func (p *Parser) message(key string, record, part int, t time.Time, m event.Message) event.Event {
	ev := p.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), p.st.Session, key, strconv.Itoa(part)), t)
	m.Seq = int64(record)*64 + int64(min(part, maxPart))
	ev.Message = &m
	return ev
}

func (p *Parser) textMessage(role, key string, record, part int, t time.Time, text, msgID, model string) []event.Event {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return nil
	}
	return []event.Event{p.message(key, record, part, t, event.Message{Role: role, Text: text, MessageID: msgID, Model: model})}
}

func (p *Parser) callMessage(a *event.Action, key string, record, part int, t time.Time) event.Event {
	return p.message(key, record, part, t, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: a.Tool,
		ToolUseID: a.ToolUseID, MessageID: a.MessageID, Model: a.Model})
}

// messageID names an assistant message, which the CLI gives no id: its usage, text and tool calls
// carry it.
func (p *Parser) messageID(key string) string { return event.ID(Client, "message", p.st.Session, key) }

// ---------------------------------------------------------------------------------------------
// Emitting only what changed

// ---------------------------------------------------------------------------------------------
// Envelope and helpers

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) actionID(parts ...string) string {
	return event.ID(append([]string{Client, string(event.KindAction), p.st.Session}, parts...)...)
}

// flexInt reads a count written as a number or a numeric string; anything else is 0.
type flexInt int64

func (n *flexInt) UnmarshalJSON(b []byte) error {
	var f flexFloat
	_ = f.UnmarshalJSON(b)
	*n = flexInt(f)
	return nil
}

// flexFloat reads a number written as a number or a numeric string; anything else is 0.
type flexFloat float64

func (n *flexFloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > 1e15 || f < -1e15 {
		f = 0
	}
	*n = flexFloat(f)
	return nil
}

func inputHash(args string) string {
	if strings.TrimSpace(args) == "" {
		return ""
	}
	h := sha256.Sum256([]byte(args))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

// relPath makes a file path relative to the project when it lies inside it.
func (p *Parser) relPath(file string) string { return transcript.RelPath(file, p.st.Cwd, p.st.Project) }
