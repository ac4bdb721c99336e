package warp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// maxAtMark bounds the conversations the State remembers at its watermark's time.
const maxAtMark = 256

// mark is agent_conversations' watermark: the latest last_modified_at read and the fingerprint of
// each row read at it.
type mark struct {
	T    string            `json:"t,omitempty"`
	Seen map[string]string `json:"seen,omitempty"`
}

// seen reports whether conversation id was read at time t with this fingerprint already.
func (m *mark) seen(id, t, fp string) bool {
	if t < m.T {
		return true
	}
	got, ok := m.Seen[id]
	return t == m.T && ok && got == fp
}

func (m *mark) advance(id, t, fp string) {
	switch {
	case t > m.T:
		m.T, m.Seen = t, map[string]string{id: fp}
	case t == m.T:
		if _, ok := m.Seen[id]; ok || len(m.Seen) < maxAtMark {
			if m.Seen == nil {
				m.Seen = map[string]string{}
			}
			m.Seen[id] = fp
		}
	}
}

// state is the parser's State.
type state struct {
	Query int64 `json:"query"` // the largest ai_queries.id read
	Conv  mark  `json:"conv"`  // agent_conversations by last_modified_at
}

func (s state) clone() state {
	s.Conv.Seen = maps.Clone(s.Conv.Seen)
	return s
}

// Poll reads the exchanges and conversations added or changed since the State and commits it
// only after a successful pass.
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

// pass is what one pass read.
type pass struct {
	exchanges []exchangeRow
	convs     map[string]*convRow  // every conversation the pass touches, by id
	changed   []string             // conversations whose row changed, in order
	first     map[string]firstInfo // each touched conversation's first exchange
	order     []string             // touched conversations, in order of first appearance
}

type exchangeRow struct {
	id                                int64
	exchange, conv, start, input, cwd string
	status, model                     string
}

type convRow struct {
	id, modified string
	data         []byte
}

type firstInfo struct {
	start, cwd string
}

func fingerprint(data []byte) string {
	h := fnv.New64a()
	h.Write(data)
	return strconv.FormatUint(h.Sum64(), 36)
}

// read reads the new exchanges, the changed conversations and the rows of the conversations the
// exchanges belong to, in one read transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*pass, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	qcols, err := sqliteread.Columns(ctx, tx, "ai_queries")
	if err != nil {
		return nil, err
	}
	ccols, err := sqliteread.Columns(ctx, tx, "agent_conversations")
	if err != nil {
		return nil, err
	}
	if len(qcols) == 0 || len(ccols) == 0 {
		return nil, fmt.Errorf("no ai_queries or agent_conversations table: not a Warp database, or one from before Agent Mode")
	}
	r := &pass{convs: map[string]*convRow{}, first: map[string]firstInfo{}}
	touched := map[string]bool{}
	touch := func(id string) {
		if !touched[id] {
			touched[id] = true
			r.order = append(r.order, id)
		}
	}
	q, err := tx.QueryContext(ctx, `SELECT id, COALESCE(exchange_id, ''), COALESCE(conversation_id, ''), COALESCE(CAST(start_ts AS TEXT), ''),
	  COALESCE(input, ''), COALESCE(working_directory, ''), `+
		sqliteread.Opt(qcols, "output_status", "COALESCE(output_status, '')", "''")+`,
	  `+sqliteread.Opt(qcols, "model_id", "COALESCE(model_id, '')", "''")+`
	FROM ai_queries WHERE id > ? ORDER BY id`, st.Query)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var e exchangeRow
		if err := q.Scan(&e.id, &e.exchange, &e.conv, &e.start, &e.input, &e.cwd, &e.status, &e.model); err != nil {
			q.Close()
			return nil, err
		}
		r.exchanges = append(r.exchanges, e)
		st.Query = max(st.Query, e.id)
		if e.conv != "" {
			touch(e.conv)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	ids, _ := json.Marshal(r.order)
	q, err = tx.QueryContext(ctx, `SELECT COALESCE(conversation_id, ''), COALESCE(conversation_data, ''), COALESCE(CAST(last_modified_at AS TEXT), '')
	FROM agent_conversations WHERE CAST(last_modified_at AS TEXT) >= ? OR conversation_id IN (SELECT value FROM json_each(?))
	ORDER BY 3, 1`, st.Conv.T, string(ids))
	if err != nil {
		return nil, err
	}
	type seenRow struct{ id, t, fp string }
	var advance []seenRow
	for q.Next() {
		var c convRow
		var data sql.RawBytes
		if err := q.Scan(&c.id, &data, &c.modified); err != nil {
			q.Close()
			return nil, err
		}
		c.data = append([]byte(nil), data...)
		fp := fingerprint(c.data)
		changed := !st.Conv.seen(c.id, c.modified, fp)
		if !changed && !touched[c.id] {
			continue
		}
		r.convs[c.id] = &c
		if changed {
			r.changed = append(r.changed, c.id)
			advance = append(advance, seenRow{c.id, c.modified, fp})
			touch(c.id)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	for _, a := range advance {
		st.Conv.advance(a.id, a.t, a.fp)
	}
	if len(r.order) > 0 {
		ids, _ = json.Marshal(r.order)
		// The first exchange of each touched conversation: SQLite returns the row of the MIN.
		q, err = tx.QueryContext(ctx, `SELECT conversation_id, MIN(CAST(start_ts AS TEXT)), COALESCE(working_directory, '')
		FROM ai_queries WHERE conversation_id IN (SELECT value FROM json_each(?)) GROUP BY conversation_id`, string(ids))
		if err != nil {
			return nil, err
		}
		for q.Next() {
			var id string
			var f firstInfo
			var start sql.NullString
			if err := q.Scan(&id, &start, &f.cwd); err != nil {
				q.Close()
				return nil, err
			}
			f.start = start.String
			r.first[id] = f
		}
		if err := sqliteread.CloseRows(q); err != nil {
			return nil, err
		}
	}
	return r, tx.Commit()
}
