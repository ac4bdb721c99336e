package crush

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strconv"

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
	evs := p.events(got)
	p.st = work
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// rows is what one pass read.
type rows struct {
	sessions map[string]sessionRow
	newSess  []string // sessions created since the watermark, in order
	messages []msgRow
}

type sessionRow struct {
	id, parent, summary string
	created             int64
}

type msgRow struct {
	id, session, role, model, provider string
	created, updated                   int64
	rowid                              int64 // its place: Crush inserts a conversation's messages in order
	summary                            bool  // is_summary_message
	parts                              []byte
}

// fingerprint is what tells a message row read again from the one read before.
func (m *msgRow) fingerprint() string {
	h := fnv.New64a()
	for _, s := range []string{m.role, m.model, m.provider, strconv.FormatBool(m.summary)} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(m.parts)
	return strconv.FormatUint(h.Sum64(), 36)
}

// columns lists the columns of a table (PRAGMA table_info), so that columns later migrations added
// are read only where they exist.
func columns(ctx context.Context, tx *sql.Tx, table string) (map[string]bool, error) {
	out, err := sqliteread.Columns(ctx, tx, table)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no %s table: not a Crush database, or not migrated yet", table)
	}
	return out, err
}

// read reads the sessions and the message rows past the watermark in one read transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*rows, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	scols, err := columns(ctx, tx, "sessions")
	if err != nil {
		return nil, err
	}
	mcols, err := columns(ctx, tx, "messages")
	if err != nil {
		return nil, err
	}
	r := &rows{sessions: map[string]sessionRow{}}
	q, err := tx.QueryContext(ctx, `SELECT COALESCE(id, ''), COALESCE(parent_session_id, ''),
	  CAST(COALESCE(created_at, 0) AS INTEGER), `+
		sqliteread.Opt(scols, "summary_message_id", "COALESCE(summary_message_id, '')", "''")+`
	FROM sessions ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var s sessionRow
		if err := q.Scan(&s.id, &s.parent, &s.created, &s.summary); err != nil {
			q.Close()
			return nil, err
		}
		r.sessions[s.id] = s
		if !st.Session.seen(s.id, s.created, "") {
			r.newSess = append(r.newSess, s.id)
			st.Session.advance(s.id, s.created, "")
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	q, err = tx.QueryContext(ctx, `SELECT COALESCE(id, ''), COALESCE(session_id, ''), COALESCE(role, ''), parts,
	  COALESCE(model, ''), CAST(COALESCE(created_at, 0) AS INTEGER), CAST(COALESCE(updated_at, 0) AS INTEGER),
	  `+sqliteread.Opt(mcols, "provider", "COALESCE(provider, '')", "''")+`,
	  `+sqliteread.Col(mcols, "is_summary_message", "INTEGER", "0")+`, rowid
	FROM messages WHERE CAST(COALESCE(updated_at, 0) AS INTEGER) >= ? ORDER BY 7, 1`, st.Message.T)
	if err != nil {
		return nil, err
	}
	var fps []string
	for q.Next() {
		var m msgRow
		var parts sql.RawBytes
		var summary int64
		if err := q.Scan(&m.id, &m.session, &m.role, &parts, &m.model, &m.created, &m.updated, &m.provider, &summary, &m.rowid); err != nil {
			q.Close()
			return nil, err
		}
		m.summary = summary != 0
		m.parts = append([]byte(nil), parts...)
		fp := m.fingerprint()
		if st.Message.seen(m.id, m.updated, fp) {
			continue
		}
		r.messages = append(r.messages, m)
		fps = append(fps, fp)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	for i, m := range r.messages {
		st.Message.advance(m.id, m.updated, fps[i])
	}
	return r, tx.Commit()
}
