package pi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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

// Reader turns pi session entries into events, one session's entries at a time, wherever they
// are kept: the Parser of this package reads a session file with it, and OpenClaw's reader
// (package openclaw), whose records are pi's entries, its session files and database rows. The
// client name, the tool mapping and the few entries a client adds are the Reader's settings; what
// a session has read so far is its Session. A Reader is not safe for concurrent use.
type Reader struct {
	// Client is the client name events carry. Every event id starts with it.
	Client string
	// Path is the transcript path events carry.
	Path string
	// Prices returns the pricing table in force when a usage is priced.
	Prices func() *pricing.Table
	// Tools maps tool calls to actions.
	Tools Tools
	// ParentID returns the session id a header's parentSession or branchedFrom names, "" for
	// none; nil means a header names no parent.
	ParentID func(parentSession, branchedFrom string) string
	// Custom reads a message of role custom (customType, its details raw, the message's key and
	// the entry's time; hasTime is false when the entry has none); nil means such messages, the
	// extensions' own, yield nothing.
	Custom func(s *Session, customType string, details []byte, key string, t time.Time, hasTime bool) ([]event.Event, error)
	// Place is where the record being read lies among its session's records, growing along them
	// (a line's byte offset, a row's sequence number), set by the caller before Record: a
	// message's Seq is Place × 64 plus the index of its block in the record.
	Place int64
	// Stats counts what Record read.
	Stats transcript.Stats

	roots map[string]string // project.Root cache by cwd
}

// Session is what a Reader keeps of one session between its entries. It is JSON, part of a
// parser's state.
type Session struct {
	ID string `json:"id"`
	// Root is the session this one belongs to, when it is a subagent's (OpenClaw's database
	// says so; pi's files never do): its events carry Root's id and its own as AgentID, and it
	// yields no session events.
	Root    string `json:"root,omitempty"`
	Header  bool   `json:"header,omitempty"` // the header was read
	Version int    `json:"ver,omitempty"`    // the header's format version (1 when absent)
	Cwd     string `json:"cwd,omitempty"`
	// Parent is the session this one follows when its header names none (OpenClaw's database
	// knows it from the session's window).
	Parent   string                   `json:"parent,omitempty"`
	LastTime int64                    `json:"t,omitempty"`     // unix nanoseconds of the last time seen
	Model    string                   `json:"model,omitempty"` // the model of the last assistant message
	Epoch    int                      `json:"epoch,omitempty"`
	Comps    []string                 `json:"comps,omitempty"` // keys of the last compactions counted
	Pending  transcript.Pending[Call] `json:"pending,omitempty"`
}

// Call is a tool call whose result may still come.
type Call struct {
	CallID string           `json:"id"`
	Key    string           `json:"key"` // the action's event id
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Inner  bool             `json:"inner,omitempty"` // Tool is the tool the named one ran (Tools.Unwrap)
	Target transcript.Memo  `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"` // the response id of the call's message
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t"`              // unix ms when the call's message was written
	Done   bool             `json:"done,omitempty"` // its result was read
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c Call) PendingID() string { return c.CallID }

// owner is the session id events carry: the root session for a subagent's session.
func (s *Session) owner() string {
	if s.Root != "" {
		return s.Root
	}
	return s.ID
}

// agentID is the subagent session's id, "" for a root session.
func (s *Session) agentID() string {
	if s.Root != "" {
		return s.ID
	}
	return ""
}

// Limits on what a reader keeps and emits.
const (
	maxTarget  = 500      // runes
	maxError   = 2048     // bytes
	maxOutput  = 8192     // bytes
	maxText    = 4096     // bytes of a prompt or summary read for its target and key
	maxMessage = 64 << 10 // bytes of a message's text
	maxPending = 128      // tool calls waiting for their result, per session
	maxDone    = 16       // tool calls remembered after their result, per session
	maxComps   = 16       // compactions remembered as counted, per session
)

func (r *Reader) malformed(format string, args ...any) error {
	return transcript.Malformed(r.Client, format, args...)
}

// Record parses one entry of session s (a line of a session file, a row's JSON), counting it in
// Stats.
func (r *Reader) Record(s *Session, line []byte) ([]event.Event, error) {
	r.Stats.Lines++
	evs, err := r.record(s, line)
	if err != nil {
		r.Stats.Malformed++
		return nil, err
	}
	r.Stats.Events += int64(len(evs))
	return evs, nil
}

// entry is the top level of a record: any entry type, header included.
type entry struct {
	Type      string
	HasType   bool
	Timestamp []byte
	Msg       *message // a message entry's message (when it is an object), walked

	// header
	ID, Cwd, ParentSession, BranchedFrom string
	Version                              []byte
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
		case "version":
			return raw(d, at, &e.Version)
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

func (r *Reader) record(s *Session, line []byte) ([]event.Event, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !utf8.Valid(line) {
		return nil, r.malformed("record is not UTF-8")
	}
	if line[0] != '{' {
		return nil, r.malformed("record is not a JSON object (a line rewritten or cut short?)")
	}
	var e entry
	if err := e.decode(line); err != nil {
		return nil, r.malformed("%v (a line half-written?)", err)
	}
	if !e.HasType {
		r.Stats.CountUnknown("(no type)")
		return nil, nil
	}
	t, hasTime := s.entryTime(e.Timestamp)
	switch e.Type {
	case "session":
		return r.header(s, &e, t, hasTime)
	case "message":
		return r.entryMessage(s, &e, line, t, hasTime)
	case "compaction":
		return r.compaction(s, &e, t, hasTime)
	case "session_info":
		return r.sessionInfo(s, &e, t, hasTime)
	case "model_change", "thinking_level_change", "branch_summary", "custom", "custom_message", "label":
		return nil, nil
	}
	r.Stats.CountUnknown(e.Type)
	return nil, nil
}

// entryTime parses an entry's timestamp (RFC 3339), falling back to the last time seen.
func (s *Session) entryTime(raw []byte) (time.Time, bool) {
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
func (r *Reader) needTime(hasTime bool, what string) error {
	if hasTime {
		return nil
	}
	return r.malformed("%s has no timestamp", what)
}

// ---------------------------------------------------------------------------------------------
// Envelope and session events

func (r *Reader) project(cwd string) string {
	if cwd == "" {
		return ""
	}
	if root, ok := r.roots[cwd]; ok {
		return root
	}
	if r.roots == nil || len(r.roots) > 64 {
		r.roots = map[string]string{}
	}
	root := project.Root(cwd)
	r.roots[cwd] = root
	return root
}

func (r *Reader) newEvent(s *Session, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: r.Client, SessionID: s.owner(),
		Project: r.project(s.Cwd), V: event.SchemaVersion}
}

// Action returns the event of an action of session s: the envelope, the transcript path, and
// for a subagent's session its AgentID and Sidechain.
func (r *Reader) Action(s *Session, id string, t time.Time, a *event.Action) event.Event {
	a.Transcript = r.Path
	a.AgentID = s.agentID()
	a.Sidechain = s.Root != ""
	ev := r.newEvent(s, event.KindAction, id, t)
	ev.Action = a
	return ev
}

// header reads the session line: the session's id when it has none yet, its cwd and parent.
func (r *Reader) header(s *Session, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if s.Header {
		r.Stats.CountUnknown("session (again)")
		return nil, nil
	}
	if s.ID == "" {
		s.ID = e.ID
	}
	if s.ID == "" {
		return nil, r.malformed("session header has no id")
	}
	if err := r.needTime(hasTime, "session header"); err != nil {
		return nil, err
	}
	s.Header = true
	s.Version = 1
	if v, ok := jsonscan.Int(e.Version); ok && v > 0 && v < 1000 {
		s.Version = int(v)
	}
	if e.Cwd != "" {
		s.Cwd = e.Cwd
	}
	if s.Root != "" {
		return nil, nil // a subagent's session belongs to its root session
	}
	parent := ""
	if r.ParentID != nil {
		parent = r.ParentID(e.ParentSession, e.BranchedFrom)
	}
	if parent == "" {
		parent = s.Parent
	}
	if strings.EqualFold(parent, s.ID) {
		parent = ""
	}
	ev := r.newEvent(s, event.KindSession, event.ID(r.Client, string(event.KindSession), s.ID, "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: e.Cwd, TranscriptPath: r.Path,
		ParentSessionID: parent, StartedAt: t}
	return []event.Event{ev}, nil
}

// sessionInfo reads a session_info entry: the session's name, which the user gave (/name, a rename
// in the session selector, an extension's setSessionName). An empty name clears it in pi; a title
// cannot be taken back here, so it yields nothing.
func (r *Reader) sessionInfo(s *Session, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	title, ok := event.CleanTitle(e.Name)
	if !ok || s.Root != "" {
		return nil, nil
	}
	if err := r.needTime(hasTime, "session_info"); err != nil {
		return nil, err
	}
	// Keyed by what a copy (/fork, /clone) keeps: the copy's session gets the same name.
	ev := r.newEvent(s, event.KindSession, event.ID(r.Client, string(event.KindSession), s.ID, "title",
		jsonscan.Str(e.Timestamp), title), t)
	ev.Session = &event.Session{Title: title, TitleByUser: true, TranscriptPath: r.Path}
	return []event.Event{ev}, nil
}

// modelEvent reports the model of an assistant message when it is not the previous message's.
// A model_change entry only says what the next request will use, and may be switched away from
// before any: the messages say what was used.
func (r *Reader) modelEvent(s *Session, model, key string, t time.Time) []event.Event {
	model = strings.TrimSpace(model)
	if model == "" || model == s.Model {
		return nil
	}
	s.Model = model
	if s.Root != "" {
		return nil // the root session's model is its own
	}
	ev := r.newEvent(s, event.KindSession, event.ID(r.Client, string(event.KindSession), s.ID, "model", model, key), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: model, Cwd: s.Cwd, TranscriptPath: r.Path}
	return []event.Event{ev}
}

// compaction is a context compaction: a context_compacted action and the session's next epoch.
func (r *Reader) compaction(s *Session, e *entry, t time.Time, hasTime bool) ([]event.Event, error) {
	if err := r.needTime(hasTime, "compaction"); err != nil {
		return nil, err
	}
	summary, size, _ := jsonscan.StringPrefix(e.Summary, maxText)
	before := num(e.TokensBefore)
	key := jsonscan.Str(e.Timestamp) + "|" + strconv.FormatInt(before, 10) + "|" +
		strconv.FormatInt(size, 10) + "|" + shortHash(summary)
	if slices.Contains(s.Comps, key) {
		return nil, nil // read again after the file or rows were rewritten: counted already
	}
	s.Comps = append(s.Comps, key)
	if n := len(s.Comps); n > maxComps {
		s.Comps = append(s.Comps[:0:0], s.Comps[n-maxComps:]...)
	}
	a := &event.Action{Type: event.ActionContextCompacted}
	if before > 0 {
		a.Target = "tokens before: " + strconv.FormatInt(before, 10)
	}
	evs := []event.Event{r.Action(s, event.ID(r.Client, string(event.KindAction), "compaction", key), t, a)}
	if size > maxText {
		summary, _, _ = jsonscan.StringPrefix(e.Summary, maxMessage+1024)
	}
	if strings.TrimSpace(summary) != "" {
		evs = append(evs, r.Message(s, event.ID(r.Client, string(event.KindMessage), "summary", key), t, 0,
			&event.Message{Role: event.RoleSummary, Text: clipMessage(summary)}))
	}
	if s.Root == "" {
		s.Epoch++
		ses := r.newEvent(s, event.KindSession, event.ID(r.Client, string(event.KindSession), s.ID, "epoch", key), t)
		ses.Session = &event.Session{State: event.SessionActive, Epoch: s.Epoch, TranscriptPath: r.Path}
		evs = append(evs, ses)
	}
	return evs, nil
}

// ---------------------------------------------------------------------------------------------
// Paths and small helpers

// RelPath makes a file path relative to the project when it lies inside it; a relative path is
// relative to the session's cwd. pi drops a leading "@" from paths.
func (r *Reader) RelPath(s *Session, file string) string {
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
	if root := r.project(s.Cwd); root != "" {
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
