package openclaw

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/pi"
)

// Component is the producing component these events name in their source field.
const Component = pi.Component

// maxSessions bounds the sessions a database parser keeps state for.
const maxSessions = 256

// Parser reads one source: a legacy session file, line by line (Record), or an agent database
// (Poll), its records through a pi.Reader. It is not safe for concurrent use.
type Parser struct {
	src transcript.Source
	r   *pi.Reader
	st  state
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
	pi.Session

	// The last seq read, -1 before any: in a database a row's, in a legacy file the line's index
	// (the seq `openclaw doctor` gives the line when it imports the file).
	Seq int64 `json:"seq"`
	// Database only.
	Gen string `json:"gen,omitempty"` // the transcript generation it was read in
	Act int64  `json:"act,omitempty"` // its window's activity time when last read
}

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{src: src}
	p.r = &pi.Reader{Client: Client, Path: src.Path, Prices: pricing.Source(a.Prices, a.CurrentPrices),
		Tools: tools, ParentID: parentID, Custom: p.custom}
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
		p.st.File = &sess{Session: pi.Session{ID: id}, Seq: -1}
	}
	return p, nil
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.r.Stats.Clone() }

func malformed(format string, args ...any) error {
	return transcript.Malformed(Client, format, args...)
}

// Record parses one complete line of a legacy session file; a database is read by Poll.
func (p *Parser) Record(_ int64, line []byte) ([]event.Event, error) {
	if p.src.Database {
		p.r.Stats.Lines++
		p.r.Stats.Malformed++
		return nil, malformed("%s is a database, read by Poll", p.src.Path)
	}
	p.st.File.Seq++
	p.r.Place = p.st.File.Seq // a message's Seq is the one its row gets when the file is imported
	return p.r.Record(&p.st.File.Session, line)
}

// Poll reads an agent database (see db.go); a legacy session file is read by Record.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	if !p.src.Database {
		return nil, errors.New("openclaw: " + p.src.Path + " is a session file, read by Record")
	}
	return p.poll(ctx)
}

// parentID returns the session id a header's parentSession, else its branchedFrom, names.
func parentID(parentSession, branchedFrom string) string {
	for _, ref := range []string{parentSession, branchedFrom} {
		if id := sessionRef(ref); id != "" {
			return id
		}
	}
	return ""
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
