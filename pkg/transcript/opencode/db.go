package opencode

import (
	"context"
	"database/sql"
	"slices"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// Poll reads the rows added or changed since the watermark (see the package doc), and commits
// the watermark only after a successful pass.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, p.st.clone, p.read)
	if err != nil {
		return nil, err
	}
	evs := p.events(got, &work)
	p.st = work
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// rows is what one pass read.
type rows struct {
	sessions map[string]sessionRow
	order    []string // every session, by time_created and id
	newSess  []string // sessions created since the watermark, in order
	messages []msgRow
	parts    []partRow
}

type sessionRow struct {
	id, parent, dir, title string
	created, updated       int64
}

type msgRow struct {
	id, session      string
	created, updated int64
	data             []byte
}

type partRow struct {
	id, message, session string
	created, updated     int64
	data                 []byte
	role, model          string // of its message, when the message's data decodes
}

// read reads the sessions and the rows past the watermark in one read transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*rows, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r := &rows{sessions: map[string]sessionRow{}}
	q, err := tx.QueryContext(ctx, `SELECT id, COALESCE(parent_id, ''), COALESCE(directory, ''), COALESCE(title, ''),
	  time_created, COALESCE(time_updated, 0) FROM session ORDER BY time_created, id`)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var s sessionRow
		if err := q.Scan(&s.id, &s.parent, &s.dir, &s.title, &s.created, &s.updated); err != nil {
			q.Close()
			return nil, err
		}
		r.sessions[s.id] = s
		r.order = append(r.order, s.id)
		if s.created > st.Session.T || s.created == st.Session.T && !slices.Contains(st.Session.IDs, s.id) {
			r.newSess = append(r.newSess, s.id)
			st.Session.advance(s.id, s.created)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	q, err = tx.QueryContext(ctx, "SELECT id, session_id, time_created, time_updated, data FROM message WHERE time_updated >= ? ORDER BY time_updated, id", st.Message.T)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var m msgRow
		var data sql.RawBytes
		if err := q.Scan(&m.id, &m.session, &m.created, &m.updated, &data); err != nil {
			q.Close()
			return nil, err
		}
		if m.updated == st.Message.T && slices.Contains(st.Message.IDs, m.id) {
			continue
		}
		m.data = append([]byte(nil), data...)
		r.messages = append(r.messages, m)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	// The role and model of a part's message come from SQLite's JSON functions, guarded by
	// json_valid so that a malformed message does not fail the query.
	q, err = tx.QueryContext(ctx, `SELECT p.id, p.message_id, p.session_id, p.time_created, p.time_updated, p.data,
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_extract(m.data, '$.role'), '') ELSE '' END,
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_extract(m.data, '$.modelID'), '') ELSE '' END
	FROM part p LEFT JOIN message m ON m.id = p.message_id
	WHERE p.time_updated >= ? ORDER BY p.time_updated, p.id`, st.Part.T)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var pr partRow
		var data sql.RawBytes
		var role, model any
		if err := q.Scan(&pr.id, &pr.message, &pr.session, &pr.created, &pr.updated, &data, &role, &model); err != nil {
			q.Close()
			return nil, err
		}
		if pr.updated == st.Part.T && slices.Contains(st.Part.IDs, pr.id) {
			continue
		}
		pr.data = append([]byte(nil), data...)
		pr.role, pr.model = asString(role), asString(model)
		r.parts = append(r.parts, pr)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	for _, m := range r.messages {
		st.Message.advance(m.id, m.updated)
	}
	for _, pr := range r.parts {
		st.Part.advance(pr.id, pr.updated)
	}
	return r, tx.Commit()
}

func asString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
