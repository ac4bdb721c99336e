package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// ErrNoSession is LatestSession's error on a store without sessions.
var ErrNoSession = errors.New("no session stored yet")

// LatestSession is the session seen last.
func LatestSession(ctx context.Context, db *sql.DB) (store.SessionRef, error) {
	var ref store.SessionRef
	err := db.QueryRowContext(ctx, `SELECT client, session_id, title FROM sessions ORDER BY last_seen DESC LIMIT 1`).
		Scan(&ref.Client, &ref.ID, &ref.Title)
	if errors.Is(err, sql.ErrNoRows) {
		return ref, ErrNoSession
	}
	return ref, err
}

// SessionPlace is where a session stands: its project, state and epoch (compactions so far).
type SessionPlace struct {
	Project, State string
	Epoch          int
}

// SessionPlaceOf reads a session's project, state and epoch.
func SessionPlaceOf(ctx context.Context, db *sql.DB, client, id string) (SessionPlace, error) {
	var p SessionPlace
	err := db.QueryRowContext(ctx, `SELECT project, state, epoch FROM sessions WHERE client = ? AND session_id = ?`, client, id).
		Scan(&p.Project, &p.State, &p.Epoch)
	return p, err
}

// ActionBrief is an action's type, target and time.
type ActionBrief struct {
	Type, Target string
	TS           int64 // ms
}

// ActionByEvent reads the action stored under an event id (the zero ActionBrief when none is).
func ActionByEvent(ctx context.Context, db *sql.DB, eventID string) (ActionBrief, error) {
	var a ActionBrief
	err := db.QueryRowContext(ctx, `SELECT type, target, ts FROM actions WHERE event_id = ?`, eventID).Scan(&a.Type, &a.Target, &a.TS)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil
	}
	return a, err
}

// CaptureSession is a recent session and the capture paths that saw it.
type CaptureSession struct {
	Client    string   `json:"client"`
	SessionID string   `json:"session_id"`
	LastSeen  int64    `json:"last_seen"` // ms
	Paths     []string `json:"paths"`     // store.Paths order: proxy, records, hooks, otlp
}

// RecentCapture lists the sessions seen since since, newest first, at most max, with the capture
// paths that saw each (store.PathBitsSQL).
func RecentCapture(ctx context.Context, db *sql.DB, since time.Time, max int) ([]CaptureSession, error) {
	rows, err := db.QueryContext(ctx, `SELECT client, session_id, last_seen, `+store.PathBitsSQL("s")+`
		FROM sessions s WHERE last_seen >= ? ORDER BY last_seen DESC, session_id LIMIT ?`, since.UnixMilli(), max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CaptureSession
	for rows.Next() {
		var s CaptureSession
		var bits int64
		if err := rows.Scan(&s.Client, &s.SessionID, &s.LastSeen, &bits); err != nil {
			return nil, err
		}
		s.Paths = store.PathNames(bits)
		out = append(out, s)
	}
	return out, rows.Err()
}

// eventTables is the table each kind of event is stored in, under its event_id.
var eventTables = map[event.Kind]string{
	event.KindAction: "actions", event.KindTokenUsage: "token_usage", event.KindAPITurn: "api_turns",
	event.KindCompression: "compression_events", event.KindSession: "session_events",
	event.KindHook: "hook_events", event.KindMCPCall: "mcp_calls", event.KindMessage: "messages",
}

// EventChecker answers whether the store holds an event, by its id, with one prepared statement
// per kind.
type EventChecker struct {
	db    *sql.DB
	stmts map[event.Kind]*sql.Stmt
	// absent holds the kinds whose table the store does not have yet (a store the running
	// version's writer has not migrated: nothing of that kind is stored); checked, the kinds
	// whose table was looked for.
	absent, checked map[event.Kind]bool
}

// NewEventChecker returns a checker reading db; Close it when done.
func NewEventChecker(db *sql.DB) *EventChecker {
	return &EventChecker{db: db, stmts: map[event.Kind]*sql.Stmt{}, absent: map[event.Kind]bool{}, checked: map[event.Kind]bool{}}
}

// Stored reports whether the store holds an event with ev's id. A kind whose table the store
// lacks (written by an earlier version, not migrated yet) has nothing stored.
func (c *EventChecker) Stored(ctx context.Context, ev *event.Event) (bool, error) {
	if c.absent[ev.Kind] {
		return false, nil
	}
	if table, ok := map[event.Kind]string{event.KindLimit: "limit_snapshots", event.KindMessage: "messages"}[ev.Kind]; ok && !c.checked[ev.Kind] {
		c.checked[ev.Kind] = true
		if has, err := hasTable(ctx, c.db, table); err != nil {
			return false, err
		} else if !has {
			c.absent[ev.Kind] = true
			return false, nil
		}
	}
	if ev.Kind == event.KindLimit && ev.Limit != nil {
		// A limit snapshot is kept once per distinct figures, under the id of the first event
		// that brought them: an event is stored when its figures are.
		l := ev.Limit
		var resets int64
		if !l.ResetsAt.IsZero() {
			resets = l.ResetsAt.UnixMilli()
		}
		var one int
		err := c.db.QueryRowContext(ctx, `SELECT 1 FROM limit_snapshots WHERE provider = ? AND window = ? AND member = ?
			AND resets_at = ? AND used_pct = ? AND status = ?`, l.Provider, l.Window, ev.Member, resets, l.UsedPercent, l.Status).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	st := c.stmts[ev.Kind]
	if st == nil {
		table, ok := eventTables[ev.Kind]
		if !ok {
			return false, fmt.Errorf("event kind %q has no table", ev.Kind)
		}
		var err error
		if st, err = c.db.PrepareContext(ctx, "SELECT 1 FROM "+table+" WHERE event_id = ?"); err != nil {
			return false, err
		}
		c.stmts[ev.Kind] = st
	}
	var one int
	err := st.QueryRowContext(ctx, ev.ID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Close releases the statements.
func (c *EventChecker) Close() {
	for _, s := range c.stmts {
		s.Close()
	}
}

// Projects lists the distinct projects of the stored sessions, sorted, at most max.
func Projects(ctx context.Context, db *sql.DB, max int) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT project FROM sessions WHERE project != '' ORDER BY project LIMIT ?`, max)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}
