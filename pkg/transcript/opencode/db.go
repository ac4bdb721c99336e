package opencode

import (
	"context"
	"database/sql"
	"slices"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

var _ transcript.StreamPoller = (*Parser)(nil)

// Poll reads the rows added or changed since the watermark (see the package doc), and commits
// the watermark only after a successful pass. It returns every event of the pass at once: a
// caller that reads large databases uses PollEach.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	return sqliteread.Collect(ctx, p.PollEach)
}

// PollEach reads like Poll and hands the events to emit, at most max at a time, as it reads
// them: it keeps the session table (small) and one batch of events, never the pass's message or
// part rows. A batch is handed over only when the database is still the one being read
// (sqliteread.Unchanged). The watermark is committed when the pass ends without an error.
func (p *Parser) PollEach(ctx context.Context, max int, emit func([]event.Event) error) error {
	return sqliteread.PassEach(ctx, p.src.Path, &p.st, state.clone, &p.stats, max, emit, p.read)
}

// sessions is the session table, which every pass reads whole.
type sessions struct {
	byID    map[string]sessionRow
	order   []string // every session, by time_created and id
	newSess []string // sessions created since the watermark, in order
}

type sessionRow struct {
	id, parent, dir, title string
	created, updated       int64
}

type msgRow struct {
	id, session      string
	created, updated int64
	data             []byte // valid until the next row is read
}

type partRow struct {
	id, message, session string
	created, updated     int64
	data                 []byte // valid until the next row is read
	role, model          string // of its message, when the message's data decodes
	// Of its message too: its time_created, when it completed, whether it is a compaction's
	// summary; and the part's index among the message's parts (by id, the client's order).
	msgCreated, msgDone int64
	summary             bool
	index               int64
}

// read reads the sessions and the rows past the watermark in one read transaction, turning each
// row into its events as it is read (events, in order: sessions, titles, messages, parts).
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state, b *sqliteread.Batcher) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	r := &sessions{byID: map[string]sessionRow{}}
	q, err := tx.QueryContext(ctx, `SELECT id, COALESCE(parent_id, ''), COALESCE(directory, ''), COALESCE(title, ''),
	  time_created, COALESCE(time_updated, 0) FROM session ORDER BY time_created, id`)
	if err != nil {
		return err
	}
	for q.Next() {
		var s sessionRow
		if err := q.Scan(&s.id, &s.parent, &s.dir, &s.title, &s.created, &s.updated); err != nil {
			q.Close()
			return err
		}
		r.byID[s.id] = s
		r.order = append(r.order, s.id)
		if s.created > st.Session.T || s.created == st.Session.T && !slices.Contains(st.Session.IDs, s.id) {
			r.newSess = append(r.newSess, s.id)
			st.Session.advance(s.id, s.created)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return err
	}
	if err := b.Add(p.sessionEvents(r, st)...); err != nil {
		return err
	}

	q, err = tx.QueryContext(ctx, "SELECT id, session_id, time_created, time_updated, data FROM message WHERE time_updated >= ? ORDER BY time_updated, id", st.Message.T)
	if err != nil {
		return err
	}
	from := st.Message // the rows at its time already read are passed over
	for q.Next() {
		var m msgRow
		var data sql.RawBytes
		if err := q.Scan(&m.id, &m.session, &m.created, &m.updated, &data); err != nil {
			q.Close()
			return err
		}
		if m.updated == from.T && slices.Contains(from.IDs, m.id) {
			continue
		}
		m.data = data
		st.Message.advance(m.id, m.updated)
		p.stats.Lines++
		evs, err := p.message(p.owner(r, m.session), m)
		if err != nil {
			p.stats.Malformed++
			continue
		}
		if err := b.Add(evs...); err != nil {
			q.Close()
			return err
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return err
	}
	// The role and model of a part's message come from SQLite's JSON functions, guarded by
	// json_valid so that a malformed message does not fail the query.
	// So do the time its message completed and whether it is a compaction's summary (summary is
	// true there, an object of diffs on a user message). The part's index among its message's
	// parts counts its siblings of smaller id, on the (message_id, id) index.
	q, err = tx.QueryContext(ctx, `SELECT p.id, p.message_id, p.session_id, p.time_created, p.time_updated, p.data,
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_extract(m.data, '$.role'), '') ELSE '' END,
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_extract(m.data, '$.modelID'), '') ELSE '' END,
	  COALESCE(m.time_created, p.time_created),
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_extract(m.data, '$.time.completed'), 0) ELSE 0 END,
	  CASE WHEN json_valid(m.data) THEN COALESCE(json_type(m.data, '$.summary') = 'true', 0) ELSE 0 END,
	  (SELECT count(*) FROM part s WHERE s.message_id = p.message_id AND s.id < p.id)
	FROM part p LEFT JOIN message m ON m.id = p.message_id
	WHERE p.time_updated >= ? ORDER BY p.time_updated, p.id`, st.Part.T)
	if err != nil {
		return err
	}
	from = st.Part
	for q.Next() {
		var pr partRow
		var data sql.RawBytes
		var role, model, done any
		if err := q.Scan(&pr.id, &pr.message, &pr.session, &pr.created, &pr.updated, &data, &role, &model,
			&pr.msgCreated, &done, &pr.summary, &pr.index); err != nil {
			q.Close()
			return err
		}
		if pr.updated == from.T && slices.Contains(from.IDs, pr.id) {
			continue
		}
		pr.data = data
		pr.role, pr.model, pr.msgDone = asString(role), asString(model), asInt(done)
		st.Part.advance(pr.id, pr.updated)
		p.stats.Lines++
		evs, err := p.part(p.owner(r, pr.session), pr)
		if err != nil {
			p.stats.Malformed++
			continue
		}
		if err := b.Add(evs...); err != nil {
			q.Close()
			return err
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return err
	}
	return tx.Commit()
}

func asInt(v any) int64 {
	switch v := v.(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
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
