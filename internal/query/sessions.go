package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/store"
)

// Session is one row of the store's sessions table, as every surface shows it. Surfaces that add
// figures to it (the dashboard's actions, failures, tokens, dollars) embed it.
type Session struct {
	Client          string `json:"client"`
	SessionID       string `json:"session_id"`
	Title           string `json:"title"` // the client's title, else the first prompt ("" when neither)
	Project         string `json:"project"`
	FirstSeen       int64  `json:"first_seen"` // ms
	LastSeen        int64  `json:"last_seen"`  // ms
	State           string `json:"state"`
	Model           string `json:"model,omitempty"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	Epoch           int64  `json:"epoch"`
	Events          int64  `json:"events"`
	TranscriptPath  string `json:"transcript_path,omitempty"`
}

// sessionCols are the columns scanSession reads, in its order.
const sessionCols = "client, session_id, project, first_seen, last_seen, state, model, parent_session_id, epoch, events, transcript_path, title"

// scanSession reads a row of sessionCols.
func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	err := sc.Scan(&s.Client, &s.SessionID, &s.Project, &s.FirstSeen, &s.LastSeen, &s.State, &s.Model, &s.ParentSessionID,
		&s.Epoch, &s.Events, &s.TranscriptPath, &s.Title)
	return s, err
}

// filterClause holds f's conditions on a table with the envelope columns (client, session_id,
// project, member), its time column named tsCol: envelopeConds' and the session's. The member
// condition needs the table's member column: sessions, actions, token_usage, api_turns and
// compression_events have one, the rollups do not.
func filterClause(f Filter, tsCol string) *sqlConds {
	c := envelopeConds(f, tsCol)
	if f.SessionID != "" {
		c.add("session_id = :session", sql.Named("session", f.SessionID))
	}
	if len(f.SessionIDs) > 0 {
		ph := make([]string, len(f.SessionIDs))
		for i, id := range f.SessionIDs {
			ph[i] = fmt.Sprintf(":id%d", i)
			c.args = append(c.args, sql.Named(fmt.Sprintf("id%d", i), id))
		}
		c.add("session_id IN (" + strings.Join(ph, ", ") + ")")
	}
	return c
}

// querySessions runs a statement selecting sessionCols.
func querySessions(ctx context.Context, db Querier, stmt string, args ...any) ([]Session, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// CountSessions counts the sessions f selects; its time range applies to their last_seen.
func CountSessions(ctx context.Context, db Querier, f Filter) (int64, error) {
	c := filterClause(f, "last_seen")
	var n int64
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM sessions"+c.sql(), c.args...).Scan(&n)
	return n, err
}

// Sessions lists the sessions f selects (its time range applies to their last_seen), the last
// seen first, then by id: limit of them from offset, or all of them when limit is 0.
func Sessions(ctx context.Context, db Querier, f Filter, limit, offset int) ([]Session, error) {
	c := filterClause(f, "last_seen")
	stmt := "SELECT " + sessionCols + " FROM sessions" + c.sql() + " ORDER BY last_seen DESC, session_id"
	if limit > 0 {
		stmt += " LIMIT :limit OFFSET :offset"
		c.args = append(c.args, sql.Named("limit", limit), sql.Named("offset", offset))
	}
	return querySessions(ctx, db, stmt, c.args...)
}

// SessionsOf reads the sessions of keys among those f selects, in the order of keys; a key f
// does not select, or not stored, is left out.
func SessionsOf(ctx context.Context, db Querier, f Filter, keys []store.SessionKey) ([]Session, error) {
	if len(keys) == 0 {
		return []Session{}, nil
	}
	f.SessionIDs = make([]string, len(keys))
	for i, k := range keys {
		f.SessionIDs[i] = k.SessionID
	}
	c := filterClause(f, "last_seen")
	found, err := querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions"+c.sql(), c.args...)
	if err != nil {
		return nil, err
	}
	byKey := map[store.SessionKey]Session{}
	for _, s := range found {
		byKey[store.SessionKey{Client: s.Client, SessionID: s.SessionID}] = s
	}
	out := make([]Session, 0, len(keys))
	for _, k := range keys {
		if s, ok := byKey[k]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// FindSession reads session id of client, or, with client "", the last seen session of that id;
// ok is false when there is none.
func FindSession(ctx context.Context, db Querier, id, client string) (s Session, ok bool, err error) {
	stmt := "SELECT " + sessionCols + " FROM sessions WHERE session_id = ?"
	args := []any{id}
	if client != "" {
		stmt += " AND client = ?"
		args = append(args, client)
	}
	return oneSession(db.QueryRowContext(ctx, stmt+" ORDER BY last_seen DESC LIMIT 1", args...))
}

// LatestSessionOf reads the last seen session of a project; ok is false when it has none.
func LatestSessionOf(ctx context.Context, db Querier, project string) (s Session, ok bool, err error) {
	return oneSession(db.QueryRowContext(ctx, "SELECT "+sessionCols+" FROM sessions WHERE project = ? ORDER BY last_seen DESC LIMIT 1", project))
}

func oneSession(row *sql.Row) (Session, bool, error) {
	s, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return s, false, nil
	}
	return s, err == nil, err
}

// SessionsByPrefix lists the sessions whose id starts with prefix, the last seen first, at most
// limit. The session id index serves the prefix as a range.
func SessionsByPrefix(ctx context.Context, db Querier, prefix string, limit int) ([]Session, error) {
	// U+10FFFF sorts after every character of an id.
	return querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions WHERE session_id >= ?1 AND session_id < ?1 || ?2 ORDER BY last_seen DESC LIMIT ?3",
		prefix, string(utf8.MaxRune), limit)
}

// ChildSessions lists the sessions whose parent is session id (subagents a client records as
// sessions of their own), the first started first, at most limit.
func ChildSessions(ctx context.Context, db Querier, id string, limit int) ([]Session, error) {
	return querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions WHERE parent_session_id = ? ORDER BY first_seen LIMIT ?", id, limit)
}
