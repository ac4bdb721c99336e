package crush

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"strconv"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"

	"github.com/observerhq/observer/pkg/event"
)

// busyTimeoutMs is how long a read waits for a lock the client holds (a checkpoint, a WAL reset).
const busyTimeoutMs = 5000

// errChanged reports a database the client started writing while it was read as immutable.
var errChanged = errors.New("database changed while read")

type fileSig struct {
	size, mtime int64
	wal         bool
}

func sigOf(path string) (fileSig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{}, err
	}
	_, werr := os.Stat(path + "-wal")
	return fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), wal: werr == nil}, nil
}

// dsn returns the read-only URI of path: mode=ro when the database has a -wal file, immutable=1
// when it has none (see package opencode, which reads OpenCode's database the same way).
func dsn(path string, wal bool) string {
	q := fmt.Sprintf("mode=ro&_busy_timeout=%d", busyTimeoutMs)
	if !wal {
		q = "immutable=1"
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q}
	return u.String()
}

// Poll reads the rows added or changed since the watermark (see the package doc).
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	var err error
	for range 3 {
		var evs []event.Event
		evs, err = p.pollOnce(ctx)
		if !errors.Is(err, errChanged) {
			return evs, err
		}
	}
	return nil, err
}

func (p *Parser) pollOnce(ctx context.Context) ([]event.Event, error) {
	before, err := sigOf(p.src.Path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", dsn(p.src.Path, before.wal))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	work := p.st.clone()
	rows, err := p.read(ctx, db, &work)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.src.Path, err)
	}
	if !before.wal {
		if after, err := sigOf(p.src.Path); err != nil || after != before {
			return nil, errChanged
		}
	}
	stats := p.stats
	evs := p.events(rows)
	p.st = work
	p.stats.Events = stats.Events + int64(len(evs))
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
	summary                            bool // is_summary_message
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
	q, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for q.Next() {
		var name string
		if err := q.Scan(&name); err != nil {
			q.Close()
			return nil, err
		}
		out[name] = true
	}
	if err := closeRows(q); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s table: not a Crush database, or not migrated yet", table)
	}
	return out, nil
}

// opt returns expr when the column exists, else the default value.
func opt(cols map[string]bool, col, expr, def string) string {
	if cols[col] {
		return expr
	}
	return def
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
	  CAST(COALESCE(created_at, 0) AS INTEGER), `+opt(scols, "summary_message_id", "COALESCE(summary_message_id, '')", "''")+`
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
	if err := closeRows(q); err != nil {
		return nil, err
	}
	q, err = tx.QueryContext(ctx, `SELECT COALESCE(id, ''), COALESCE(session_id, ''), COALESCE(role, ''), parts,
	  COALESCE(model, ''), CAST(COALESCE(created_at, 0) AS INTEGER), CAST(COALESCE(updated_at, 0) AS INTEGER),
	  `+opt(mcols, "provider", "COALESCE(provider, '')", "''")+`,
	  `+opt(mcols, "is_summary_message", "CAST(COALESCE(is_summary_message, 0) AS INTEGER)", "0")+`
	FROM messages WHERE CAST(COALESCE(updated_at, 0) AS INTEGER) >= ? ORDER BY 7, 1`, st.Message.T)
	if err != nil {
		return nil, err
	}
	var fps []string
	for q.Next() {
		var m msgRow
		var parts sql.RawBytes
		var summary int64
		if err := q.Scan(&m.id, &m.session, &m.role, &parts, &m.model, &m.created, &m.updated, &m.provider, &summary); err != nil {
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
	if err := closeRows(q); err != nil {
		return nil, err
	}
	for i, m := range r.messages {
		st.Message.advance(m.id, m.updated, fps[i])
	}
	return r, tx.Commit()
}

func closeRows(q *sql.Rows) error {
	err := q.Err()
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	return err
}
