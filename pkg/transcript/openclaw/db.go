package openclaw

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript/pi"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// lagMs is how far behind the watermark a pass looks again for sessions whose activity it may
// have missed: two writers (the Gateway and a CLI run) stamp their rows before they commit.
const lagMs = 10_000

// maxEventBytes bounds a decompressed event (OpenClaw compresses events of at most 4 MiB).
const maxEventBytes = 8 << 20

// window is one row of session_windows: a session and what the reader needs of it.
type window struct {
	id, key, previous, reason, parentKey, spawnedBy string
	created, act                                    int64 // act: the latest of its times
}

// row is one transcript_events row.
type row struct {
	seq     int64
	json    []byte // event_json, or nil
	zstd    []byte // event_zstd, or nil
	created int64
}

// sessRows is what one pass read of one session.
type sessRows struct {
	w     window
	gen   string
	from  int64 // the seq the rows follow; -1 when the session is read from its start
	rows  []row
	known bool // the parser had state for it
}

// pass is what one pass read.
type pass struct {
	windows  map[string]window
	sessions []*sessRows
	act      int64
}

func (s state) clone() state {
	s.Sessions = maps.Clone(s.Sessions)
	for k, v := range s.Sessions {
		c := *v
		c.Comps = slices.Clone(v.Comps)
		c.Pending = slices.Clone(v.Pending)
		s.Sessions[k] = &c
	}
	return s
}

// poll reads the rows added or rewritten since the watermark (see the package doc) and commits
// the watermark only after a successful pass.
func (p *Parser) poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, p.st.clone, p.read)
	if err != nil {
		return nil, err
	}
	evs := p.events(got, &work)
	p.st = work
	return evs, nil
}

// read reads the windows, the rewrite generations and the new rows of every session that may
// have changed, in one read transaction. It does not parse: what it read is turned into events
// only once the pass succeeded.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*pass, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	got := &pass{windows: map[string]window{}}
	if err := readWindows(ctx, tx, got); err != nil {
		if noTable(err) {
			return got, tx.Commit() // a database of an OpenClaw that keeps no transcripts here
		}
		return nil, err
	}
	gens, err := readGenerations(ctx, tx)
	if err != nil {
		return nil, err
	}
	hasZstd, err := hasColumn(ctx, tx, "transcript_events", "event_zstd")
	if err != nil {
		return nil, err
	}
	query := "SELECT seq, event_json, NULL, created_at FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq"
	if hasZstd {
		query = "SELECT seq, event_json, event_zstd, created_at FROM transcript_events WHERE session_id = ? AND seq > ? ORDER BY seq"
	}
	ids := make([]string, 0, len(got.windows))
	for id, w := range got.windows {
		got.act = max(got.act, w.act)
		if _, known := st.Sessions[id]; known || w.act >= st.Act-lagMs {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool {
		wi, wj := got.windows[ids[i]], got.windows[ids[j]]
		if wi.created != wj.created {
			return wi.created < wj.created
		}
		return ids[i] < ids[j]
	})
	for _, id := range ids {
		sr := &sessRows{w: got.windows[id], gen: gens[id], from: -1}
		if s, ok := st.Sessions[id]; ok {
			sr.known = true
			if s.Gen == sr.gen {
				sr.from = s.Seq
			}
		}
		if err := readRows(ctx, tx, query, sr); err != nil {
			return nil, err
		}
		got.sessions = append(got.sessions, sr)
	}
	return got, tx.Commit()
}

// readWindows reads session_windows whole (one row per session), by column name: its columns
// grew over OpenClaw's schema versions.
func readWindows(ctx context.Context, tx *sql.Tx, got *pass) error {
	q, err := tx.QueryContext(ctx, "SELECT * FROM session_windows")
	if err != nil {
		return err
	}
	cols, err := q.Columns()
	if err != nil {
		q.Close()
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for q.Next() {
		if err := q.Scan(ptrs...); err != nil {
			q.Close()
			return err
		}
		var w window
		for i, c := range cols {
			switch c {
			case "session_id":
				w.id = asString(vals[i])
			case "session_key":
				w.key = asString(vals[i])
			case "previous_session_id":
				w.previous = asString(vals[i])
			case "reason":
				w.reason = asString(vals[i])
			case "parent_session_key":
				w.parentKey = asString(vals[i])
			case "spawned_by":
				w.spawnedBy = asString(vals[i])
			case "created_at":
				w.created = asInt(vals[i])
				w.act = max(w.act, w.created)
			case "updated_at", "transcript_updated_at", "transcript_observed_at", "started_at", "ended_at":
				w.act = max(w.act, asInt(vals[i]))
			}
		}
		if w.id != "" {
			got.windows[w.id] = w
		}
	}
	return sqliteread.CloseRows(q)
}

// readGenerations reads each session's transcript generation, which OpenClaw renews whenever it
// rewrites rows already written (schema 13 and later; none before).
func readGenerations(ctx context.Context, tx *sql.Tx) (map[string]string, error) {
	gens := map[string]string{}
	q, err := tx.QueryContext(ctx, "SELECT session_id, generation FROM transcript_rewrite_watermarks")
	if err != nil {
		if noTable(err) {
			return gens, nil
		}
		return nil, err
	}
	for q.Next() {
		var id, gen any
		if err := q.Scan(&id, &gen); err != nil {
			q.Close()
			return nil, err
		}
		gens[asString(id)] = asString(gen)
	}
	return gens, sqliteread.CloseRows(q)
}

func hasColumn(ctx context.Context, tx *sql.Tx, table, column string) (bool, error) {
	cols, err := sqliteread.Columns(ctx, tx, table)
	return cols[column], err
}

func readRows(ctx context.Context, tx *sql.Tx, query string, sr *sessRows) error {
	q, err := tx.QueryContext(ctx, query, sr.w.id, sr.from)
	if err != nil {
		return err
	}
	for q.Next() {
		var r row
		var js, zs sql.RawBytes
		var created any
		if err := q.Scan(&r.seq, &js, &zs, &created); err != nil {
			q.Close()
			return err
		}
		r.json, r.zstd, r.created = clone(js), clone(zs), asInt(created)
		sr.rows = append(sr.rows, r)
	}
	return sqliteread.CloseRows(q)
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// noTable reports a query on a table this database does not have (an older schema).
func noTable(err error) bool { return err != nil && strings.Contains(err.Error(), "no such table") }

func asString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
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

// events turns what a pass read into events, advancing st.
func (p *Parser) events(got *pass, st *state) []event.Event {
	if st.Sessions == nil {
		st.Sessions = map[string]*sess{}
	}
	for id := range st.Sessions {
		if _, ok := got.windows[id]; !ok && len(got.windows) > 0 {
			delete(st.Sessions, id) // the session was deleted
		}
	}
	var evs []event.Event
	for _, sr := range got.sessions {
		s := st.Sessions[sr.w.id]
		if s == nil {
			s = &sess{Session: pi.Session{ID: sr.w.id}, Seq: -1}
			st.Sessions[sr.w.id] = s
		}
		if sr.from < 0 && s.Seq >= 0 {
			// Rewritten since it was read: read again from the start. The ids are those of
			// the same records, so what did not change merges with what was stored.
			s.Header, s.Seq = false, -1
		}
		s.Gen, s.Act = sr.gen, sr.w.act
		s.Root = rootOf(got.windows, sr.w)
		if sr.w.previous != "" && sr.w.previous != sr.w.id {
			s.Parent = sr.w.previous
		}
		for _, r := range sr.rows {
			if data, err := r.payload(); err != nil {
				p.r.Stats.Lines++
				p.r.Stats.Malformed++
			} else {
				p.r.Place = r.seq
				out, _ := p.r.Record(&s.Session, data)
				evs = append(evs, out...)
			}
			s.Seq = r.seq
		}
	}
	st.Act = max(st.Act, got.act)
	if n := len(st.Sessions); n > maxSessions {
		ids := slices.Collect(maps.Keys(st.Sessions))
		sort.Slice(ids, func(i, j int) bool {
			a, b := st.Sessions[ids[i]], st.Sessions[ids[j]]
			if a.Act != b.Act {
				return a.Act < b.Act
			}
			return ids[i] < ids[j]
		})
		for _, id := range ids[:n-maxSessions] {
			delete(st.Sessions, id)
		}
	}
	return evs
}

// rootOf returns the root session of a subagent's window (parent_session_key or spawned_by naming
// its parent's session key, or session id), "" for a root session.
func rootOf(windows map[string]window, w window) string {
	root := ""
	cur := w
	for range 16 { // parent chains are short; a loop in damaged data ends here
		parent, ok := parentOf(windows, cur)
		if !ok || parent.id == w.id {
			break
		}
		root, cur = parent.id, parent
	}
	return root
}

func parentOf(windows map[string]window, w window) (window, bool) {
	for _, ref := range []string{w.parentKey, w.spawnedBy} {
		if ref == "" || ref == w.key || ref == w.id {
			continue
		}
		if p, ok := windows[ref]; ok {
			return p, true
		}
		// A session key: its window created last before the child, else its first one.
		var before, first window
		for _, c := range windows {
			if c.key != ref {
				continue
			}
			if c.created <= w.created && (before.id == "" || c.created > before.created) {
				before = c
			}
			if first.id == "" || c.created < first.created {
				first = c
			}
		}
		if before.id != "" {
			return before, true
		}
		if first.id != "" {
			return first, true
		}
	}
	return window{}, false
}

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
	decoderErr  error
)

// payload returns a row's event JSON: event_json, or event_zstd decompressed.
func (r row) payload() ([]byte, error) {
	if r.json != nil {
		return r.json, nil
	}
	if r.zstd == nil {
		return nil, malformed("transcript row %d has no event", r.seq)
	}
	decoderOnce.Do(func() {
		decoder, decoderErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxEventBytes))
	})
	if decoderErr != nil {
		return nil, decoderErr
	}
	out, err := decoder.DecodeAll(r.zstd, nil)
	if err != nil {
		return nil, malformed("transcript row %d: %v", r.seq, err)
	}
	return out, nil
}
