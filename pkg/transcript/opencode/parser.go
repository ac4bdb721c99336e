package opencode

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits of what an event carries.
const (
	maxTarget = 500
	maxError  = 2 << 10
	maxOutput = 8 << 10
	maxText   = 64 << 10 // of a message
	maxIDsAt  = 256      // ids kept at a watermark's millisecond
)

// mark is one table's watermark: the largest time read and the ids read at it.
type mark struct {
	T   int64    `json:"t"`
	IDs []string `json:"ids,omitempty"`
}

func (m *mark) advance(id string, t int64) {
	switch {
	case t > m.T:
		m.T, m.IDs = t, []string{id}
	case t == m.T && !slices.Contains(m.IDs, id) && len(m.IDs) < maxIDsAt:
		m.IDs = append(m.IDs, id)
	}
}

// state is the parser's State: the watermarks, and the titles reported.
type state struct {
	Session mark `json:"session"` // by time_created
	Message mark `json:"message"` // by time_updated
	Part    mark `json:"part"`    // by time_updated
	// Titles holds, per root session whose title was reported, a hash of that title (titleKey):
	// a title set later, which the client writes without moving time_updated, is one that differs.
	Titles map[string]string `json:"titles,omitempty"`
}

func (s state) clone() state {
	s.Session.IDs = slices.Clone(s.Session.IDs)
	s.Message.IDs = slices.Clone(s.Message.IDs)
	s.Part.IDs = slices.Clone(s.Part.IDs)
	s.Titles = maps.Clone(s.Titles)
	return s
}

// Parser reads one database (a transcript.Poller).
type Parser struct {
	a     *Adapter
	src   transcript.Source
	st    state
	stats transcript.Stats
	roots map[string]string // project.Root cache by directory
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(a *Adapter, src transcript.Source, raw []byte) *Parser {
	p := &Parser{a: a, src: src, roots: map[string]string{}}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, fmt.Errorf("%w: %s is a database, read by Poll", transcript.ErrMalformed, p.src.Path)
}

// State returns the watermarks as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

func (p *Parser) unknown(kind string) {
	if p.stats.Unknown == nil {
		p.stats.Unknown = map[string]int64{}
	}
	p.stats.Unknown[kind]++
}

// owner is who a session's events belong to: the root session, and the subagent's session.
type owner struct {
	session, agent, dir string
}

func (p *Parser) owner(r *sessions, id string) owner {
	o := owner{session: id}
	cur := id
	for range 16 { // parent chains are short; a loop in damaged data ends here
		s, ok := r.byID[cur]
		if !ok {
			break
		}
		o.dir = s.dir
		if s.parent == "" || s.parent == cur {
			break
		}
		cur = s.parent
	}
	if cur != id {
		o.session, o.agent = cur, id
	}
	return o
}

func (p *Parser) project(dir string) string {
	if dir == "" {
		return ""
	}
	if r, ok := p.roots[dir]; ok {
		return r
	}
	r := project.Root(dir)
	p.roots[dir] = r
	return r
}

func (p *Parser) newEvent(o owner, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t.UTC(), Source: Component, Client: p.a.client,
		SessionID: o.session, Project: p.project(o.dir), V: event.SchemaVersion}
}

func ms(t int64) time.Time { return time.UnixMilli(t) }

// sessionEvents returns the events of the sessions table: the sessions created since the
// watermark, then the titles.
func (p *Parser) sessionEvents(r *sessions, st *state) []event.Event {
	var out []event.Event
	for _, id := range r.newSess {
		s := r.byID[id]
		if s.parent != "" {
			continue // a subagent's session belongs to its parent's
		}
		o := p.owner(r, id)
		ev := p.newEvent(o, event.KindSession, event.ID(p.a.client, "session", id), ms(s.created))
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: s.dir, TranscriptPath: p.src.Path, StartedAt: ms(s.created).UTC()}
		out = append(out, ev)
	}
	return append(out, p.titles(r, st)...)
}

// defaultTitle is the placeholder title OpenCode and Kilo give a session when they create it (their
// isDefaultTitle): not a title.
var defaultTitle = regexp.MustCompile(`^(New session - |Child session - )\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// titles reports the title of every root session whose title differs from the one last
// reported (every session is read at each pass), and forgets the sessions that are gone. A
// title that replaces a reported one is the user's: the client generates one only over its
// placeholder.
func (p *Parser) titles(r *sessions, st *state) []event.Event {
	var out []event.Event
	for _, id := range r.order {
		s := r.byID[id]
		if s.parent != "" || defaultTitle.MatchString(strings.TrimSpace(s.title)) {
			continue
		}
		title, ok := event.CleanTitle(s.title)
		if !ok {
			continue
		}
		key := titleKey(title)
		prev, seen := st.Titles[id]
		if seen && prev == key {
			continue
		}
		t := s.updated
		if t <= 0 {
			t = s.created
		}
		if t <= 0 {
			continue // no time to report it at
		}
		ev := p.newEvent(p.owner(r, id), event.KindSession, event.ID(p.a.client, "session", id, "title", strconv.FormatInt(t, 10), title), ms(t))
		ev.Session = &event.Session{Title: title, TitleByUser: seen, TranscriptPath: p.src.Path}
		out = append(out, ev)
		if st.Titles == nil {
			st.Titles = map[string]string{}
		}
		st.Titles[id] = key
	}
	for id := range st.Titles {
		if _, ok := r.byID[id]; !ok {
			delete(st.Titles, id)
		}
	}
	return out
}

// titleKey is the short hash of a title the state keeps.
func titleKey(title string) string {
	h := fnv.New32a()
	h.Write([]byte(title))
	return fmt.Sprintf("%08x", h.Sum32())
}

// messageData is the part of a message's data this reader uses.
type messageData struct {
	Role       string  `json:"role"`
	ModelID    string  `json:"modelID"`
	ProviderID string  `json:"providerID"`
	Cost       float64 `json:"cost"`
	Time       struct {
		Created int64 `json:"created"`
	} `json:"time"`
	Tokens *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Read  int64 `json:"read"`
			Write int64 `json:"write"`
		} `json:"cache"`
	} `json:"tokens"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

func decodeObject(data []byte, v any) error {
	data = []byte(strings.TrimSpace(string(data)))
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("%w: data is not a JSON object", transcript.ErrMalformed)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: %v", transcript.ErrMalformed, err)
	}
	return nil
}

// message returns a message's token usage, and its error as an api_error.
func (p *Parser) message(o owner, m msgRow) ([]event.Event, error) {
	var d messageData
	if err := decodeObject(m.data, &d); err != nil {
		return nil, err
	}
	t := ms(m.created)
	if d.Time.Created > 0 {
		t = ms(d.Time.Created)
	}
	var out []event.Event
	switch d.Role {
	case "user":
	case "assistant":
		if k := d.Tokens; k != nil && k.Input+k.Output+k.Reasoning+k.Cache.Read+k.Cache.Write > 0 && validTokens(k.Input, k.Output, k.Reasoning, k.Cache.Read, k.Cache.Write) {
			tok := event.Tokens{Input: k.Input, Output: k.Output + k.Reasoning, Reasoning: k.Reasoning,
				CacheRead: k.Cache.Read, CacheCreation: k.Cache.Write}
			tu := &event.TokenUsage{Tokens: tok, Model: d.ModelID, AgentID: o.agent, Origin: "transcript"}
			tu.CostUSD, tu.Reliability = p.cost(d.ModelID, tok, d.Cost, t)
			ev := p.newEvent(o, event.KindTokenUsage, event.ID(p.a.client, "usage", m.id), t)
			ev.TokenUsage = tu
			out = append(out, ev)
		}
		if d.Error != nil && d.Error.Name != "" {
			typ := event.ActionAPIError
			if d.Error.Name == "MessageAbortedError" {
				typ = event.ActionTurnAborted
			}
			f := false
			msg := d.Error.Name
			if d.Error.Data.Message != "" {
				msg += ": " + d.Error.Data.Message
			}
			a := &event.Action{Type: typ, Tool: d.Error.Name, Success: &f, Error: transcript.Clip(msg, maxError),
				Model: d.ModelID, AgentID: o.agent, Transcript: p.src.Path}
			ev := p.newEvent(o, event.KindAction, event.ID(p.a.client, "error", m.id), t)
			ev.Action = a
			out = append(out, ev)
		}
	default:
		p.unknown("message role " + transcript.CutRunes(d.Role, 40))
	}
	return out, nil
}

func validTokens(v ...int64) bool {
	for _, n := range v {
		if n < 0 || n > 1e12 {
			return false
		}
	}
	return true
}

// cost prices a message: observer's table, else the client's own cost, else unknown.
func (p *Parser) cost(model string, tok event.Tokens, own float64, t time.Time) (float64, event.Reliability) {
	if model != "" {
		if usd, known := p.a.prices().CostAt(model, tok, t); known {
			return usd, event.ReliabilityApproximate
		}
	}
	if own > 0 && own < 1e6 {
		return own, event.ReliabilityApproximate
	}
	return 0, event.ReliabilityUnknown
}

// partData is the part of a part's data this reader uses.
type partData struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Synthetic bool            `json:"synthetic"`
	Ignored   bool            `json:"ignored"`
	Tool      string          `json:"tool"`
	CallID    string          `json:"callID"`
	State     *toolState      `json:"state"`
	Prompt    string          `json:"prompt"`      // subtask
	Agent     string          `json:"agent"`       // subtask
	Desc      string          `json:"description"` // subtask
	Auto      bool            `json:"auto"`        // compaction
	Time      json.RawMessage `json:"time"`
}

type toolState struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input"`
	Output string          `json:"output"`
	Error  string          `json:"error"`
	Time   struct {
		Start int64 `json:"start"`
		End   int64 `json:"end"`
	} `json:"time"`
}

// knownParts are the part types that yield nothing.
var knownParts = map[string]bool{"step-start": true, "step-finish": true, "file": true,
	"patch": true, "snapshot": true, "agent": true, "retry": true}

func (p *Parser) part(o owner, pr partRow) ([]event.Event, error) {
	var d partData
	if err := decodeObject(pr.data, &d); err != nil {
		return nil, err
	}
	t := ms(pr.created)
	switch d.Type {
	case "tool":
		ev := p.tool(o, pr, &d)
		if s := d.State; s == nil || s.Status == "pending" || d.Tool == "" && d.CallID == "" {
			return []event.Event{ev}, nil // its input is not there yet, or it names nothing
		}
		return []event.Event{ev, p.messageEvent(o, pr, event.Message{Role: event.RoleToolCall, Text: ev.Action.Target,
			ToolUseID: d.CallID, Tool: d.Tool})}, nil
	case "text":
		if d.Synthetic || d.Ignored || strings.TrimSpace(d.Text) == "" {
			return nil, nil
		}
		switch pr.role {
		case "user":
			a := &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(d.Text), MessageID: pr.message,
				AgentID: o.agent, Transcript: p.src.Path}
			ev := p.newEvent(o, event.KindAction, event.ID(p.a.client, "prompt", pr.id), t)
			ev.Action = a
			return []event.Event{ev, p.messageEvent(o, pr, event.Message{Role: event.RoleUser, Text: clipText(d.Text)})}, nil
		case "assistant":
			if !p.finished(pr, &d) {
				return nil, nil
			}
			role := event.RoleAssistant
			if pr.summary {
				role = event.RoleSummary
			}
			return []event.Event{p.messageEvent(o, pr, event.Message{Role: role, Text: clipText(d.Text)})}, nil
		}
		return nil, nil
	case "reasoning":
		if pr.role != "assistant" || strings.TrimSpace(d.Text) == "" || !p.finished(pr, &d) {
			return nil, nil // an encrypted reasoning has no text
		}
		return []event.Event{p.messageEvent(o, pr, event.Message{Role: event.RoleThinking, Text: clipText(d.Text)})}, nil
	case "subtask":
		target := d.Desc
		if target == "" {
			target = d.Prompt
		}
		if d.Agent != "" {
			target = d.Agent + ": " + target
		}
		a := &event.Action{Type: event.ActionSpawnSubagent, Tool: "subtask", Target: clipTarget(target),
			MessageID: pr.message, AgentID: o.agent, Transcript: p.src.Path}
		ev := p.newEvent(o, event.KindAction, event.ID(p.a.client, "action", pr.id), t)
		ev.Action = a
		return []event.Event{ev, p.messageEvent(o, pr, event.Message{Role: event.RoleToolCall, Text: a.Target, Tool: "subtask"})}, nil
	case "compaction":
		target := "manual"
		if d.Auto {
			target = "auto"
		}
		a := &event.Action{Type: event.ActionContextCompacted, Tool: "compaction", Target: target,
			MessageID: pr.message, AgentID: o.agent, Transcript: p.src.Path}
		ev := p.newEvent(o, event.KindAction, event.ID(p.a.client, "compaction", pr.id), t)
		ev.Action = a
		return []event.Event{ev}, nil
	}
	if !knownParts[d.Type] {
		p.unknown("part " + transcript.CutRunes(d.Type, 40))
	}
	return nil, nil
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

// clipText scrubs a message's text and keeps at most maxText bytes of it.
func clipText(s string) string { return transcript.Clip(s, maxText) }

// finished reports whether a streamed text or reasoning part is complete: the client sets its
// time.end when the stream of it ends (or is cut off), and completes the message after. A message
// is stored once, as first read, so a part still streaming is left for the pass that reads it
// again at its end.
func (p *Parser) finished(pr partRow, d *partData) bool {
	var tm struct {
		End int64 `json:"end"`
	}
	if len(d.Time) > 0 && json.Unmarshal(d.Time, &tm) == nil && tm.End > 0 {
		return true
	}
	return pr.msgDone > 0
}

// messageEvent returns the message event of a part: id event.ID(client, "message", part id), at
// the part's creation, ordered by its message's creation time and its index in the message.
func (p *Parser) messageEvent(o owner, pr partRow, m event.Message) event.Event {
	m.Seq = pr.msgCreated*64 + pr.index
	m.MessageID = pr.message
	m.AgentID, m.Sidechain = o.agent, o.agent != ""
	if pr.role == "assistant" {
		m.Model = pr.model
	}
	ev := p.newEvent(o, event.KindMessage, event.ID(p.a.client, "message", pr.id), ms(pr.created))
	ev.Message = &m
	return ev
}

func (p *Parser) tool(o owner, pr partRow, d *partData) event.Event {
	a := &event.Action{Type: ToolType(d.Tool), Tool: d.Tool, ToolUseID: d.CallID, MessageID: pr.message,
		Model: pr.model, AgentID: o.agent, Transcript: p.src.Path}
	t := ms(pr.created)
	if s := d.State; s != nil {
		a.Target = clipTarget(p.target(d.Tool, s.Input, o.dir))
		a.InputHash = hashInput(s.Input)
		if s.Time.Start > 0 {
			t = ms(s.Time.Start)
			if s.Time.End >= s.Time.Start {
				a.DurationMs = s.Time.End - s.Time.Start
			}
		}
		switch s.Status {
		case "completed":
			ok := true
			a.Success = &ok
			a.Output = transcript.Clip(s.Output, maxOutput)
			a.OutputSize = int64(len(s.Output))
		case "error":
			ok := false
			a.Success = &ok
			a.Error = transcript.Clip(s.Error, maxError)
		}
	}
	ev := p.newEvent(o, event.KindAction, event.ID(p.a.client, "action", pr.id), t)
	ev.Action = a
	return ev
}
