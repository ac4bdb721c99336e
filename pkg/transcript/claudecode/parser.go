package claudecode

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the producing component Claude Code events name in their source field.
const Component = "observer-watch"

// Limits on what a parser keeps and emits.
const (
	maxTarget   = 500  // runes
	maxError    = 2048 // bytes
	maxOutput   = 8192 // bytes
	maxPending  = 128  // calls waiting for a result
	maxMessages = 64   // messages whose last output is remembered
)

// Parser turns the lines of one transcript file into events. It is not safe for concurrent use.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table

	st    state
	stats transcript.Stats
}

var _ transcript.Parser = (*Parser)(nil)

// state is everything a parser needs to resume after the last line it was given. It is JSON.
type state struct {
	V         int    `json:"v"`
	SessionID string `json:"sid,omitempty"` // last sessionId seen on a line
	Cwd       string `json:"cwd,omitempty"`
	Project   string `json:"project,omitempty"` // project root of the session
	LastTime  int64  `json:"t,omitempty"`       // unix nanoseconds of the last timestamp seen
	// Title is a custom-title or ai-title record read before any timestamp: reported as the
	// session's title at the first time the file gives.
	Title   *pendingTitle               `json:"title,omitempty"`
	Pending transcript.Pending[pending] `json:"pending,omitempty"`
	Outputs []msgOut                    `json:"out,omitempty"`
}

// pendingTitle is a title record waiting for a time. Another process, which has not its text,
// reads it again from the file: the line at At, Len bytes long (see recallTitle).
type pendingTitle struct {
	Title  transcript.Memo `json:"s"`
	ByUser bool            `json:"u,omitempty"`
	Key    string          `json:"k"`
	At     int64           `json:"at,omitempty"`
	Len    int             `json:"len,omitempty"`
}

// pending is a tool call whose result may still come.
type pending struct {
	ID        string           `json:"id"`
	Type      event.ActionType `json:"type"`
	Tool      string           `json:"tool,omitempty"`
	Target    transcript.Memo  `json:"target,omitempty"`
	MessageID string           `json:"msg,omitempty"`
	RequestID string           `json:"req,omitempty"`
	Model     string           `json:"model,omitempty"`
	Time      int64            `json:"t"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c pending) PendingID() string { return c.ID }

// msgOut is the largest output a message's lines reported so far in this file.
type msgOut struct {
	ID     string `json:"id"`
	Output int64  `json:"o"`
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

func malformed(format string, args ...any) error {
	return transcript.Malformed(Client, format, args...)
}

// Record parses one complete line.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	evs, err := p.record(off, line)
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// line is the part of a transcript line this package reads.
type line struct {
	Type      string
	Subtype   string
	UUID      string
	SessionID string
	AgentID   string
	Cwd       string
	Timestamp json.RawMessage
	RequestID string

	IsSidechain               bool
	IsMeta                    bool
	IsCompactSummary          bool
	IsVisibleInTranscriptOnly bool
	IsAPIErrorMessage         bool

	Message       json.RawMessage
	ToolUseResult json.RawMessage

	// custom-title (a /rename) and ai-title records
	CustomTitle string
	AITitle     string

	// system records
	Content         json.RawMessage
	Error           json.RawMessage
	APIErrorStatus  json.RawMessage
	RetryAttempt    json.RawMessage
	MaxRetries      json.RawMessage
	CompactMetadata json.RawMessage
}

// decode reads a line in one pass that checks its syntax and decodes only the small fields: the
// message and the tool result stay raw until a record type needs them. A field of the wrong type
// reads as empty.
func (l *line) decode(raw []byte) error {
	var bad []byte // the first field of the wrong type
	str := func(k, v []byte) string {
		s, ok := jsonscan.String(v)
		if !ok && !jsonscan.Null(v) && bad == nil {
			bad = k
		}
		return s
	}
	boolean := func(k, v []byte) bool {
		b, ok := jsonscan.Bool(v)
		if !ok && !jsonscan.Null(v) && bad == nil {
			bad = k
		}
		return b
	}
	err := jsonscan.Members(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "type":
			l.Type = str(k, v)
		case "subtype":
			l.Subtype = str(k, v)
		case "uuid":
			l.UUID = str(k, v)
		case "sessionId":
			l.SessionID = str(k, v)
		case "agentId":
			l.AgentID = str(k, v)
		case "cwd":
			l.Cwd = str(k, v)
		case "timestamp":
			l.Timestamp = v
		case "requestId":
			l.RequestID = str(k, v)
		case "isSidechain":
			l.IsSidechain = boolean(k, v)
		case "isMeta":
			l.IsMeta = boolean(k, v)
		case "isCompactSummary":
			l.IsCompactSummary = boolean(k, v)
		case "isVisibleInTranscriptOnly":
			l.IsVisibleInTranscriptOnly = boolean(k, v)
		case "isApiErrorMessage":
			l.IsAPIErrorMessage = boolean(k, v)
		case "message":
			l.Message = v
		case "toolUseResult":
			l.ToolUseResult = v
		case "content":
			l.Content = v
		case "error":
			l.Error = v
		case "apiErrorStatus":
			l.APIErrorStatus = v
		case "retryAttempt":
			l.RetryAttempt = v
		case "maxRetries":
			l.MaxRetries = v
		case "compactMetadata":
			l.CompactMetadata = v
		case "customTitle":
			l.CustomTitle = str(k, v)
		case "aiTitle":
			l.AITitle = str(k, v)
		}
		return true
	})
	if err == nil && bad != nil {
		err = errFieldType{string(bad)}
	}
	return err
}

// errFieldType reports a field of the wrong type: it makes a record the parser reads malformed,
// and one it skips does not matter.
type errFieldType struct{ key string }

func (e errFieldType) Error() string { return "field " + e.key + " has the wrong type" }

// knownRecords are record types that carry nothing this package reports.
var knownRecords = map[string]bool{
	"summary": true, "file-history-snapshot": true, "queue-operation": true, "progress": true,
	"attachment": true, "tag": true, "agent-name": true, "last-prompt": true,
	"pr-link": true, "turn_end": true,
}

// knownSystem are system subtypes that carry nothing this package reports.
var knownSystem = map[string]bool{
	"turn_duration": true, "stop_hook_summary": true, "informational": true, "local_command": true,
	"away_summary": true, "init": true,
}

func (p *Parser) record(off int64, raw []byte) ([]event.Event, error) {
	n := len(raw)
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, nil
	}
	if !utf8.Valid(raw) {
		return nil, malformed("line is not UTF-8")
	}
	if raw[0] != '{' {
		return nil, malformed("line is not a JSON object")
	}
	var l line
	fieldErr := l.decode(raw)
	if _, ok := fieldErr.(errFieldType); fieldErr != nil && !ok {
		return nil, malformed("%v", fieldErr)
	}
	typ := l.Type
	if typ == "" {
		p.stats.CountUnknown("(no type)")
		return nil, nil
	}
	switch typ {
	case "user", "assistant", "system":
	case "custom-title", "ai-title":
		return p.title(&l, raw, off, n), nil
	default:
		if !knownRecords[typ] {
			p.stats.CountUnknown(typ)
		}
		return nil, nil
	}
	if fieldErr != nil {
		return nil, malformed("%s record: %v", typ, fieldErr)
	}
	if l.Cwd != "" {
		p.setCwd(l.Cwd)
	}
	if l.SessionID != "" {
		p.st.SessionID = l.SessionID
	}
	t, hasTime := p.lineTime(l.Timestamp)
	var evs []event.Event
	var err error
	switch typ {
	case "user":
		evs, err = p.user(&l, raw, off, t)
	case "assistant":
		evs, err = p.assistant(&l, raw, off, t)
	case "system":
		evs, err = p.system(&l, raw, t)
	}
	if err != nil {
		return nil, err
	}
	if len(evs) > 0 && !hasTime {
		return nil, malformed("%s record has no timestamp", typ)
	}
	if p.st.Title != nil && hasTime {
		if p.st.Title.Title != "" { // "": held by another process and not found again (recallTitle)
			evs = append(evs, p.titleEvent(*p.st.Title, t))
		}
		p.st.Title = nil
	}
	return evs, nil
}

// title reads a custom-title record (the title the user gave with /rename) or an ai-title record
// (the one Claude Code generated): the session's title, reported at the last time seen, or held
// until the file gives one. A subagent's file names no title of the session.
func (p *Parser) title(l *line, raw []byte, off int64, n int) []event.Event {
	pt, ok := p.titleOf(l, raw)
	if !ok {
		return nil
	}
	pt.At, pt.Len = off, n
	if p.st.LastTime == 0 {
		p.st.Title = &pt
		return nil
	}
	return []event.Event{p.titleEvent(pt, time.Unix(0, p.st.LastTime).UTC())}
}

// titleOf reads the title of a custom-title or ai-title line; false when it names none of the
// session.
func (p *Parser) titleOf(l *line, raw []byte) (pendingTitle, bool) {
	if p.src.AgentID != "" || l.IsSidechain {
		return pendingTitle{}, false
	}
	title, byUser := l.CustomTitle, l.Type == "custom-title"
	if !byUser {
		title = l.AITitle
	}
	title, ok := event.CleanTitle(title)
	if !ok {
		return pendingTitle{}, false
	}
	return pendingTitle{Title: transcript.Memo(title), ByUser: byUser, Key: lineKey(l, raw)}, true
}

// recallTitle reads a pending title again from its line in the file, in a process that has not
// its text (the state keeps none). A line that no longer gives the same title record (its key
// differs: the file changed) gives nothing.
func (p *Parser) recallTitle() {
	pt := p.st.Title
	if pt == nil || pt.Title != "" || pt.Len <= 0 || pt.Len > maxTitleLine || pt.At < 0 {
		return
	}
	f, err := os.Open(p.src.Path)
	if err != nil {
		return
	}
	defer f.Close()
	raw := make([]byte, pt.Len)
	if _, err := io.ReadFull(io.NewSectionReader(f, pt.At, int64(pt.Len)), raw); err != nil {
		return
	}
	raw = bytes.TrimSpace(raw)
	var l line
	if len(raw) == 0 || raw[0] != '{' || !utf8.Valid(raw) {
		return
	}
	if err := l.decode(raw); err != nil {
		if _, ok := err.(errFieldType); !ok {
			return
		}
	}
	if l.Type != "custom-title" && l.Type != "ai-title" {
		return
	}
	if again, ok := p.titleOf(&l, raw); ok && again.Key == pt.Key && again.ByUser == pt.ByUser {
		pt.Title = again.Title
	}
}

// maxTitleLine bounds the title line recallTitle reads again.
const maxTitleLine = 1 << 20

func (p *Parser) titleEvent(pt pendingTitle, t time.Time) event.Event {
	ev := p.newEvent(event.KindSession, event.ID(Client, string(event.KindSession), p.sessionID(), "title", pt.Key), t)
	ev.Session = &event.Session{Title: string(pt.Title), TitleByUser: pt.ByUser, TranscriptPath: p.src.Path}
	return ev
}

// lineTime parses the line's timestamp, falling back to the last one seen.
func (p *Parser) lineTime(raw json.RawMessage) (time.Time, bool) {
	if s := jsonscan.Str(raw); s != "" {
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

// ---------------------------------------------------------------------------------------------
// Envelope and ids

// setCwd records a line's working directory. The project stays the same while the agent only
// moves inside it (a `cd` into a subdirectory that is not a repository of its own, a nested
// repository such as a freshly generated app); a cwd outside the project switches to that cwd's
// project root.
func (p *Parser) setCwd(cwd string) {
	if cwd == p.st.Cwd && p.st.Project != "" {
		return
	}
	p.st.Cwd = cwd
	if p.st.Project != "" && within(p.st.Project, filepath.Clean(cwd)) {
		return
	}
	p.st.Project = project.Root(cwd)
}

// within reports whether path is root or lies under it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) &&
		filepath.IsAbs(root) == filepath.IsAbs(path)
}

func (p *Parser) project() string { return p.st.Project }

// sessionID is the source's session (the parent's, for a subagent file), else the lines'.
func (p *Parser) sessionID() string {
	if p.src.SessionID != "" {
		return p.src.SessionID
	}
	return p.st.SessionID
}

func (p *Parser) agentID(l *line) string {
	if l.AgentID != "" {
		return l.AgentID
	}
	return p.src.AgentID
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client, SessionID: p.sessionID(),
		Project: p.project(), V: event.SchemaVersion}
}

// lineKey identifies a line: its uuid, or a hash of its content when it has none.
func lineKey(l *line, raw []byte) string {
	if l.UUID != "" {
		return l.UUID
	}
	sum := sha256.Sum256(raw)
	return "line:" + hex.EncodeToString(sum[:12])
}

// lineAction builds an action keyed by its line (prompts, aborts, errors, compactions).
func (p *Parser) lineAction(l *line, raw []byte, t time.Time, a *event.Action) event.Event {
	ev := p.newEvent(event.KindAction, event.ID(Client, string(event.KindAction), lineKey(l, raw)), t)
	a.AgentID = p.agentID(l)
	a.Sidechain = l.IsSidechain
	a.Transcript = p.src.Path
	ev.Action = a
	return ev
}

// ---------------------------------------------------------------------------------------------
// Messages

type message struct {
	ID      string          `json:"id"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   json.RawMessage `json:"usage"`
}

type block struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   *bool           `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

// decodeMessage reads a line's message; a missing or null message is an empty one. The message,
// and every value of it read below (its content, blocks, a tool's input, a result's parts and
// meta), is part of a line whose walk checked it whole (line.decode): they are walked with
// jsonscan's MembersValid and ElementsValid, which do not read every byte of the strings they
// step over again (a tool's output is in a line twice, and three values deep).
func decodeMessage(raw json.RawMessage) (message, []block, string, error) {
	var m message
	if jsonscan.Null(raw) {
		return m, nil, "", nil
	}
	err := jsonscan.MembersValid(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "id":
			m.ID = jsonscan.Str(v)
		case "model":
			m.Model = jsonscan.Str(v)
		case "content":
			m.Content = v
		case "usage":
			m.Usage = v
		}
		return true
	})
	if err != nil {
		return m, nil, "", err
	}
	blocks, text, err := decodeContent(m.Content)
	return m, blocks, text, err
}

// decodeContent reads message content: a string, or an array of blocks.
func decodeContent(raw json.RawMessage) ([]block, string, error) {
	if jsonscan.Null(raw) {
		return nil, "", nil
	}
	switch raw[0] {
	case '"':
		s, ok := jsonscan.String(raw)
		if !ok {
			return nil, "", jsonscan.ErrSyntax
		}
		return nil, s, nil
	case '[':
		var blocks []block
		err := jsonscan.ElementsValid(raw, func(it []byte) bool {
			if it[0] == '{' {
				blocks = append(blocks, decodeBlock(it))
			}
			return true
		})
		return blocks, "", err
	}
	return nil, "", fmt.Errorf("content is neither text nor blocks")
}

// decodeBlock reads one content block (its syntax is already checked).
func decodeBlock(raw []byte) block {
	var b block
	jsonscan.MembersValid(raw, func(k, v []byte) bool {
		switch string(k[1 : len(k)-1]) {
		case "type":
			b.Type = jsonscan.Str(v)
		case "id":
			b.ID = jsonscan.Str(v)
		case "name":
			b.Name = jsonscan.Str(v)
		case "input":
			b.Input = v
		case "text":
			b.Text = jsonscan.Str(v)
		case "thinking":
			b.Thinking = jsonscan.Str(v)
		case "tool_use_id":
			b.ToolUseID = jsonscan.Str(v)
		case "is_error":
			if e, ok := jsonscan.Bool(v); ok {
				b.IsError = &e
			}
		case "content":
			b.Content = v
		}
		return true
	})
	return b
}

// assistant handles one assistant line: its usage, its tool_use blocks, and its messages (text,
// thinking, tool calls).
func (p *Parser) assistant(l *line, raw []byte, off int64, t time.Time) ([]event.Event, error) {
	m, blocks, text, err := decodeMessage(l.Message)
	if err != nil {
		return nil, malformed("assistant message: %v", err)
	}
	var evs []event.Event
	if l.IsAPIErrorMessage {
		msg := text
		for _, b := range blocks {
			if b.Type == "text" && b.Text != "" {
				msg = b.Text
				break
			}
		}
		if msg == "" {
			msg = jsonText(l.Error)
		}
		if status := jsonText(l.APIErrorStatus); status != "" && !strings.Contains(msg, status) {
			msg = strings.TrimSpace(status + " " + msg)
		}
		a := &event.Action{Type: event.ActionAPIError, RequestID: l.RequestID, Error: clipError(msg)}
		if m.Model != syntheticModel {
			a.Model = m.Model
		}
		evs = append(evs, p.lineAction(l, raw, t, a))
	}
	if u, ok := p.usage(l, &m, t); ok {
		evs = append(evs, u)
	}
	// Claude Code's own placeholders (an API error, "No response requested.") are no reply.
	replies := !l.IsAPIErrorMessage && m.Model != syntheticModel
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "text", "thinking":
			if replies {
				if msg, ok := p.replyMessage(l, raw, &m, b, off, i, t); ok {
					evs = append(evs, msg)
				}
			}
		case "tool_use", "server_tool_use":
			if b.ID == "" {
				continue
			}
			call := p.toolCall(l, &m, b, t)
			evs = append(evs, call)
			if replies {
				evs = append(evs, p.callMessage(l, &m, call.Action, off, i, t))
			}
		case "web_search_tool_result", "web_fetch_tool_result":
			if b.ToolUseID == "" {
				continue
			}
			evs = append(evs, p.serverResult(l, b, t))
		}
	}
	return evs, nil
}

// user handles one user line: tool results, a prompt, an interruption, or a compaction summary.
func (p *Parser) user(l *line, raw []byte, off int64, t time.Time) ([]event.Event, error) {
	_, blocks, text, err := decodeMessage(l.Message)
	if err != nil {
		return nil, malformed("user message: %v", err)
	}
	var results []*block
	var texts []string
	images := 0
	for i := range blocks {
		switch blocks[i].Type {
		case "tool_result":
			if blocks[i].ToolUseID != "" {
				results = append(results, &blocks[i])
			}
		case "text":
			texts = append(texts, blocks[i].Text)
		case "image", "document":
			images++
		}
	}
	if text != "" {
		texts = append(texts, text)
	}
	if len(results) > 0 {
		var meta json.RawMessage
		if len(results) == 1 {
			meta = l.ToolUseResult
		}
		evs := make([]event.Event, 0, len(results))
		for _, b := range results {
			evs = append(evs, p.toolResult(l, b, meta, t))
		}
		return evs, nil
	}
	prompt := strings.TrimSpace(strings.Join(texts, "\n"))
	if reason, ok := interruption(prompt); ok {
		return []event.Event{p.lineAction(l, raw, t, &event.Action{Type: event.ActionTurnAborted, Error: reason})}, nil
	}
	if l.IsCompactSummary {
		if prompt == "" {
			return nil, nil
		}
		return []event.Event{p.lineMessage(l, raw, off, t, event.RoleSummary, prompt)}, nil
	}
	if l.IsMeta || l.IsVisibleInTranscriptOnly {
		return nil, nil
	}
	target, ok := promptTarget(prompt)
	if !ok && images == 0 {
		return nil, nil
	}
	if target == "" && images > 0 {
		target = "[image]"
	}
	msg := p.lineMessage(l, raw, off, t, event.RoleUser, target)
	if l.IsSidechain {
		return []event.Event{msg}, nil // a subagent's task prompt: its conversation's first message, no prompt action
	}
	return []event.Event{p.lineAction(l, raw, t, &event.Action{Type: event.ActionUserPrompt, Target: clipTarget(target)}), msg}, nil
}

// interruption recognizes Claude Code's "[Request interrupted by user]" and "[Request interrupted
// by user for tool use]" markers.
func interruption(s string) (string, bool) {
	if !strings.HasPrefix(s, "[Request interrupted by user") {
		return "", false
	}
	reason := strings.TrimPrefix(s, "[")
	if i := strings.IndexByte(reason, ']'); i >= 0 {
		reason = reason[:i]
	}
	return reason, true
}

// promptTarget returns what the user typed, or false for text Claude Code wrote itself.
func promptTarget(s string) (string, bool) {
	if s == "" {
		return "", false
	}
	for _, noise := range []string{"<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
		"<bash-stdout>", "<bash-stderr>", "<system-reminder>"} {
		if strings.HasPrefix(s, noise) {
			return "", false
		}
	}
	if name := between(s, "<command-name>", "</command-name>"); name != "" {
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		if args := strings.TrimSpace(between(s, "<command-args>", "</command-args>")); args != "" {
			name += " " + args
		}
		return name, true
	}
	if strings.HasPrefix(s, "<command-message>") {
		return "", false // a command message without its name: part of a command already counted
	}
	if cmd := between(s, "<bash-input>", "</bash-input>"); cmd != "" {
		return "!" + cmd, true
	}
	return s, true
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	rest := s[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:j])
}

// system handles a system line: API errors and compactions.
func (p *Parser) system(l *line, raw []byte, t time.Time) ([]event.Event, error) {
	switch l.Subtype {
	case "api_error":
		msg := errorText(l.Error)
		if msg == "" {
			msg = jsonText(l.Content)
		}
		if n, ok := jsonInt(l.RetryAttempt); ok {
			retry := fmt.Sprintf("retry %d", n)
			if m, ok := jsonInt(l.MaxRetries); ok {
				retry += fmt.Sprintf("/%d", m)
			}
			msg = strings.TrimSpace(msg + " (" + retry + ")")
		}
		return []event.Event{p.lineAction(l, raw, t, &event.Action{Type: event.ActionAPIError, Error: clipError(msg)})}, nil
	case "compact_boundary", "microcompact_boundary":
		var meta struct {
			Trigger string `json:"trigger"`
		}
		if len(l.CompactMetadata) > 0 && l.CompactMetadata[0] == '{' {
			_ = json.Unmarshal(l.CompactMetadata, &meta) // the trigger is only a label
		}
		return []event.Event{p.lineAction(l, raw, t, &event.Action{Type: event.ActionContextCompacted,
			Tool: l.Subtype, Target: clipTarget(meta.Trigger)})}, nil
	case "":
		return nil, nil // 1.x informational lines ("Running PostToolUse hooks…")
	default:
		if !knownSystem[l.Subtype] {
			p.stats.CountUnknown("system/" + l.Subtype)
		}
		return nil, nil
	}
}

// errorText finds the message in an API error as Claude Code logs it: a string, or an object
// {status, message | error: {message | error: {message}}, cause: {code}}.
func errorText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] != '{' {
		return jsonText(raw)
	}
	var e struct {
		Status  json.RawMessage `json:"status"`
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
		Cause   *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"cause"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return string(raw)
	}
	msg := e.Message
	if msg == "" && len(e.Error) > 0 {
		msg = errorText(e.Error)
	}
	if msg == "" && e.Cause != nil {
		msg = strings.TrimSpace(e.Cause.Code + " " + e.Cause.Message)
	}
	if msg == "" {
		msg = string(raw)
	}
	if status := jsonText(e.Status); status != "" && status != "0" {
		msg = status + " " + msg
	}
	return msg
}

// ---------------------------------------------------------------------------------------------
// Small helpers

// jsonText returns a JSON string's value, or the raw JSON of anything else ("" for null).
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// jsonInt reads a JSON number as an int64.
func jsonInt(raw json.RawMessage) (int64, bool) {
	var n num
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &n) != nil {
		return 0, false
	}
	return int64(n), true
}

// num is a token count: a JSON number (integral or not) or a numeric string. Anything else, and a
// negative or absurd value, reads as 0, so one odd field does not lose a line.
type num int64

func (n *num) UnmarshalJSON(b []byte) error {
	*n = num(transcript.Count(b))
	return nil
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return clipBytes(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return clipBytes(s, maxOutput) }

func clipBytes(s string, max int) string { return transcript.Clip(s, max) }

func cutRunes(s string, n int) string { return transcript.CutRunes(s, n) }

func cutBytes(s string, n int) string { return transcript.CutBytes(s, n) }
