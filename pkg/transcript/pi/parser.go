package pi

import (
	"encoding/json"
	"errors"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
)

// Component is the producing component these events name in their source field.
const Component = "observer-watch"

// Parser turns the lines of one session file into events. It is not safe for concurrent use.
type Parser struct {
	r  Reader
	st state
}

var _ transcript.Parser = (*Parser)(nil)

// state is everything a parser needs to resume after the last line it was given. It is JSON.
type state struct {
	V int `json:"v"`
	Session
	// SID is the session id under the key older states kept it: read, never written.
	SID string `json:"sid,omitempty"`
}

func (a *Adapter) newParser(src transcript.Source, st []byte) (*Parser, error) {
	p := &Parser{r: Reader{Client: Client, Path: src.Path, Prices: pricing.Source(a.Prices, a.CurrentPrices),
		Tools: piTools, ParentID: parentID}}
	if len(st) > 0 {
		if err := json.Unmarshal(st, &p.st); err != nil {
			return nil, errors.New("pi: bad parser state for " + src.Path + ": " + err.Error())
		}
	}
	if p.st.ID == "" {
		p.st.ID, p.st.SID = p.st.SID, ""
	}
	if p.st.ID == "" {
		p.st.ID = src.SessionID
		if p.st.ID == "" {
			p.st.ID = SessionIDFromPath(src.Path)
		}
	}
	return p, nil
}

// parentID returns the uuid of the session file a header's parentSession (else, in a version 1
// file, branchedFrom) names.
func parentID(parentSession, branchedFrom string) string {
	if parentSession == "" {
		parentSession = branchedFrom
	}
	return SessionIDFromPath(parentSession)
}

// State returns the parser's resume state.
func (p *Parser) State() []byte {
	p.st.V = 1
	return transcript.MarshalState(&p.st)
}

// Stats returns what the parser counted.
func (p *Parser) Stats() transcript.Stats { return p.r.Stats.Clone() }

// Record parses one complete line.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.r.Place = off
	return p.r.Record(&p.st.Session, line)
}
