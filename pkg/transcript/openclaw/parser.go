package openclaw

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/jsonscan"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Limits on what a parser keeps and emits.
const (
	maxTarget   = 500  // runes
	maxError    = 2048 // bytes
	maxOutput   = 8192 // bytes
	maxText     = 4096 // bytes of a prompt or summary read for its target and key
	maxPending  = 128  // tool calls waiting for their result, per session
	maxDone     = 16   // tool calls remembered after their result, per session
	maxComps    = 16   // compactions remembered as counted, per session
	maxSessions = 256  // sessions a database parser keeps state for
)

// Parser reads one source: a legacy session file, line by line (Record), or an agent database
// (Poll). It is not safe for concurrent use.
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table

	st    state
	stats transcript.Stats

	roots map[string]string // project.Root cache by cwd
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

// state is everything a parser needs to resume. It is JSON.
type state struct {
	V int `json:"v"`
	// File is the session of a legacy session file.
	File *sess `json:"file,omitempty"`
	// Act is a database's watermark: the latest activity time (unix ms) seen in session_windows.
	Act int64 `json:"act,omitempty"`
	// Sessions are the database's sessions read lately (at most maxSessions, the least recently
	// active dropped first), by session id.
	Sessions map[string]*sess `json:"sessions,omitempty"`
}

// sess is what a parser keeps of one session: its context for the records still to come and,
// in a database, how far it was read.
type sess struct {
	ID       string    `json:"id"`
	Root     string    `json:"root,omitempty"` // the session it belongs to, when it is a subagent's
	Header   bool      `json:"header,omitempty"`
	Cwd      string    `json:"cwd,omitempty"`
	Parent   string    `json:"parent,omitempty"` // previous_session_id of its window (database)
	LastTime int64     `json:"t,omitempty"`      // unix nanoseconds of the last time seen
	Model    string    `json:"model,omitempty"`  // the model of the last assistant message
	Epoch    int       `json:"epoch,omitempty"`
	Comps    []string  `json:"comps,omitempty"` // keys of the last compactions counted
	Pending  []pending `json:"pending,omitempty"`

	// Database only.
	Seq int64  `json:"seq"`           // the last seq read; -1 before any
	Gen string `json:"gen,omitempty"` // the transcript generation it was read in
	Act int64  `json:"act,omitempty"` // its window's activity time when last read
}

// pending is a tool call whose result may still come.
type pending struct {
	CallID string           `json:"id"`
	Key    string           `json:"key"` // the action's event id
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Inner  bool             `json:"inner,omitempty"` // a tool_call wrapper's catalog tool (Tool)
	Target string           `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"` // the response id of the call's message
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t"`              // unix ms when the call's message was written
	Done   bool             `json:"done,omitempty"` // its result was read
}

// owner is the session id events carry: the root session for a subagent's session.
func (s *sess) owner() string {
	if s.Root != "" {
		return s.Root
	}
	return s.ID
}

// agentID is the subagent session's id, "" for a root session.
func (s *sess) agentID() string {
	if s.Root != "" {
		return s.ID
	}
	return ""
}

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src, prices: pricing.Source(a.Prices, a.CurrentPrices), roots: map[string]string{}}
	if p.src.Client == "" {
		p.src.Client = Client
	}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("openclaw: bad parser state for " + src.Path + ": " + err.Error())
		}
	}
	if !src.Database && p.st.File == nil {
		id := src.SessionID
		if id == "" {
			id = SessionIDFromPath(src.Path)
		}
		p.st.File = &sess{ID: id, Seq: -1}
	}
	return p, nil
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

// Record parses one complete line of a legacy session file; a database is read by Poll.
func (p *Parser) Record(_ int64, line []byte) ([]event.Event, error) {
	p.stats.Lines++
	if p.src.Database {
		p.stats.Malformed++
		return nil, malformed("%s is a database, read by Poll", p.src.Path)
	}
	evs, err := p.entry(p.st.File, line)
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// Poll reads an agent database (see db.go); a legacy session file is read by Record.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	if !p.src.Database {
		return nil, errors.New("openclaw: " + p.src.Path + " is a session file, read by Record")
	}
	return p.poll(ctx)
}

// entry is the top level of a record: any entry type, header included.
type entry struct {
	Type      string
	HasType   bool
	Timestamp []byte
	Msg       *message // a message entry's message (when it is an object), walked

	// header
	ID, Cwd, ParentSession, BranchedFrom string
	// compaction
	Summary, TokensBefore []byte
	// session_info
	Name string
}

// decode walks a record once, the message (and its content) included.
func (e *entry) decode(d []byte) error {
	end, err := jsonscan.WalkObject(d, 0, func(k []byte, at int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "type":
			var v []byte
			end, err := raw(d, at, &v)
			if err != nil {
				return 0, err
			}
			s, ok := jsonscan.String(v)
			if !ok && !jsonscan.Null(v) {
				return 0, errors.New("field type is not a string")
			}
			e.Type, e.HasType = s, true
			return end, nil
		case "timestamp":
			return raw(d, at, &e.Timestamp)
		case "message":
			if d[at] != '{' {
				return -1, nil
			}
			e.Msg = &message{}
			return e.Msg.walk(d, at)
		case "id":
			return str(d, at, &e.ID)
		case "cwd":
			return str(d, at, &e.Cwd)
		case "parentSession":
			return str(d, at, &e.ParentSession)
		case "branchedFrom":
			return str(d, at, &e.BranchedFrom)
		case "summary":
			return raw(d, at, &e.Summary)
		case "tokensBefore":
			return raw(d, at, &e.TokensBefore)
		case "name":
			return str(d, at, &e.Name)
		}
		return -1, nil
	})
	if err == nil && !jsonscan.AtEnd(d, end) {
		err = jsonscan.ErrSyntax
	}
	return err
}

// entry parses one record of session s: a line of a session file or a row's event JSON.
func (p *Parser) entry(s *sess, line []byte) ([]event.Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, malformed("record is not UTF-8")
	}
	if line[0] != '{' {
		return nil, malformed("record is not a JSON object (a line rewritten or cut short?)")
	}
	var e entry
	if err := e.decode(line); err != nil {
		return nil, malformed("%v (a line half-written?)", err)
	}
	if !e.HasType {
		p.stats.CountUnknown("(no type)")
		return nil, nil
	}
	t, hasTime := s.entryTime(e.Timestamp)
	switch e.Type {
	case "session":
		return p.header(s, &e, t, hasTime)
	case "message":
		return p.message(s, &e, line, t, hasTime)
	case "compaction":
		return p.compaction(s, &e, t, hasTime)
	case "session_info":
		return p.sessionInfo(s, &e, t, hasTime)
	case "model_change", "thinking_level_change", "branch_summary", "custom", "custom_message", "label":
		return nil, nil
	}
	p.stats.CountUnknown(e.Type)
	return nil, nil
}

// entryTime parses an entry's timestamp (RFC 3339), falling back to the last time seen.
func (s *sess) entryTime(raw []byte) (time.Time, bool) {
	if t, ok := transcript.ParseTime(jsonscan.Str(raw)); ok {
		s.LastTime = t.UnixNano()
		return t, true
	}
	if s.LastTime != 0 {
		return time.Unix(0, s.LastTime).UTC(), true
	}
	return time.Time{}, false
}

// needTime reports an error for an entry that would produce events but has no usable time.
func needTime(hasTime bool, what string) error {
	if hasTime {
		return nil
	}
	return malformed("%s has no timestamp", what)
}

// ---------------------------------------------------------------------------------------------
// Envelope and session events

func (p *Parser) project(cwd string) string {
	if cwd == "" {
		return ""
	}
	if r, ok := p.roots[cwd]; ok {
		return r
	}
	if len(p.roots) > 64 {
		clear(p.roots)
	}
	r := project.Root(cwd)
	p.roots[cwd] = r
	return r
}

func (p *Parser) newEvent(s *sess, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client, SessionID: s.owner(),
		Project: p.project(s.Cwd), V: event.SchemaVersion}
}

func (p *Parser) action(s *sess, id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = p.src.Path
	a.AgentID = s.agentID()
	a.Sidechain = s.Root != ""
	ev := p.newEvent(s, event.KindAction, id, t)
	ev.Action = a
	return ev
}

// header reads the session record: the session's cwd and parent.
func (p *Parser) header(s *sess, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if s.Header {
		p.stats.CountUnknown("session (again)")
		return nil, nil
	}
	if s.ID == "" {
		s.ID = e.ID
	}
	if s.ID == "" {
		return nil, malformed("session header has no id")
	}
	if err := needTime(hasTime, "session header"); err != nil {
		return nil, err
	}
	s.Header = true
	if e.Cwd != "" {
		s.Cwd = e.Cwd
	}
	if s.Root != "" {
		return nil, nil // a subagent's session belongs to its root session
	}
	parent := s.Parent
	for _, ref := range []string{e.ParentSession, e.BranchedFrom} {
		if id := sessionRef(ref); id != "" {
			parent = id
			break
		}
	}
	if strings.EqualFold(parent, s.ID) {
		parent = ""
	}
	ev := p.newEvent(s, event.KindSession, event.ID(Client, string(event.KindSession), s.ID, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: e.Cwd, TranscriptPath: p.src.Path,
		ParentSessionID: parent, StartedAt: t}
	return []event.Event{ev}, nil
}

// sessionRef returns the session id a header's parentSession names: a session id, or the path of
// a session file named after one.
func sessionRef(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	if id := SessionIDFromPath(ref); id != "" {
		return id
	}
	if uuidRE.MatchString(ref) {
		return strings.ToLower(ref)
	}
	return ""
}

// sessionInfo reads a session_info entry: the session's name, which the user gave. An empty
// name yields nothing.
func (p *Parser) sessionInfo(s *sess, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	title, ok := event.CleanTitle(e.Name)
	if !ok || s.Root != "" {
		return nil, nil
	}
	if err := needTime(hasTime, "session_info"); err != nil {
		return nil, err
	}
	ev := p.newEvent(s, event.KindSession, event.ID(Client, string(event.KindSession), s.ID, "title",
		jsonscan.Str(e.Timestamp), title), t)
	ev.Session = &event.Session{Title: title, TitleByUser: true, TranscriptPath: p.src.Path}
	return []event.Event{ev}, nil
}

// modelEvent reports the model of an assistant message when it is not the previous message's.
func (p *Parser) modelEvent(s *sess, model, key string, t time.Time) []event.Event {
	model = strings.TrimSpace(model)
	if model == "" || model == s.Model {
		return nil
	}
	s.Model = model
	if s.Root != "" {
		return nil // the root session's model is its own
	}
	ev := p.newEvent(s, event.KindSession, event.ID(Client, string(event.KindSession), s.ID, "model", model, key), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: model, Cwd: s.Cwd, TranscriptPath: p.src.Path}
	return []event.Event{ev}
}

// compaction is a context compaction: a context_compacted action and the session's next epoch.
func (p *Parser) compaction(s *sess, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if err := needTime(hasTime, "compaction"); err != nil {
		return nil, err
	}
	summary, size, _ := jsonscan.StringPrefix(e.Summary, maxText)
	before := num(e.TokensBefore)
	key := jsonscan.Str(e.Timestamp) + "|" + strconv.FormatInt(before, 10) + "|" +
		strconv.FormatInt(size, 10) + "|" + shortHash(summary)
	if slices.Contains(s.Comps, key) {
		return nil, nil // read again after a rewrite: counted already
	}
	s.Comps = append(s.Comps, key)
	if n := len(s.Comps); n > maxComps {
		s.Comps = append(s.Comps[:0:0], s.Comps[n-maxComps:]...)
	}
	a := &event.Action{Type: event.ActionContextCompacted}
	if before > 0 {
		a.Target = "tokens before: " + strconv.FormatInt(before, 10)
	}
	evs := []event.Event{p.action(s, event.ID(Client, string(event.KindAction), "compaction", key), t, a)}
	if s.Root == "" {
		s.Epoch++
		ses := p.newEvent(s, event.KindSession, event.ID(Client, string(event.KindSession), s.ID, "epoch", key), t)
		ses.Session = &event.Session{State: event.SessionActive, Epoch: s.Epoch, TranscriptPath: p.src.Path}
		evs = append(evs, ses)
	}
	return evs, nil
}

// ---------------------------------------------------------------------------------------------
// Paths and small helpers

// relPath makes a file path relative to the project when it lies inside it; a relative path is
// relative to the session's cwd (OpenClaw's workspace). A leading "@" is dropped, as pi does.
func (p *Parser) relPath(s *sess, file string) string {
	file = strings.TrimPrefix(strings.TrimSpace(file), "@")
	if file == "" {
		return ""
	}
	if !filepath.IsAbs(file) {
		if s.Cwd == "" || !filepath.IsAbs(s.Cwd) || strings.HasPrefix(file, "~") {
			return filepath.Clean(file)
		}
		file = filepath.Join(s.Cwd, file)
	}
	file = filepath.Clean(file)
	if root := p.project(s.Cwd); root != "" {
		if rel, err := filepath.Rel(root, file); err == nil && rel != ".." &&
			!strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return file
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

func num(v []byte) int64 { return transcript.Count(v) }
