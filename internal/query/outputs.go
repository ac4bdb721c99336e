package query

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// ToolOutput reads the tool output stored under an action's event id ("" when none was kept).
func ToolOutput(ctx context.Context, db Querier, eventID string) (string, error) {
	var out string
	err := db.QueryRowContext(ctx, `SELECT unpack(output) FROM action_outputs WHERE event_id = ?`, eventID).Scan(&out)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return out, err
}

// Stashed is the original of a tool output the proxy compressed ([compression] stash).
type Stashed struct {
	StashID, SessionID, Mechanism string
	TS                            int64 // ms
	Content                       string
}

// StashedOutput reads a stashed original; ok is false when there is none, or no stash at all
// (a store from before stashing).
func StashedOutput(ctx context.Context, db Querier, stashID string) (s Stashed, ok bool, err error) {
	err = db.QueryRowContext(ctx, `SELECT stash_id, ts, session_id, mechanism, content FROM compression_stash WHERE stash_id = ?`,
		stashID).Scan(&s.StashID, &s.TS, &s.SessionID, &s.Mechanism, &s.Content)
	if err != nil && strings.Contains(err.Error(), "no such table") {
		return s, false, nil
	}
	return rowFound(s, err)
}
