package zed

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Limits on what leaves the parser.
const (
	maxTarget  = 500
	maxError   = 2 << 10
	maxOutput  = 8 << 10
	maxMessage = 64 << 10
	maxItem    = 63
)

// placeholderTitle is the title Zed shows before it names a thread.
const placeholderTitle = "New Thread"

// doc is a thread's JSON, current and legacy fields together.
type doc struct {
	Version    string            `json:"version"`
	Title      string            `json:"title"`
	Summary    string            `json:"summary"` // the first agent's title
	UpdatedAt  string            `json:"updated_at"`
	Messages   []json.RawMessage `json:"messages"`
	Cumulative *tokenUsage       `json:"cumulative_token_usage"`
	Requests   json.RawMessage   `json:"request_token_usage"`
	Model      *struct {
		Provider string `json:"provider"`
		Model    string `json:"model"`
	} `json:"model"`
	Snapshot *struct {
		Worktrees []struct {
			Path     string `json:"worktree_path"`
			GitState *struct {
				Branch string `json:"current_branch"`
			} `json:"git_state"`
		} `json:"worktree_snapshots"`
	} `json:"initial_project_snapshot"`
}

// tokenUsage is language_model::TokenUsage.
type tokenUsage struct {
	Input         count `json:"input_tokens"`
	Output        count `json:"output_tokens"`
	CacheCreation count `json:"cache_creation_input_tokens"`
	CacheRead     count `json:"cache_read_input_tokens"`
}

func (u *tokenUsage) tokens() event.Tokens {
	if u == nil {
		return event.Tokens{}
	}
	return event.Tokens{Input: int64(u.Input), Output: int64(u.Output), CacheCreation: int64(u.CacheCreation), CacheRead: int64(u.CacheRead)}
}

// count reads a token count (transcript.Count: a number or numeric string; else 0).
type count int64

func (c *count) UnmarshalJSON(b []byte) error {
	*c = count(transcript.Count(b))
	return nil
}

// msg is one message of either format, as the reader uses it.
type msg struct {
	kind    string // "user", "agent", "compaction", or "" for none
	id      string // a user message's id
	items   []item
	results map[string]result
	raw     json.RawMessage
}

type item struct {
	kind string // text, thinking, tool, image
	text string
	tool *toolUse
}

type toolUse struct {
	id, name string
	input    json.RawMessage
}

type result struct {
	isError bool
	text    string
}

// thread turns one row into events and the thread's next state. An error means the row does not
// decode: nothing is emitted.
func (p *DBParser) thread(r *row, root string, prev threadState) ([]event.Event, threadState, error) {
	raw, err := decode(r.dataType, r.data)
	if err != nil {
		return nil, prev, transcript.Malformed(Client, "thread %s: %v", r.id, err)
	}
	var d doc
	if err := transcript.DecodeDocument(raw, &d); err != nil {
		return nil, prev, fmt.Errorf("thread %s: %w", r.id, err)
	}
	t := &threadReader{p: p, r: r, d: &d, session: root, next: prev}
	if root != r.id {
		t.agent = r.id
	}
	t.next.U = updKey(r.updated)
	evs := t.read()
	return evs, t.next, nil
}

// threadReader holds what reading one thread needs.
type threadReader struct {
	p        *DBParser
	r        *row
	d        *doc
	session  string
	agent    string
	cwd      string
	project  string
	model    string
	created  time.Time
	updated  time.Time
	next     threadState
	evs      []event.Event
	lastTime time.Time
}

func (t *threadReader) read() []event.Event {
	d, r := t.d, t.r
	t.created, _ = parseTime(r.created)
	t.updated, _ = parseTime(r.updated)
	if t.updated.IsZero() {
		t.updated, _ = parseTime(d.UpdatedAt)
	}
	if t.created.IsZero() {
		t.created = t.updated
	}
	if t.created.IsZero() {
		t.p.stats.CountUnknown("thread without time")
		return nil
	}
	if t.updated.Before(t.created) {
		t.updated = t.created
	}
	branch := ""
	if cwd := firstFolder(r.folders); cwd != "" {
		t.setCwd(cwd)
	}
	if d.Snapshot != nil && len(d.Snapshot.Worktrees) > 0 {
		w := d.Snapshot.Worktrees[0]
		if t.cwd == "" {
			t.setCwd(w.Path)
		}
		if w.GitState != nil {
			branch = transcript.CutRunes(strings.TrimSpace(w.GitState.Branch), 200)
		}
	}
	if d.Model != nil {
		t.model = transcript.CutRunes(strings.TrimSpace(d.Model.Model), 200)
	}
	if !t.next.S && t.agent == "" {
		t.next.S = true
		ev := t.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), t.session, "started"), t.created)
		ev.Session = &event.Session{State: event.SessionStarted, Cwd: t.cwd, TranscriptPath: t.p.src.Path, Model: t.model,
			GitBranch: branch, StartedAt: t.created}
		t.evs = append(t.evs, ev)
	}
	if t.agent == "" {
		title := strings.TrimSpace(transcript.FirstNonEmpty(r.summary, d.Title, d.Summary))
		if title == placeholderTitle {
			title = ""
		}
		if key := shortKey(title); title != "" && key != t.next.Ti {
			t.next.Ti = key
			ev := t.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), t.session, "title", title), t.updated)
			ev.Session = &event.Session{State: event.SessionActive, Title: transcript.Clip(title, maxTarget), TranscriptPath: t.p.src.Path}
			t.evs = append(t.evs, ev)
		}
	}
	if key := shortKey(t.model); t.agent == "" && t.model != "" && key != t.next.M {
		t.next.M = key
		ev := t.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), t.session, "model", t.model), t.updated)
		ev.Session = &event.Session{State: event.SessionActive, Cwd: t.cwd, TranscriptPath: t.p.src.Path, Model: t.model}
		t.evs = append(t.evs, ev)
	}
	msgs := t.messages()
	t.readMessages(msgs)
	t.usage()
	return t.evs
}

// messages decodes the thread's messages, either format.
func (t *threadReader) messages() []msg {
	out := make([]msg, len(t.d.Messages))
	for i, raw := range t.d.Messages {
		out[i] = t.decodeMessage(raw)
	}
	return out
}

func (t *threadReader) decodeMessage(raw json.RawMessage) msg {
	m := msg{raw: raw}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "Resume" {
			t.p.stats.CountUnknown("message " + s)
		}
		return m
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		t.p.stats.CountUnknown("message not an object")
		return m
	}
	if _, legacy := obj["role"]; legacy {
		return t.legacyMessage(raw, m)
	}
	switch {
	case obj["User"] != nil:
		var u struct {
			ID      json.RawMessage   `json:"id"`
			Content []json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(obj["User"], &u)
		m.kind, m.id = "user", rawString(u.ID)
		for _, c := range u.Content {
			var ci map[string]json.RawMessage
			if json.Unmarshal(c, &ci) != nil {
				continue
			}
			switch {
			case ci["Text"] != nil:
				m.items = append(m.items, item{kind: "text", text: rawString(ci["Text"])})
			case ci["Image"] != nil:
				m.items = append(m.items, item{kind: "image", text: "[image]"})
			}
		}
	case obj["Agent"] != nil:
		var a struct {
			Content     []json.RawMessage          `json:"content"`
			ToolResults map[string]json.RawMessage `json:"tool_results"`
		}
		_ = json.Unmarshal(obj["Agent"], &a)
		m.kind = "agent"
		for _, c := range a.Content {
			var ci map[string]json.RawMessage
			if json.Unmarshal(c, &ci) != nil {
				continue
			}
			switch {
			case ci["Text"] != nil:
				m.items = append(m.items, item{kind: "text", text: rawString(ci["Text"])})
			case ci["Thinking"] != nil:
				var th struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(ci["Thinking"], &th)
				m.items = append(m.items, item{kind: "thinking", text: th.Text})
			case ci["ToolUse"] != nil:
				var tu struct {
					ID       json.RawMessage `json:"id"`
					Name     string          `json:"name"`
					Input    json.RawMessage `json:"input"`
					RawInput string          `json:"raw_input"`
				}
				_ = json.Unmarshal(ci["ToolUse"], &tu)
				in := toolInput(tu.Input)
				if len(in) == 0 && json.Valid([]byte(tu.RawInput)) {
					in = json.RawMessage(tu.RawInput)
				}
				m.items = append(m.items, item{kind: "tool", tool: &toolUse{id: rawString(tu.ID), name: tu.Name, input: in}})
			case ci["RedactedThinking"] != nil:
			default:
				for k := range ci {
					t.p.stats.CountUnknown("content " + k)
				}
			}
		}
		for id, res := range a.ToolResults {
			var tr struct {
				ToolUseID json.RawMessage `json:"tool_use_id"`
				IsError   bool            `json:"is_error"`
				Content   json.RawMessage `json:"content"`
				Output    json.RawMessage `json:"output"`
			}
			if json.Unmarshal(res, &tr) != nil {
				continue
			}
			if s := rawString(tr.ToolUseID); s != "" {
				id = s
			}
			m.addResult(id, result{isError: tr.IsError, text: resultText(tr.Content, tr.Output)})
		}
	case obj["Compaction"] != nil:
		m.kind = "compaction"
	default:
		for k := range obj {
			t.p.stats.CountUnknown("message " + k)
		}
	}
	return m
}

// legacyMessage reads a message of Zed's first agent: {id, role, segments, tool_uses,
// tool_results, is_hidden}.
func (t *threadReader) legacyMessage(raw json.RawMessage, m msg) msg {
	var l struct {
		ID       json.RawMessage `json:"id"`
		Role     string          `json:"role"`
		Segments []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"segments"`
		ToolUses []struct {
			ID    json.RawMessage `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"tool_uses"`
		ToolResults []struct {
			ToolUseID json.RawMessage `json:"tool_use_id"`
			IsError   bool            `json:"is_error"`
			Content   json.RawMessage `json:"content"`
			Output    json.RawMessage `json:"output"`
		} `json:"tool_results"`
		IsHidden bool `json:"is_hidden"`
	}
	if json.Unmarshal(raw, &l) != nil || l.IsHidden {
		return m
	}
	switch l.Role {
	case "user":
		m.kind, m.id = "user", "m"+rawString(l.ID)
	case "assistant":
		m.kind = "agent"
	case "system":
		return m
	default:
		t.p.stats.CountUnknown("role " + transcript.CutBytes(l.Role, 32))
		return m
	}
	for _, s := range l.Segments {
		switch s.Type {
		case "text":
			m.items = append(m.items, item{kind: "text", text: s.Text})
		case "thinking":
			if m.kind == "agent" {
				m.items = append(m.items, item{kind: "thinking", text: s.Text})
			}
		}
	}
	if m.kind == "agent" {
		for _, tu := range l.ToolUses {
			m.items = append(m.items, item{kind: "tool", tool: &toolUse{id: rawString(tu.ID), name: tu.Name, input: toolInput(tu.Input)}})
		}
	}
	for _, tr := range l.ToolResults {
		m.addResult(rawString(tr.ToolUseID), result{isError: tr.IsError, text: resultText(tr.Content, tr.Output)})
	}
	return m
}

func (m *msg) addResult(id string, r result) {
	if id == "" {
		return
	}
	if m.results == nil {
		m.results = map[string]result{}
	}
	m.results[id] = r
}

// toolInput unwraps the {"type": "json", "value": ...} form of current releases; a "text" input
// becomes its JSON string.
func toolInput(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	var w map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &w) != nil || len(w) != 2 || w["type"] == nil || w["value"] == nil {
		return raw
	}
	switch rawString(w["type"]) {
	case "json", "text":
		return bytes.TrimSpace(w["value"])
	}
	return raw
}

// resultText reads a tool result's content: a string, {"Text": ...}, {"Image": ...} or a list of
// those; when empty, its output when that is a string.
func resultText(content, output json.RawMessage) string {
	if s := contentText(content, 0); strings.TrimSpace(s) != "" {
		return s
	}
	var s string
	if json.Unmarshal(output, &s) == nil {
		return s
	}
	return ""
}

func contentText(raw json.RawMessage, depth int) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || depth > 4 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var list []json.RawMessage
		_ = json.Unmarshal(raw, &list)
		var parts []string
		for _, e := range list {
			if s := contentText(e, depth+1); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "\n")
	case '{':
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(raw, &obj)
		switch {
		case obj["Text"] != nil:
			return contentText(obj["Text"], depth+1)
		case obj["text"] != nil:
			return contentText(obj["text"], depth+1)
		case obj["Image"] != nil:
			return "[image]"
		}
	}
	return ""
}

// timeOf is the time of message i (see the package doc).
func (t *threadReader) timeOf(i int) time.Time {
	switch {
	case i == 0:
		return t.created
	case i < t.next.N && t.next.T > 0:
		if at := time.Unix(0, t.next.T).UTC(); !at.Before(t.created) {
			return at
		}
		return t.created
	}
	return t.updated
}

// readMessages emits the events of the messages not reported yet, and of the last reported one
// when it changed; all of them when one before it changed (an edited prompt).
func (t *threadReader) readMessages(msgs []msg) {
	from := 0
	reported, now := prefixHashes(msgs, t.next.N)
	// A state without P (from a release before it) cannot tell: its prefix is taken as it was.
	if n := t.next.N; n > 0 && n <= len(msgs) && (t.next.P == reported || t.next.P == "") {
		from = n - 1
		if hashOf(msgs[from].raw) == t.next.H {
			from = n
		}
	}
	results := map[string]result{}
	for i := range msgs {
		for id, r := range msgs[i].results {
			results[id] = r
		}
	}
	for i := from; i < len(msgs); i++ {
		t.message(i, &msgs[i], results)
	}
	if len(msgs) > 0 {
		last := len(msgs) - 1
		t.next.T = t.timeOf(last).UnixNano()
		t.next.H = hashOf(msgs[last].raw)
	} else {
		t.next.T, t.next.H = 0, ""
	}
	t.next.N, t.next.P = len(msgs), now
}

// prefixHashes hashes the messages before the last of the first n (those a state of n messages
// reported, less the one that may still grow), and those before the last of all; "" for none.
func prefixHashes(msgs []msg, n int) (reported, all string) {
	h := sha256.New()
	var size [8]byte
	sum := func() string { return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9]) }
	for i := 0; i < len(msgs)-1; i++ {
		if i == n-1 && n > 1 {
			reported = sum()
		}
		raw := bytes.TrimSpace(msgs[i].raw)
		binary.BigEndian.PutUint64(size[:], uint64(len(raw)))
		h.Write(size[:])
		h.Write(raw)
	}
	if len(msgs) > 1 {
		all = sum()
	}
	if n == len(msgs) {
		reported = all
	}
	return reported, all
}

func (t *threadReader) message(i int, m *msg, results map[string]result) {
	at := t.timeOf(i)
	switch m.kind {
	case "user":
		var parts []string
		for _, it := range m.items {
			if strings.TrimSpace(it.text) != "" {
				parts = append(parts, it.text)
			}
		}
		text := strings.TrimSpace(strings.Join(parts, "\n"))
		if text == "" {
			return
		}
		key := transcript.FirstNonEmpty(m.id, strconv.Itoa(i))
		if t.agent == "" {
			ev := t.newEvent(event.KindAction, event.ID(Client, "prompt", t.r.id, key), at)
			ev.Action = &event.Action{Type: event.ActionUserPrompt, Target: transcript.ClipTarget(text, maxTarget), MessageID: key,
				Transcript: t.p.src.Path}
			t.evs = append(t.evs, ev)
		}
		t.textMessage(i, 0, at, event.RoleUser, text, key, "")
	case "agent":
		for j, it := range m.items {
			switch it.kind {
			case "text":
				t.textMessage(i, j, at, event.RoleAssistant, it.text, "", t.model)
			case "thinking":
				t.textMessage(i, j, at, event.RoleThinking, it.text, "", t.model)
			case "tool":
				if it.tool == nil || (it.tool.id == "" && it.tool.name == "") {
					continue
				}
				act := t.action(it.tool, results, at)
				t.evs = append(t.evs, act)
				t.evs = append(t.evs, t.messageEvent(i, j, at, event.Message{Role: event.RoleToolCall, Text: act.Action.Target,
					Tool: transcript.CutRunes(it.tool.name, 200), ToolUseID: act.Action.ToolUseID, Model: t.model}))
			}
		}
	case "compaction":
		ev := t.newEvent(event.KindAction, event.ID(Client, "compaction", t.r.id, strconv.Itoa(i)), at)
		ev.Action = &event.Action{Type: event.ActionContextCompacted, AgentID: t.agent, Transcript: t.p.src.Path}
		t.evs = append(t.evs, ev)
	}
}

func (t *threadReader) action(tu *toolUse, results map[string]result, at time.Time) event.Event {
	var in map[string]any
	_ = json.Unmarshal(tu.input, &in)
	ty, target := t.toolOf(tu.name, in)
	id := transcript.CutBytes(tu.id, 200)
	a := &event.Action{Type: ty, Tool: transcript.CutRunes(tu.name, 200), Target: transcript.ClipTarget(target, maxTarget),
		ToolUseID: id, AgentID: t.agent, Model: t.model, InputHash: inputHash(tu.input), Transcript: t.p.src.Path}
	if res, ok := results[tu.id]; ok && tu.id != "" {
		okay := !res.isError
		a.Success = &okay
		a.OutputSize = int64(len(res.text))
		a.Output = transcript.Clip(res.text, maxOutput)
		if res.isError {
			a.Error = transcript.Clip(strings.TrimSpace(transcript.FirstNonEmpty(res.text, "tool failed")), maxError)
		}
	}
	key := transcript.FirstNonEmpty(tu.id, tu.name)
	ev := t.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), t.r.id, key), at)
	ev.Action = a
	return ev
}

// usage emits the thread's usage when its figures changed (see the package doc).
func (t *threadReader) usage() {
	tok := t.d.Cumulative.tokens()
	if total(tok) == 0 {
		var reqs map[string]*tokenUsage
		if json.Unmarshal(t.d.Requests, &reqs) == nil {
			for _, u := range reqs {
				x := u.tokens()
				tok.Input += x.Input
				tok.Output += x.Output
				tok.CacheCreation += x.CacheCreation
				tok.CacheRead += x.CacheRead
			}
		}
	}
	if total(tok) == 0 {
		return
	}
	key := shortKey(fmt.Sprintf("%d/%d/%d/%d/%s", tok.Input, tok.Output, tok.CacheCreation, tok.CacheRead, t.model))
	if key == t.next.K {
		return
	}
	u := transcript.PricedUsage(t.p.prices(), t.model, "", tok, 0, t.created)
	if u == nil {
		return
	}
	t.next.K = key
	u.AgentID = t.agent
	ev := t.newEvent(event.KindTokenUsage, event.ID(Client, "usage", t.r.id), t.created)
	ev.TokenUsage = u
	t.evs = append(t.evs, ev)
}

func total(tok event.Tokens) int64 { return tok.Input + tok.Output + tok.CacheCreation + tok.CacheRead }

func (t *threadReader) setCwd(cwd string) {
	cwd = strings.TrimSpace(cwd)
	if cwd == "" || t.cwd != "" || !utf8.ValidString(cwd) {
		return
	}
	t.cwd = transcript.CutBytes(filepath.Clean(cwd), 4096)
	if filepath.IsAbs(t.cwd) {
		t.project = project.Root(t.cwd)
	}
}

// relPath makes a Zed path (its first part the worktree's name) relative to the thread's folder.
func (t *threadReader) relPath(file string) string {
	file = strings.TrimSpace(file)
	if file == "" {
		return ""
	}
	if t.cwd != "" && !filepath.IsAbs(file) {
		base := filepath.Base(t.cwd)
		if first, rest, ok := strings.Cut(filepath.ToSlash(file), "/"); ok && first == base {
			file = rest
		} else if file == base {
			file = "."
		}
	}
	return transcript.RelPath(file, t.cwd, t.project)
}

func (t *threadReader) textMessage(i, j int, at time.Time, role, text, msgID, model string) {
	text = transcript.Clip(strings.TrimSpace(text), maxMessage)
	if text == "" {
		return
	}
	t.evs = append(t.evs, t.messageEvent(i, j, at, event.Message{Role: role, Text: text, MessageID: msgID, Model: model}))
}

func (t *threadReader) messageEvent(i, j int, at time.Time, m event.Message) event.Event {
	ev := t.newEvent(event.KindMessage, event.ID(Client, string(event.KindMessage), t.r.id, strconv.Itoa(i), strconv.Itoa(j)), at)
	m.Seq = int64(i)*64 + int64(min(j, maxItem))
	m.AgentID = t.agent
	ev.Message = &m
	return ev
}

func (t *threadReader) newEvent(kind event.Kind, id string, at time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: at, Source: Component, Client: Client, SessionID: t.session,
		Project: t.project, V: event.SchemaVersion}
}

// parseTime reads an RFC 3339 column.
func parseTime(s string) (time.Time, bool) { return transcript.ParseTime(strings.TrimSpace(s)) }

// firstFolder is the first of folder_paths (one path per line).
func firstFolder(s string) string {
	for _, p := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == 0 }) {
		if p = strings.TrimSpace(p); p != "" {
			return p
		}
	}
	return ""
}

// rawString reads a JSON string, or a number's text; else "".
func rawString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) && len(raw) < 32 {
		return string(raw)
	}
	return ""
}

func hashOf(raw []byte) string {
	h := sha256.Sum256(bytes.TrimSpace(raw))
	return base64.RawURLEncoding.EncodeToString(h[:9])
}

func shortKey(s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:6])
}

func inputHash(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return hashOf(raw)
}
