package store

import (
	"context"
	"database/sql"

	"github.com/observerhq/observer/pkg/event"
)

// fillTitles gives every stored session without a title its first recognisable prompt's, else its
// first slash command (event.CommandTitle).
func fillTitles(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT s.client, s.session_id, a.ts, a.target FROM sessions s
		JOIN actions a ON a.session_id = s.session_id AND a.client = s.client AND a.type = 'user_prompt'
		WHERE s.title = '' ORDER BY s.client, s.session_id, a.ts, a.id`)
	if err != nil {
		return err
	}
	type titled struct {
		client, id, title, source string
		at                        int64
	}
	var found []titled
	for rows.Next() {
		var t titled
		var target string
		if err := rows.Scan(&t.client, &t.id, &t.at, &target); err != nil {
			rows.Close()
			return err
		}
		n := len(found)
		same := n > 0 && found[n-1].client == t.client && found[n-1].id == t.id
		if same && found[n-1].source == "prompt" {
			continue
		}
		if title, ok := event.CleanTitle(target); ok {
			t.title, t.source = title, "prompt"
		} else if title, ok := event.CommandTitle(target); ok && !same {
			t.title, t.source = title, "command"
		} else {
			continue
		}
		if same {
			found[n-1] = t // a prompt after the session's first command
		} else {
			found = append(found, t)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range found {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET title = ?, title_source = ?, title_at = ?
			WHERE client = ? AND session_id = ?`, t.title, t.source, t.at, t.client, t.id); err != nil {
			return err
		}
	}
	return nil
}
