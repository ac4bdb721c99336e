package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SessionRef is one stored session, as ResolveSession finds it.
type SessionRef struct {
	Client, ID, Title string
}

// ErrNoSession is ResolveSession's error for an id or prefix no stored session has.
var ErrNoSession = errors.New("no such session")

// ResolveSession finds the session arg names: its whole id, else the one session whose id starts
// with arg. An unknown arg wraps ErrNoSession; a prefix several sessions share is an error that
// lists some of them, with their titles, to choose from.
func ResolveSession(ctx context.Context, db *sql.DB, arg string) (SessionRef, error) {
	arg = strings.TrimSpace(arg)
	if arg == "" {
		return SessionRef{}, fmt.Errorf("%w: an empty session id", ErrNoSession)
	}
	find := func(q string, args ...any) ([]SessionRef, error) {
		rows, err := db.QueryContext(ctx, `SELECT client, session_id, title FROM sessions WHERE `+q+` ORDER BY last_seen DESC LIMIT 6`, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []SessionRef
		for rows.Next() {
			var r SessionRef
			if err := rows.Scan(&r.Client, &r.ID, &r.Title); err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	found, err := find(`session_id = ?`, arg)
	if err == nil && len(found) == 0 {
		// U+10FFFF sorts after every character of an id: the prefix as a range.
		found, err = find(`session_id >= ?1 AND session_id < ?1 || ?2`, arg, string(utf8.MaxRune))
	}
	switch {
	case err != nil:
		return SessionRef{}, err
	case len(found) == 0:
		return SessionRef{}, fmt.Errorf("%w: no stored session id is or starts with %q", ErrNoSession, arg)
	case len(found) == 1:
		return found[0], nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "session %q is ambiguous, give more characters:", arg)
	for i, r := range found {
		if i == 5 {
			b.WriteString("\n  ...")
			break
		}
		fmt.Fprintf(&b, "\n  %s  %s  %s", r.ID, r.Client, r.Title)
	}
	return SessionRef{}, errors.New(b.String())
}
