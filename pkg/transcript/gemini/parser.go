package gemini

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	maxTarget  = 500      // runes
	maxError   = 2048     // bytes
	maxOutput  = 8192     // bytes
	maxPending = 128      // Qwen Code calls waiting for a result
	maxMessage = 64 << 10 // bytes of a message's text
	maxSeen    = 128      // fingerprints of the last events emitted
	docTail    = 4        // last messages of a document read again at every change
)

// Parser turns one recording into events. It is not safe for concurrent use.
type Parser struct {
	a      *Adapter
	src    transcript.Source
	client string
	prices func() *pricing.Table

	st    state
	stats transcript.Stats

	seen      map[string]bool // st.Seen as a set
	triedDisk bool            // the layout and the file's head were searched for the project root
	tested    map[string]bool // directories whose hash was compared with the projectHash

	recOff int64 // the record being read: its offset and length, for a pending title
	recLen int

	seq int64 // the Seq of the message being read's first block: its index in the conversation × 64
}

var _ transcript.Parser = (*Parser)(nil)

// state is everything a parser needs to resume. It is JSON.
type state struct {
	V           int      `json:"v"`
	SessionID   string   `json:"sid,omitempty"`  // the file's own session (header, records)
	ProjectHash string   `json:"ph,omitempty"`   // Gemini CLI's sha256 of the project root
	Kind        string   `json:"kind,omitempty"` // header kind: main, subagent
	Root        string   `json:"root,omitempty"` // the directory the client ran in
	Sure        bool     `json:"sure,omitempty"` // Root comes from the layout or a verified hash
	Head        bool     `json:"head,omitempty"` // a .jsonl's head was searched for the root
	Project     string   `json:"project,omitempty"`
	Started     bool     `json:"started,omitempty"` // the session's started event was emitted
	Models      []string `json:"models,omitempty"`  // models reported in session events
	Epoch       int      `json:"epoch,omitempty"`
	LastTime    int64    `json:"t,omitempty"` // unix nanoseconds of the last timestamp seen
	// TitleH is the hash of the session's title last reported (TitleByUser: the user's), so that
	// one written again (Qwen Code re-appends it, a document is read again) is reported once;
	// TitlePending marks one read before any time, Title, reported at the first time the file gives.
	Title        transcript.Memo `json:"title,omitempty"`
	TitleH       string          `json:"title_h,omitempty"`
	TitleByUser  bool            `json:"title_user,omitempty"`
	TitlePending bool            `json:"title_pending,omitempty"`
	// TitleAt and TitleLen locate the line of a pending title in a .jsonl: another process, which
	// has not its text (Title is a memo), reads it again from there (see recallTitle).
	TitleAt  int64 `json:"title_at,omitempty"`
	TitleLen int   `json:"title_len,omitempty"`

	Doc     *docMark                    `json:"doc,omitempty"`
	Seen    []string                    `json:"seen,omitempty"` // fingerprints of the last events emitted, oldest first
	Pending transcript.Pending[pending] `json:"pending,omitempty"`

	// MsgN counts the messages of a .jsonl in the order they came (a $set's list sets it), and
	// MsgLast is the id of the last one, so that a message rewritten right after keeps its Seq.
	MsgN    int64  `json:"msg_n,omitempty"`
	MsgLast string `json:"msg_last,omitempty"`
}

// docMark is how much of a document was read: its first N messages, whose bytes hash to H.
type docMark struct {
	N int    `json:"n"`
	H string `json:"h"`
}

// pending is a Qwen Code tool call whose result may still come.
type pending struct {
	ID     string           `json:"id"`
	Type   event.ActionType `json:"type"`
	Tool   string           `json:"tool,omitempty"`
	Target transcript.Memo  `json:"target,omitempty"`
	Msg    string           `json:"msg,omitempty"`
	Model  string           `json:"model,omitempty"`
	Time   int64            `json:"t"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c pending) PendingID() string { return c.ID }

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{a: a, src: src, client: a.Client(), prices: pricing.Source(a.Prices, a.CurrentPrices)}
	if p.src.Client == "" {
		p.src.Client = p.client
	}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("gemini: bad parser state for " + src.Path + ": " + err.Error())
		}
		p.recallTitle()
	}
	return p, nil
}

// maxTitleLine bounds the title line recallTitle reads again.
const maxTitleLine = 1 << 20

// recallTitle reads a pending title again from its line in a .jsonl, in a process that has not
// its text (the state keeps its hash, TitleH, and where its line is). The line is read by a
// parser of its own, with an empty state, so that this one's state is left as it was; the title
// is taken only if its hash is TitleH (else the file changed there, and none is reported).
func (p *Parser) recallTitle() {
	st := &p.st
	if !st.TitlePending || st.Title != "" || st.TitleH == "" || p.src.Document || st.TitleLen <= 0 || st.TitleLen > maxTitleLine || st.TitleAt < 0 {
		return
	}
	f, err := os.Open(p.src.Path)
	if err != nil {
		return
	}
	defer f.Close()
	raw := make([]byte, st.TitleLen)
	if _, err := io.ReadFull(io.NewSectionReader(f, st.TitleAt, int64(st.TitleLen)), raw); err != nil {
		return
	}
	q := &Parser{a: p.a, src: p.src, client: p.client, prices: p.prices, triedDisk: true}
	q.line(raw)
	if q.st.Title != "" && q.st.TitleH == st.TitleH {
		st.Title = q.st.Title
	}
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

func malformed(format string, args ...any) error {
	return transcript.Malformed("gemini", format, args...)
}

// Record parses one line of a .jsonl, or a whole document.
func (p *Parser) Record(off int64, raw []byte) ([]event.Event, error) {
	p.stats.Lines++
	p.recOff, p.recLen = off, len(raw)
	var evs []event.Event
	var err error
	if p.src.Document {
		evs, err = p.document(raw)
	} else {
		evs, err = p.line(raw)
	}
	if err != nil {
		p.stats.Malformed++
		return nil, err
	}
	if p.st.TitlePending && p.st.LastTime != 0 {
		p.st.TitlePending, p.st.TitleAt, p.st.TitleLen = false, 0, 0
		if p.st.Title != "" { // "": held by another process and not found again (recallTitle)
			evs = append(evs, p.titleEvent(time.Unix(0, p.st.LastTime).UTC()))
		}
	}
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// ---------------------------------------------------------------------------------------------
// Records

// record is every top-level field this package reads, of whichever record a line holds: a Gemini
// CLI header, message, $set or $rewindTo, or a Qwen Code record. Content is read on the way.
type record struct {
	has uint16 // has* bits: the members present

	// Gemini CLI message
	ID        string
	Type      string
	Timestamp []byte
	Content   parts // content (Qwen Code: message.parts)
	Display   parts // displayContent
	Tokens    []byte
	Calls     []call // toolCalls
	Model     string

	// Gemini CLI header (and document)
	SessionID   string
	ProjectHash string
	StartTime   []byte
	Kind        string
	Directories []byte
	Messages    [][]byte // messages, each raw
	Summary     []byte   // summary: the session's title, as Gemini CLI generates it
	Thoughts    []byte   // thoughts: a model message's [{subject, description, timestamp}]

	Set []byte // $set

	// Qwen Code
	UUID           string
	Subtype        string
	Cwd            string
	GitBranch      string
	UsageMetadata  []byte
	ToolCallResult []byte
	SystemPayload  []byte
}

// The members a record may have, for record.has.
const (
	hasID uint16 = 1 << iota
	hasType
	hasSet
	hasRewind
	hasUUID
	hasSessionID
	hasProjectHash
	hasStartTime
	hasMessages
)

// decode reads a record in one walk that checks the syntax of the whole value (see walk.go). A
// string field of the wrong type is reported after the walk: it makes a record this package reads
// malformed.
func (r *record) decode(d []byte) error {
	var bad string
	str := func(k []byte, at int, dst *string) (int, error) {
		v, end, err := value(d, at)
		if err != nil {
			return 0, err
		}
		s, ok := jsonscan.String(v)
		if !ok && !jsonscan.Null(v) && bad == "" {
			bad = string(k)
		}
		*dst = s
		return end, nil
	}
	raw := func(at int, dst *[]byte) (int, error) {
		v, end, err := value(d, at)
		*dst = v
		return end, err
	}
	end, err := jsonscan.WalkObject(d, 0, func(k []byte, at int) (int, error) {
		switch string(k[1 : len(k)-1]) {
		case "id":
			r.has |= hasID
			return str(k, at, &r.ID)
		case "type":
			r.has |= hasType
			return str(k, at, &r.Type)
		case "timestamp":
			return raw(at, &r.Timestamp)
		case "content":
			return walkParts(d, at, &r.Content)
		case "displayContent":
			return walkParts(d, at, &r.Display)
		case "tokens":
			return raw(at, &r.Tokens)
		case "toolCalls":
			return only(d, at, '[', func() (int, error) {
				return jsonscan.WalkArray(d, at, func(i int) (int, error) {
					var c call
					end, err := walkCall(d, i, &c)
					if err == nil && c.Name != "" {
						r.Calls = append(r.Calls, c)
					}
					return end, err
				})
			})
		case "model":
			return str(k, at, &r.Model)
		case "thoughts":
			return raw(at, &r.Thoughts)
		case "sessionId":
			r.has |= hasSessionID
			return str(k, at, &r.SessionID)
		case "projectHash":
			r.has |= hasProjectHash
			return str(k, at, &r.ProjectHash)
		case "startTime":
			r.has |= hasStartTime
			return raw(at, &r.StartTime)
		case "kind":
			return str(k, at, &r.Kind)
		case "directories":
			return raw(at, &r.Directories)
		case "summary":
			return raw(at, &r.Summary)
		case "messages":
			return only(d, at, '[', func() (int, error) {
				r.has |= hasMessages
				return jsonscan.WalkArray(d, at, func(i int) (int, error) {
					v, end, err := value(d, i)
					r.Messages = append(r.Messages, v)
					return end, err
				})
			})
		case "$set":
			r.has |= hasSet
			return raw(at, &r.Set)
		case "$rewindTo":
			r.has |= hasRewind
		case "uuid":
			r.has |= hasUUID
			return str(k, at, &r.UUID)
		case "subtype":
			return str(k, at, &r.Subtype)
		case "cwd":
			return str(k, at, &r.Cwd)
		case "gitBranch":
			return str(k, at, &r.GitBranch)
		case "message":
			return only(d, at, '{', func() (int, error) {
				return jsonscan.WalkObject(d, at, func(k []byte, i int) (int, error) {
					if keyIs(k, "parts") {
						return walkParts(d, i, &r.Content)
					}
					return -1, nil
				})
			})
		case "usageMetadata":
			return raw(at, &r.UsageMetadata)
		case "toolCallResult":
			return raw(at, &r.ToolCallResult)
		case "systemPayload":
			return raw(at, &r.SystemPayload)
		}
		return -1, nil
	})
	if err == nil && !jsonscan.AtEnd(d, end) {
		err = jsonscan.ErrSyntax
	}
	if err != nil {
		return err
	}
	if bad != "" {
		return fmt.Errorf("field %s has the wrong type", bad)
	}
	return nil
}

// line reads one line of a .jsonl.
func (p *Parser) line(raw []byte) ([]event.Event, error) {
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
	var r record
	if err := r.decode(raw); err != nil {
		return nil, malformed("%v", err)
	}
	switch {
	case r.has&hasRewind != 0:
		return nil, nil // the messages it drops were spent: their events stay
	case r.has&hasSet != 0:
		return p.set(&r)
	case r.has&hasUUID != 0:
		p.nextSeq(r.UUID)
		return p.qwen(&r, raw), nil // a record per event, never rewritten: nothing to compare
	case r.has&hasID != 0 && r.has&hasType != 0:
		p.nextSeq(r.ID)
		p.findRoot(nil)
		evs, err := p.message(raw, &r)
		return p.keep(evs), err
	case r.has&hasSessionID != 0 && r.has&(hasProjectHash|hasStartTime) != 0:
		p.header(&r)
		p.findRoot(nil)
		evs := p.keep(p.started(&r))
		return append(evs, p.summary(r.Summary)...), nil
	}
	p.stats.CountUnknown("(no type)")
	return nil, nil
}

// set applies a $set patch: its session id, directories and messages (the whole list, as
// updateMessagesFromHistory writes it after the history changed in memory).
func (p *Parser) set(r *record) ([]event.Event, error) {
	var s record
	if len(r.Set) == 0 || r.Set[0] != '{' {
		return nil, malformed("$set is not an object")
	}
	if err := s.decode(r.Set); err != nil {
		return nil, malformed("$set: %v", err)
	}
	if s.SessionID != "" && p.st.SessionID == "" {
		p.st.SessionID = s.SessionID
	}
	if len(s.Directories) > 0 {
		p.guessRoot(firstDirectory(s.Directories))
	}
	if s.has&hasMessages == 0 {
		return p.summary(s.Summary), nil
	}
	p.findRoot(nil)
	var evs []event.Event
	for i, m := range s.Messages {
		p.seq = int64(i) * 64
		evs = append(evs, p.listed(m)...)
	}
	p.st.MsgN, p.st.MsgLast = int64(len(s.Messages)), ""
	return append(p.keep(evs), p.summary(s.Summary)...), nil
}

// header reads a Gemini CLI header (or a document's top level).
func (p *Parser) header(r *record) {
	if r.SessionID != "" {
		p.st.SessionID = r.SessionID
	}
	if r.ProjectHash != "" {
		p.st.ProjectHash = strings.ToLower(r.ProjectHash)
	}
	if r.Kind != "" {
		p.st.Kind = r.Kind
	}
	if len(r.Directories) > 0 {
		p.guessRoot(firstDirectory(r.Directories))
	}
}

// isSubagent reports whether the file is a subagent's: its events belong to the parent session,
// whose file reports the session.
func (p *Parser) isSubagent() bool { return p.src.AgentID != "" || p.st.Kind == "subagent" }

// started returns the session's started event, once.
func (p *Parser) started(r *record) []event.Event {
	if p.st.Started || p.isSubagent() {
		return nil
	}
	t, ok := p.time(r.StartTime)
	if !ok {
		return nil // a header without a start time: the first message starts the session
	}
	p.st.Started = true
	ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "started"), t)
	ev.Session = &event.Session{State: event.SessionStarted, Cwd: p.st.Root, TranscriptPath: p.src.Path, StartedAt: t}
	return []event.Event{ev}
}

// summary reads Gemini CLI's session summary (a header's, a $set's, a document's): the title it
// generates for the session, at the last time seen.
func (p *Parser) summary(raw []byte) []event.Event {
	s, ok := jsonscan.String(raw)
	if !ok || s == "" {
		return nil
	}
	return p.title(s, false, time.Time{})
}

// title reports the session's title when it differs from the one last reported: at t, else at the
// last time seen, else (no time yet) at the first time the file gives. A subagent's file names no
// title of the session (Gemini CLI writes a subagent's result there as its summary).
func (p *Parser) title(raw string, byUser bool, t time.Time) []event.Event {
	if p.isSubagent() {
		return nil
	}
	title, ok := event.CleanTitle(raw)
	if !ok || p.reported(title) && byUser == p.st.TitleByUser {
		return nil
	}
	p.st.Title, p.st.TitleH, p.st.TitleByUser = transcript.Memo(title), transcript.TextHash(title), byUser
	if t.IsZero() && p.st.LastTime != 0 {
		t = time.Unix(0, p.st.LastTime).UTC()
	}
	p.st.TitleAt, p.st.TitleLen = 0, 0
	if t.IsZero() {
		p.st.TitlePending = true
		if !p.src.Document {
			p.st.TitleAt, p.st.TitleLen = p.recOff, p.recLen
		}
		return nil
	}
	p.st.TitlePending = false
	return []event.Event{p.titleEvent(t)}
}

// reported tells whether title is the one last reported (a state written before TitleH has the
// title itself).
func (p *Parser) reported(title string) bool {
	if p.st.TitleH != "" {
		return p.st.TitleH == transcript.TextHash(title)
	}
	return p.st.Title != "" && string(p.st.Title) == title
}

// titleEvent is the session event carrying the title in the state.
func (p *Parser) titleEvent(t time.Time) event.Event {
	source := "client"
	if p.st.TitleByUser {
		source = "user"
	}
	ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "title", source,
		strconv.FormatInt(t.UnixNano(), 10), string(p.st.Title)), t)
	ev.Session = &event.Session{Title: string(p.st.Title), TitleByUser: p.st.TitleByUser, TranscriptPath: p.src.Path}
	return ev
}

// maxModels bounds the models a parser remembers having reported.
const maxModels = 16

// modelEvent reports a model the file had not reported yet: once per model, so that a document
// read again from its start does not report its models again.
func (p *Parser) modelEvent(model string, t time.Time) []event.Event {
	if model == "" || p.isSubagent() || slices.Contains(p.st.Models, model) {
		return nil
	}
	p.st.Models = append(p.st.Models, model)
	if n := len(p.st.Models); n > maxModels {
		p.st.Models = append(p.st.Models[:0:0], p.st.Models[n-maxModels:]...)
	}
	ev := p.newEvent(event.KindSession, event.ID(p.client, string(event.KindSession), p.idSession(), "model", model), t)
	ev.Session = &event.Session{State: event.SessionActive, Model: model, Cwd: p.st.Root, TranscriptPath: p.src.Path}
	return []event.Event{ev}
}

// ---------------------------------------------------------------------------------------------
// Documents

// document reads a whole session-*.json. A document that does not parse leaves the state as it
// was and emits nothing.
func (p *Parser) document(raw []byte) (evs []event.Event, err error) {
	saved := p.State()
	defer func() {
		if err != nil {
			p.st = state{}
			_ = json.Unmarshal(saved, &p.st) // what State wrote always loads
			p.seen = nil
		}
	}()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, malformed("document is empty (being written?)")
	}
	if !utf8.Valid(raw) {
		return nil, malformed("document is not UTF-8")
	}
	if raw[0] != '{' {
		return nil, malformed("document is not a JSON object")
	}
	var r record
	if err := r.decode(raw); err != nil {
		return nil, malformed("document does not parse (written while read, or damaged): %v", err)
	}
	msgs := r.Messages
	p.header(&r)
	p.findRoot(raw)
	evs = p.started(&r)
	start := 0
	if d := p.st.Doc; d != nil && d.N <= len(msgs) && d.H == prefixHash(msgs[:d.N]) {
		start = d.N
	}
	for i, m := range msgs[start:] {
		p.seq = int64(start+i) * 64
		evs = append(evs, p.listed(m)...)
	}
	n := max(len(msgs)-docTail, 0)
	p.st.Doc = &docMark{N: n, H: prefixHash(msgs[:n])}
	return append(p.keep(evs), p.summary(r.Summary)...), nil
}

// listed reads one message of a list (a document's, a $set's): one that does not decode is
// counted and passed over.
func (p *Parser) listed(m []byte) []event.Event {
	var r record
	if m[0] != '{' || r.decode(m) != nil || r.has&hasID == 0 {
		p.stats.CountUnknown("(malformed message)")
		return nil
	}
	evs, err := p.message(m, &r)
	if err != nil {
		p.stats.CountUnknown("(malformed message)")
	}
	return evs
}

// prefixHash hashes a run of messages' bytes.
func prefixHash(msgs [][]byte) string {
	h := sha256.New()
	for _, m := range msgs {
		h.Write(m)
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// ---------------------------------------------------------------------------------------------
// Emitting only what changed

// keep drops the events the parser emitted before exactly as they are, and remembers the others.
func (p *Parser) keep(evs []event.Event) []event.Event {
	if len(evs) == 0 {
		return evs
	}
	if p.seen == nil {
		p.seen = make(map[string]bool, len(p.st.Seen))
		for _, f := range p.st.Seen {
			p.seen[f] = true
		}
	}
	out := evs[:0]
	for i := range evs {
		f := fingerprint(&evs[i])
		if f == "" || !p.seen[f] {
			out = append(out, evs[i])
		}
		if f == "" || p.seen[f] {
			continue
		}
		p.seen[f] = true
		p.st.Seen = append(p.st.Seen, f)
		if n := len(p.st.Seen); n > maxSeen {
			for _, old := range p.st.Seen[:n-maxSeen] {
				delete(p.seen, old)
			}
			p.st.Seen = append(p.st.Seen[:0:0], p.st.Seen[n-maxSeen:]...)
		}
	}
	return out
}

// fingerprint hashes an event whole: the same fingerprint is the same id with the same content.
// An action's output, the bulk of it, is hashed as it is rather than JSON-encoded. A message's Seq
// is left out: the same message read at another place of a .jsonl (a $set's list after a rewind)
// is the same message, which the store keeps once.
func fingerprint(e *event.Event) string {
	h := sha256.New()
	if m := e.Message; m != nil && m.Seq != 0 {
		cp, msg := *e, *m
		msg.Seq = 0
		cp.Message = &msg
		e = &cp
	}
	if a := e.Action; a != nil && a.Output != "" {
		cp, act := *e, *a
		act.Output = ""
		cp.Action = &act
		e = &cp
		h.Write([]byte(a.Output))
		h.Write([]byte{0})
	}
	b, err := json.Marshal(e)
	if err != nil {
		return ""
	}
	h.Write(b)
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:9])
}

// ---------------------------------------------------------------------------------------------
// Envelope

// idSession is the session event ids are keyed by: the file's own (a subagent's own id).
func (p *Parser) idSession() string {
	switch {
	case p.st.SessionID != "":
		return p.st.SessionID
	case p.src.AgentID != "":
		return p.src.AgentID
	case p.src.SessionID != "":
		return p.src.SessionID
	}
	return p.src.Path
}

// sessionID is the session events belong to: the source's (a subagent file's parent), else the
// file's own.
func (p *Parser) sessionID() string {
	if p.src.SessionID != "" {
		return p.src.SessionID
	}
	return p.st.SessionID
}

func (p *Parser) newEvent(kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: p.client, SessionID: p.sessionID(),
		Project: p.st.Project, V: event.SchemaVersion}
}

func (p *Parser) actionID(key string) string {
	return event.ID(p.client, string(event.KindAction), p.idSession(), key)
}

// time parses a record's timestamp (an RFC 3339 string, or Qwen Code's unix milliseconds),
// falling back to the last one seen.
func (p *Parser) time(raw []byte) (time.Time, bool) {
	if s := jsonscan.Str(raw); s != "" {
		if t, ok := transcript.ParseTime(s); ok {
			p.st.LastTime = t.UnixNano()
			return t, true
		}
	} else if ms, ok := jsonscan.Int(raw); ok && ms > 31536000000 && ms < 9e15 {
		t := time.UnixMilli(ms).UTC()
		p.st.LastTime = t.UnixNano()
		return t, true
	}
	if p.st.LastTime != 0 {
		return time.Unix(0, p.st.LastTime).UTC(), true
	}
	return time.Time{}, false
}

// setCwd records the directory a Qwen Code record was written in.
func (p *Parser) setCwd(cwd string) {
	if cwd == "" || cwd == p.st.Root && p.st.Project != "" {
		return
	}
	if p.st.Project != "" && within(p.st.Project, filepath.Clean(cwd)) {
		p.st.Root = cwd
		return
	}
	p.st.Root, p.st.Sure = cwd, true
	p.st.Project = project.Root(cwd)
}

// within reports whether path is root or lies under it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) &&
		filepath.IsAbs(root) == filepath.IsAbs(path)
}

// relPath makes a file path relative to the project when it lies inside it; a relative path is
// relative to the directory the client ran in.
func (p *Parser) relPath(file string) string {
	return transcript.RelPath(file, p.st.Root, p.st.Project)
}

// ---------------------------------------------------------------------------------------------
// Small helpers

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func clipTarget(s string) string { return transcript.ClipTarget(s, maxTarget) }

func clipError(s string) string { return transcript.Clip(strings.TrimSpace(s), maxError) }

func clipOutput(s string) string { return transcript.Clip(s, maxOutput) }

func num(v []byte) int64 { return transcript.Count(v) }
