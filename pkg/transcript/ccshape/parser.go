package ccshape

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
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

// pending is a tool call waiting for its result.
type pending struct {
	ID     string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"`
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t,omitempty"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c pending) PendingID() string { return c.ID }

// state is what a parser keeps between lines: JSON, small, no transcript text but memos. Its
// field names are those the clients' own parsers wrote, so that a saved state still loads.
type state struct {
	Session string                      `json:"session,omitempty"`
	Agent   string                      `json:"agent,omitempty"` // the file's own session id, when its records name another (a subagent's file)
	Known   bool                        `json:"known,omitempty"` // the records' session id was read
	Lines   int64                       `json:"lines,omitempty"`
	Started bool                        `json:"started,omitempty"`
	Cwd     string                      `json:"cwd,omitempty"`
	Project string                      `json:"project,omitempty"`
	Models  []string                    `json:"models,omitempty"`
	Model0  string                      `json:"model0,omitempty"` // the model named before the session started
	Title   string                      `json:"title,omitempty"`  // TextHash of the title reported
	FirstT  int64                       `json:"first_t,omitempty"`
	LastT   int64                       `json:"last_t,omitempty"`
	Pending transcript.Pending[pending] `json:"pending,omitempty"`
}

// Parser reads one transcript of a client whose records are R (see Line).
type Parser[R any, L Line[R]] struct {
	cfg    *Config[L]
	src    transcript.Source
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
}

// New returns a parser of cfg's client for one transcript, resumed from state when it is not
// nil. Its error is the state's decoding error, for the caller to name itself in.
func New[R any, L Line[R]](cfg *Config[L], src transcript.Source, state []byte, prices func() *pricing.Table) (*Parser[R, L], error) {
	p := &Parser[R, L]{cfg: cfg, src: src, prices: prices}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &p.st); err != nil {
			return nil, err
		}
	}
	if p.st.Session == "" {
		p.st.Session = transcript.FirstNonEmpty(src.SessionID, strings.TrimSuffix(filepath.Base(src.Path), ".jsonl"))
	}
	return p, nil
}

// State returns the parser's state as JSON.
func (p *Parser[R, L]) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts what the parser saw.
func (p *Parser[R, L]) Stats() transcript.Stats { return p.stats.Clone() }

// known are the record types that carry nothing a reader reports, whatever the client.
var known = map[string]bool{"summary": true, "system": true}

// Record reads one line.
func (p *Parser[R, L]) Record(_ int64, line []byte) (evs []event.Event, err error) {
	defer func() { p.stats.Count(len(evs), err) }()
	client := p.cfg.Client
	line = bytes.TrimSpace(line)
	switch {
	case len(line) == 0:
		return nil, nil
	case !utf8.Valid(line):
		return nil, transcript.Malformed(client, "line is not UTF-8")
	case line[0] != '{':
		return nil, transcript.Malformed(client, "line is not a JSON object")
	}
	x := L(new(R))
	if err := json.Unmarshal(line, x); err != nil {
		return nil, transcript.Malformed(client, "line does not parse: %v", err)
	}
	r := x.base()
	seq := p.st.Lines
	p.st.Lines++
	if p.cfg.Session != nil {
		p.sessionOf(p.cfg.Session(x))
	}
	t, ok := p.time(r.Timestamp)
	if !ok {
		p.stats.CountUnknown("(no timestamp)")
		return nil, nil
	}
	if p.st.FirstT == 0 {
		p.st.FirstT = t.UnixNano()
	}
	p.setCwd(r.Cwd)
	rd := &reader[R, L]{p: p, x: x, r: r, line: line, seq: seq, t: t}
	if !p.st.Started && p.agent() == "" && (p.st.Cwd != "" || r.Type == "user" || r.Type == "assistant") {
		// The session starts at its first record; its event waits for the first record that
		// says where it runs (iFlow writes the cwd on user records only, and Qoder's first
		// line, its runtime config, names none).
		p.st.Started = true
		first := time.Unix(0, p.st.FirstT).UTC()
		ev := p.newEvent(event.KindSession, event.ID(client, string(event.KindSession), p.st.Session, "started"), first)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Cwd, GitBranch: transcript.CutRunes(strings.TrimSpace(r.GitBranch), 200),
			TranscriptPath: p.src.Path, StartedAt: first}
		if transcript.NewModel(&p.st.Models, p.st.Model0, maxModels) {
			ev.Session.Model = p.st.Model0
		}
		p.st.Model0 = ""
		rd.evs = append(rd.evs, ev)
	}
	switch r.Type {
	case "user":
		rd.user()
	case "assistant":
		rd.assistant()
	default:
		if m, ok := p.other(x); ok {
			rd.model(m.Model)
			rd.title(m.Title, m.TitleByUser)
		} else if !known[r.Type] {
			p.stats.CountUnknown(transcript.FirstNonEmpty(r.Type, "(no type)"))
		}
	}
	return rd.evs, nil
}

// other reads a record of the client's own type (Config.Other).
func (p *Parser[R, L]) other(x L) (Meta, bool) {
	if p.cfg.Other == nil {
		return Meta{}, false
	}
	return p.cfg.Other(x)
}

// time reads a record's time (RFC 3339, or unix milliseconds), else the last time seen.
func (p *Parser[R, L]) time(raw json.RawMessage) (time.Time, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, ok := transcript.ParseTime(s); ok {
			p.st.LastT = t.UnixNano()
			return t, true
		}
	} else if ms := transcript.Count(raw); ms > 31536000000 && ms < 9e12 {
		t := time.UnixMilli(ms).UTC()
		p.st.LastT = t.UnixNano()
		return t, true
	}
	if p.st.LastT > 0 {
		return time.Unix(0, p.st.LastT).UTC(), true
	}
	return time.Time{}, false
}

// reader holds what reading one record needs.
type reader[R any, L Line[R]] struct {
	p    *Parser[R, L]
	x    L       // the record as the client reads it, for the hooks
	r    *Record // its common fields
	line []byte
	seq  int64
	t    time.Time
	evs  []event.Event
}

// key is the record's stable key: its uuid, else a hash of the line.
func (rd *reader[R, L]) key() string {
	if u := strings.TrimSpace(rd.r.UUID); u != "" {
		return transcript.CutBytes(u, 200)
	}
	h := sha256.Sum256(rd.line)
	return "#" + base64.RawURLEncoding.EncodeToString(h[:12])
}

func (rd *reader[R, L]) blocks() (text string, blocks []Block) {
	if rd.r.Message == nil {
		return "", nil
	}
	raw := bytes.TrimSpace(rd.r.Message.Content)
	if len(raw) > 0 && raw[0] == '"' {
		_ = json.Unmarshal(raw, &text)
		return text, nil
	}
	_ = json.Unmarshal(raw, &blocks)
	return "", blocks
}

// injected reports text a client injects into a user record, not typed by the user.
func injected(s string) bool {
	for _, p := range []string{"<command-", "<local-command-", "<system-reminder>", "Caveat:", "<user-memory-input>", "[Request interrupted"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (rd *reader[R, L]) user() {
	text, blocks := rd.blocks()
	var parts []string
	images := 0
	if t := strings.TrimSpace(text); t != "" {
		parts = append(parts, t)
	}
	results := 0
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results++
		}
	}
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "text":
			if t := strings.TrimSpace(b.Text); t != "" {
				parts = append(parts, t)
			}
		case "image":
			images++
		case "tool_result":
			rd.result(b, results == 1)
		}
	}
	prompt := strings.TrimSpace(strings.Join(parts, "\n"))
	if prompt == "" && images > 0 && results == 0 {
		prompt = "[image]"
	}
	key := rd.key()
	switch {
	case rd.r.IsCompactSummary:
		ev := rd.p.newEvent(event.KindAction, event.ID(rd.p.cfg.Client, "compaction", key), rd.t)
		ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: rd.p.agent(), Transcript: rd.p.src.Path}
		rd.evs = append(rd.evs, ev)
		rd.textMessage(0, event.RoleSummary, prompt, key, "")
		return
	case prompt == "" || rd.r.IsMeta || injected(prompt):
		return
	}
	if rd.p.agent() == "" && !rd.r.IsSidechain {
		ev := rd.p.newEvent(event.KindAction, event.ID(rd.p.cfg.Client, "prompt", key), rd.t)
		ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(prompt), MessageID: key, Transcript: rd.p.src.Path}
		rd.evs = append(rd.evs, ev)
	}
	rd.textMessage(0, event.RoleUser, prompt, key, "")
}

func (rd *reader[R, L]) assistant() {
	m := rd.r.Message
	if m == nil {
		return
	}
	model := transcript.CutRunes(strings.TrimSpace(m.Model), 200)
	rd.model(model)
	msgID := transcript.FirstNonEmpty(transcript.CutBytes(m.ID, 200), rd.key())
	if m.Usage != nil {
		tok := event.Tokens{Input: int64(m.Usage.Input), Output: int64(m.Usage.Output),
			CacheRead: int64(m.Usage.CacheRead), CacheCreation: int64(m.Usage.CacheCreation)}
		if u := transcript.PricedUsage(rd.p.prices(), model, msgID, tok, 0, rd.t); u != nil {
			u.AgentID = rd.p.agent()
			ev := rd.p.newEvent(event.KindTokenUsage, event.ID(rd.p.cfg.Client, "usage", msgID), rd.t)
			ev.TokenUsage = u
			rd.evs = append(rd.evs, ev)
		}
	}
	_, blocks := rd.blocks()
	for j := range blocks {
		b := &blocks[j]
		switch b.Type {
		case "text":
			rd.textMessage(j, event.RoleAssistant, b.Text, msgID, model)
		case "thinking":
			rd.textMessage(j, event.RoleThinking, b.Thinking, msgID, model)
		case "tool_use":
			rd.call(j, b, msgID, model)
		}
	}
}

// call emits a tool_use block's action, without outcome, and waits for its result.
func (rd *reader[R, L]) call(j int, b *Block, msgID, model string) {
	id := transcript.CutBytes(strings.TrimSpace(b.ID), 200)
	name := transcript.CutRunes(strings.TrimSpace(b.Name), 200)
	if id == "" && name == "" {
		return
	}
	if id == "" {
		id = rd.key() + "#" + strconv.Itoa(j)
	}
	var in map[string]any
	_ = json.Unmarshal(b.Input, &in)
	ty, target := rd.p.cfg.Tool(name, in, rd.p.relPath)
	target = clipTarget(target)
	a := &event.Action{Type: ty, Tool: name, Target: target, ToolUseID: id, MessageID: msgID, AgentID: rd.p.agent(),
		Sidechain: rd.r.IsSidechain, Model: model, InputHash: transcript.InputHash(b.Input), Transcript: rd.p.src.Path}
	ev := rd.p.newEvent(event.KindAction, rd.p.actionID(id), rd.t)
	ev.Action = a
	rd.evs = append(rd.evs, ev)
	rd.p.st.Pending.Replace(pending{ID: id, Type: ty, Tool: name, Target: transcript.Memo(target), Msg: msgID, Model: model, Time: rd.t.UnixNano()}, maxPending)
	rd.evs = append(rd.evs, rd.message(j, event.Message{Role: event.RoleToolCall, Text: target, Tool: name, ToolUseID: id,
		MessageID: msgID, Model: model}))
}

// result emits the action of a tool_result block with its outcome; alone reports that the
// block is its record's only tool result.
func (rd *reader[R, L]) result(b *Block, alone bool) {
	id := transcript.CutBytes(strings.TrimSpace(b.ToolUseID), 200)
	if id == "" {
		return
	}
	a := &event.Action{Type: event.ActionUnknown, ToolUseID: id, AgentID: rd.p.agent(), Sidechain: rd.r.IsSidechain,
		Transcript: rd.p.src.Path}
	if pc, ok := rd.p.st.Pending.Take(id); ok {
		a.Type, a.Tool, a.Target, a.MessageID, a.Model = pc.Type, pc.Tool, string(pc.Target), pc.Msg, pc.Model
		if d := rd.t.UnixNano() - pc.Time; pc.Time > 0 && d >= 0 {
			a.DurationMs = d / int64(time.Millisecond)
		}
	}
	var o Outcome
	if rd.p.cfg.Result != nil {
		o = rd.p.cfg.Result(b, rd.x, alone)
	} else {
		o = Outcome{Output: resultText(b.Content), Failed: b.IsError}
	}
	if a.Tool == "" && o.Tool != "" {
		a.Tool, a.Type = o.Tool, o.Type
	}
	ok := !o.Failed
	a.Success = &ok
	a.OutputSize = int64(len(o.Output))
	a.Output = transcript.Clip(o.Output, maxOutput)
	if o.Failed {
		a.Error = transcript.Clip(transcript.FirstNonEmpty(o.Error, o.Output, "tool failed"), maxError)
	}
	ev := rd.p.newEvent(event.KindAction, rd.p.actionID(id), rd.t)
	ev.Action = a
	rd.evs = append(rd.evs, ev)
}

func (rd *reader[R, L]) model(model string) {
	model = transcript.CutRunes(strings.TrimSpace(model), 200)
	if rd.p.agent() != "" || model == "" {
		return
	}
	if !rd.p.st.Started {
		rd.p.st.Model0 = model // reported with the started event
		return
	}
	if !transcript.NewModel(&rd.p.st.Models, model, maxModels) {
		return
	}
	ev := rd.p.newEvent(event.KindSession, event.ID(rd.p.cfg.Client, string(event.KindSession), rd.p.st.Session, "model", model), rd.t)
	ev.Session = &event.Session{State: event.SessionActive, Cwd: rd.p.st.Cwd, TranscriptPath: rd.p.src.Path, Model: model}
	rd.evs = append(rd.evs, ev)
}

func (rd *reader[R, L]) title(title string, byUser bool) {
	title = strings.TrimSpace(title)
	if title == "" || rd.p.agent() != "" {
		return
	}
	h := transcript.TextHash(title)
	if h == rd.p.st.Title {
		return
	}
	rd.p.st.Title = h
	ev := rd.p.newEvent(event.KindSession, event.ID(rd.p.cfg.Client, string(event.KindSession), rd.p.st.Session, "title", title), rd.t)
	ev.Session = &event.Session{Title: transcript.Clip(title, maxTarget), TitleByUser: byUser, TranscriptPath: rd.p.src.Path}
	rd.evs = append(rd.evs, ev)
}

func (rd *reader[R, L]) textMessage(j int, role, text, msgID, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	rd.evs = append(rd.evs, rd.message(j, event.Message{Role: role, Text: text, MessageID: msgID, Model: model}))
}

// message is the message event of block j; a tool call's is keyed by its tool use id, so that a
// record written again with the same calls yields the same message.
func (rd *reader[R, L]) message(j int, m event.Message) event.Event {
	client := rd.p.cfg.Client
	id := event.ID(client, string(event.KindMessage), rd.key(), strconv.Itoa(j))
	if m.Role == event.RoleToolCall && m.ToolUseID != "" {
		id = event.ID(client, string(event.KindMessage), "tool_use", rd.p.st.Session, m.ToolUseID)
	}
	ev := rd.p.newEvent(event.KindMessage, id, rd.t)
	m.Seq = rd.seq*64 + int64(min(j, maxBlock))
	m.AgentID = rd.p.agent()
	m.Sidechain = rd.r.IsSidechain
	ev.Message = &m
	return ev
}

// ---------------------------------------------------------------------------------------------
// Sessions, pending calls, helpers

// sessionOf reads the session id of the file's records once: a file whose records name a
// session other than its own (its name) is a subagent's, in its parent's session.
func (p *Parser[R, L]) sessionOf(id string) {
	id = transcript.CutBytes(strings.TrimSpace(id), 200)
	if p.st.Known || id == "" {
		return
	}
	p.st.Known = true
	if own := p.st.Session; id != own {
		p.st.Session, p.st.Agent = id, own
	}
}

// agent is the subagent whose file this is, "" for a session's own file: the one its records
// told when the client links files by them, else the Source's.
func (p *Parser[R, L]) agent() string {
	if p.cfg.Session != nil {
		return p.st.Agent
	}
	return p.src.AgentID
}

func (p *Parser[R, L]) actionID(toolUseID string) string {
	return event.ID(p.cfg.Client, string(event.KindAction), p.st.Session, toolUseID)
}

func (p *Parser[R, L]) setCwd(cwd string) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" || p.st.Cwd != "" {
		return
	}
	p.st.Cwd = transcript.CutBytes(filepath.Clean(cwd), 4096)
	if filepath.IsAbs(p.st.Cwd) {
		p.st.Project = project.Root(p.st.Cwd)
	}
}

func (p *Parser[R, L]) relPath(file string) string {
	return transcript.RelPath(file, p.st.Cwd, p.st.Project)
}

func (p *Parser[R, L]) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: p.cfg.Client,
		SessionID: p.st.Session, Project: p.st.Project, V: event.SchemaVersion}
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }
