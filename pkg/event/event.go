// Package event is the one wire schema every observer binary shares.
//
// An Event is an envelope (id, kind, time, source component, client, session, project, host, user,
// schema version) plus exactly one typed payload, the one named by its Kind. Producers build events
// with New or by hand and publish them through package bus; the writer decodes them with Decode,
// which validates the envelope and the payload, and stores them.
//
// Identity: the id is deterministic wherever the source allows (ID hashes a transcript path and a
// record key, or a proxy request id), so replaying a source yields the same ids. The bus
// de-duplicates on the id and the writer inserts idempotently on it: delivery is at-least-once,
// storage effectively-once.
//
// Compatibility: V is the schema version. Fields are only ever added; a consumer ignores fields it
// does not know and rejects a V newer than it understands (the writer quarantines such events).
//
// This package imports nothing outside the standard library.
package event

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SchemaVersion is the version of the wire schema this package writes and the newest it reads.
const SchemaVersion = 1

// SubjectPrefix is the prefix of every bus subject that carries events.
const SubjectPrefix = "observer.v1"

// Kind names the payload an event carries.
type Kind string

// The event kinds. Each has exactly one payload field in Event.
const (
	KindAction      Kind = "action"
	KindTokenUsage  Kind = "token_usage"
	KindAPITurn     Kind = "api_turn"
	KindCompression Kind = "compression"
	KindSession     Kind = "session"
	KindHook        Kind = "hook"
	KindMCPCall     Kind = "mcp_call"
	KindLimit       Kind = "limit"
	KindMessage     Kind = "message"
)

// Kinds lists every known kind, in a stable order.
var Kinds = []Kind{KindAction, KindTokenUsage, KindAPITurn, KindCompression, KindSession, KindHook, KindMCPCall, KindLimit, KindMessage}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, known := range Kinds {
		if k == known {
			return true
		}
	}
	return false
}

// Event is the envelope every producer publishes. Exactly one payload pointer is set: the one
// named by Kind.
type Event struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Time      time.Time `json:"time"`
	Source    string    `json:"source"`               // component that produced it: observer-proxy, observer-watch, observerctl, ...
	Client    string    `json:"client,omitempty"`     // AI client: claude-code, codex, gemini-cli, ...
	SessionID string    `json:"session_id,omitempty"` // the client's own session id
	Project   string    `json:"project,omitempty"`    // project root path
	Host      string    `json:"host,omitempty"`
	User      string    `json:"user,omitempty"`
	// Member is the team member whose machine produced the event. Only a team hub's writer sets
	// it, from the subject the hub received the event under (package team); a member never
	// sends it, and a value in the event itself is not trusted.
	Member string `json:"member,omitempty"`
	V      int    `json:"v"`

	Action      *Action      `json:"action,omitempty"`
	TokenUsage  *TokenUsage  `json:"token_usage,omitempty"`
	APITurn     *APITurn     `json:"api_turn,omitempty"`
	Compression *Compression `json:"compression,omitempty"`
	Session     *Session     `json:"session,omitempty"`
	Hook        *Hook        `json:"hook,omitempty"`
	MCPCall     *MCPCall     `json:"mcp_call,omitempty"`
	Limit       *Limit       `json:"limit,omitempty"`
	Message     *Message     `json:"message,omitempty"`
}

// Errors returned by Validate and Decode. They wrap into a *DecodeError with detail.
var (
	ErrNoID          = errors.New("event has no id")
	ErrUnknownKind   = errors.New("unknown event kind")
	ErrPayload       = errors.New("payload does not match kind")
	ErrVersion       = errors.New("unsupported schema version")
	ErrNoTime        = errors.New("event has no time")
	ErrMalformedJSON = errors.New("malformed event JSON")
)

// ID derives a deterministic event id from the parts that identify a record at its source, such as
// a transcript path and a line's uuid, or a proxy request id. The same parts always give the same
// id; the parts are separated so ("ab","c") and ("a","bc") differ.
func ID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// RandomID returns a fresh random id, for events whose source has no stable key (a hook call).
func RandomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("event: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Payload returns the payload that Kind names, or nil when it is not set.
func (e *Event) Payload() any {
	switch e.Kind {
	case KindAction:
		return nilIfNil(e.Action)
	case KindTokenUsage:
		return nilIfNil(e.TokenUsage)
	case KindAPITurn:
		return nilIfNil(e.APITurn)
	case KindCompression:
		return nilIfNil(e.Compression)
	case KindSession:
		return nilIfNil(e.Session)
	case KindHook:
		return nilIfNil(e.Hook)
	case KindMCPCall:
		return nilIfNil(e.MCPCall)
	case KindLimit:
		return nilIfNil(e.Limit)
	case KindMessage:
		return nilIfNil(e.Message)
	}
	return nil
}

func nilIfNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

func (e *Event) payloadCount() int {
	n := 0
	for _, set := range []bool{e.Action != nil, e.TokenUsage != nil, e.APITurn != nil, e.Compression != nil,
		e.Session != nil, e.Hook != nil, e.MCPCall != nil, e.Limit != nil, e.Message != nil} {
		if set {
			n++
		}
	}
	return n
}

// Validate checks the envelope and that exactly the payload named by Kind is set.
func (e *Event) Validate() error {
	switch {
	case e.ID == "":
		return ErrNoID
	case !e.Kind.Valid():
		return fmt.Errorf("%w %q", ErrUnknownKind, e.Kind)
	case e.V < 1 || e.V > SchemaVersion:
		return fmt.Errorf("%w %d (this build reads 1..%d)", ErrVersion, e.V, SchemaVersion)
	case e.Time.IsZero():
		return ErrNoTime
	case e.Payload() == nil || e.payloadCount() != 1:
		return fmt.Errorf("%w: kind %q needs exactly its %q payload", ErrPayload, e.Kind, e.Kind)
	case e.Limit != nil:
		return e.Limit.Validate()
	case e.Message != nil:
		return e.Message.Validate()
	}
	return nil
}

// Subject returns the bus subject the event is published on: observer.v1.<kind>.<client>.
func (e *Event) Subject() string {
	return Subject(e.Kind, e.Client)
}

// Subject returns observer.v1.<kind>.<client>, with both tokens made safe for a subject.
// An empty client becomes "unknown".
func Subject(kind Kind, client string) string {
	return SubjectPrefix + "." + token(string(kind)) + "." + token(client)
}

// SubjectFilter returns the subject pattern matching events of kind from client; an empty kind or
// client matches all.
func SubjectFilter(kind Kind, client string) string {
	k, c := "*", "*"
	if kind != "" {
		k = token(string(kind))
	}
	if client != "" {
		c = token(client)
	}
	return SubjectPrefix + "." + k + "." + c
}

// token makes s a single subject token: no dots, wildcards or whitespace.
func token(s string) string {
	if s == "" {
		return "unknown"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '.' || r == '*' || r == '>' || r <= ' ' || r == 0x7f:
			return '_'
		}
		return r
	}, s)
}

// New returns an event of the given kind stamped with the current schema version and time (UTC).
// The caller sets the id and the payload.
func New(kind Kind, source string) Event {
	return Event{Kind: kind, Source: source, Time: time.Now().UTC(), V: SchemaVersion}
}

// Marshal encodes an event after validating it.
func Marshal(e *Event) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(e)
}

// Decode parses and validates one event. Errors wrap ErrMalformedJSON or one of the Validate errors.
func Decode(data []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrMalformedJSON, err)
	}
	if err := e.Validate(); err != nil {
		return e, err
	}
	return e, nil
}
