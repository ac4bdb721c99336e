package zed

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// maxThreadBytes bounds a decompressed thread.
const maxThreadBytes = 64 << 20

// threadState is what the parser reported of one thread (see the package doc).
type threadState struct {
	U  string `json:"u"`            // updated_at of the row read
	N  int    `json:"n,omitempty"`  // messages reported
	T  int64  `json:"t,omitempty"`  // unix ns of message N-1
	H  string `json:"h,omitempty"`  // hash of message N-1
	P  string `json:"p,omitempty"`  // hash of messages 0 to N-2
	K  string `json:"k,omitempty"`  // usage reported
	Ti string `json:"ti,omitempty"` // title reported
	M  string `json:"m,omitempty"`  // model reported
	S  bool   `json:"s,omitempty"`  // started event emitted
}

// Bounds of the State (see the package doc).
const (
	// maxRecent is how many threads, the most recently updated, the State keeps one by one.
	maxRecent = 128
	// settleAfter is how much older than the newest thread a thread must be to be settled.
	settleAfter = time.Hour
)

// dbState is a parser's State: per recently updated thread id, what was reported; the others
// are settled.
type dbState struct {
	Threads map[string]threadState `json:"threads,omitempty"`
	// Settled is the newest updated_at (Unix ns) of the threads dropped from Threads: a thread
	// absent from Threads that was updated at or before it was read by an earlier pass and has
	// not changed since.
	Settled int64 `json:"settled,omitempty"`
}

func (s dbState) clone() dbState {
	s.Threads = maps.Clone(s.Threads)
	return s
}

// DBParser reads one threads.db (a transcript.StreamPoller).
type DBParser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     dbState
	stats  transcript.Stats
}

var (
	_ transcript.Parser       = (*DBParser)(nil)
	_ transcript.StreamPoller = (*DBParser)(nil)
)

func newDBParser(a *Adapter, src transcript.Source, raw []byte) *DBParser {
	p := &DBParser{src: src, prices: pricing.Source(a.Prices, a.CurrentPrices)}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *DBParser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Count(0, transcript.ErrMalformed)
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns what was reported, as JSON.
func (p *DBParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the threads read (Lines) and those that did not decode (Malformed).
func (p *DBParser) Stats() transcript.Stats { return p.stats.Clone() }

// Poll reads the threads changed since the last pass and commits the state only after a
// successful pass. It returns every event of the pass at once: a caller that reads large
// databases uses PollEach.
func (p *DBParser) Poll(ctx context.Context) ([]event.Event, error) {
	return sqliteread.Collect(ctx, p.PollEach)
}

// PollEach reads like Poll and hands the events to emit, at most max at a time, as it reads the
// threads: it holds the list of threads (ids and times), one thread's row and one batch of
// events, never every changed thread at once. A batch is handed over only when the database is
// still the one being read (sqliteread.Unchanged). The state is committed when the pass ends
// without an error.
func (p *DBParser) PollEach(ctx context.Context, max int, emit func([]event.Event) error) error {
	return sqliteread.PassEach(ctx, p.src.Path, &p.st, dbState.clone, &p.stats, max, emit, p.read)
}

// row is one thread row a pass read.
type row struct {
	id, parent, updated, created, summary, dataType, folders string
	data                                                     []byte
}

// listed is what a pass lists of every thread.
type listed struct {
	parent, updated, created string
}

// updatedNs is an updated_at in Unix ns, or 0 when it does not parse.
func updatedNs(s string) int64 {
	if t, ok := parseTime(s); ok {
		return t.UnixNano()
	}
	return 0
}

// read lists the threads and reads the changed ones, oldest first, one row at a time, handing
// their events to b, in one read transaction; st loses the threads that are gone and keeps the
// most recent ones (settle).
func (p *DBParser) read(ctx context.Context, db *sql.DB, st *dbState, b *sqliteread.Batcher) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	cols, err := sqliteread.Columns(ctx, tx, "threads")
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("no threads table: not a Zed threads database, or not created yet")
	}
	col := func(name string) string { return sqliteread.Col(cols, name, "TEXT", "''") }
	q, err := tx.QueryContext(ctx, `SELECT CAST(id AS TEXT), `+col("updated_at")+`, `+col("parent_id")+`, `+
		col("created_at")+` FROM threads`)
	if err != nil {
		return err
	}
	threads := map[string]listed{}
	parents := map[string]string{}
	var changed []string
	for q.Next() {
		var id string
		var l listed
		if err := q.Scan(&id, &l.updated, &l.parent, &l.created); err != nil {
			q.Close()
			return err
		}
		threads[id] = l
		parents[id] = l.parent
		if ts, ok := st.Threads[id]; ok {
			if ts.U != updKey(l.updated) {
				changed = append(changed, id)
			}
		} else if u := updatedNs(l.updated); u == 0 || u > st.Settled {
			changed = append(changed, id) // new, or settled and updated since
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return err
	}
	for id := range st.Threads {
		if _, ok := threads[id]; !ok {
			delete(st.Threads, id)
		}
	}
	slices.SortFunc(changed, func(a, b string) int {
		ta, tb := threads[a], threads[b]
		if c := strings.Compare(transcript.FirstNonEmpty(ta.created, ta.updated), transcript.FirstNonEmpty(tb.created, tb.updated)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	stmt, err := tx.PrepareContext(ctx, `SELECT `+col("summary")+`, `+col("data_type")+`, data, `+
		col("folder_paths")+` FROM threads WHERE id = ?`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	if st.Threads == nil {
		st.Threads = map[string]threadState{}
	}
	for _, id := range changed {
		l := threads[id]
		r := row{id: id, parent: l.parent, updated: l.updated, created: l.created}
		var data any
		err := stmt.QueryRowContext(ctx, id).Scan(&r.summary, &r.dataType, &data, &r.folders)
		if err == sql.ErrNoRows {
			continue // deleted since the listing
		}
		if err != nil {
			return err
		}
		switch d := data.(type) {
		case []byte:
			r.data = d
		case string:
			r.data = []byte(d)
		}
		p.stats.Lines++
		prev := st.Threads[id]
		evs, next, err := p.thread(&r, rootOf(id, parents), prev)
		if err != nil {
			p.stats.Malformed++
			prev.U = updKey(r.updated) // read again only when it changes
			next = prev
		}
		st.Threads[id] = next
		if err := b.Add(evs...); err != nil {
			return err
		}
	}
	settle(st, threads)
	return tx.Commit()
}

// settle keeps in st the maxRecent most recently updated threads, and the threads updated less
// than settleAfter before the newest one or whose updated_at does not parse; it drops the others,
// raising Settled to their updated_at.
func settle(st *dbState, threads map[string]listed) {
	n := len(st.Threads) - maxRecent
	if n <= 0 {
		return
	}
	type recent struct {
		id string
		u  int64
	}
	var newest int64
	list := make([]recent, 0, len(st.Threads))
	for id := range st.Threads {
		u := updatedNs(threads[id].updated)
		newest = max(newest, u)
		if u != 0 {
			list = append(list, recent{id, u})
		}
	}
	slices.SortFunc(list, func(a, b recent) int {
		if c := cmp.Compare(a.u, b.u); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for _, t := range list[:min(n, len(list))] {
		if t.u > newest-int64(settleAfter) {
			break
		}
		delete(st.Threads, t.id)
		st.Settled = max(st.Settled, t.u)
	}
}

var (
	decoderOnce sync.Once
	decoder     *zstd.Decoder
	decoderErr  error
)

// decode returns a row's JSON: data as it is for data_type "json", decompressed for "zstd".
func decode(dataType string, data []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(dataType)) {
	case "json", "":
		return data, nil
	case "zstd":
		decoderOnce.Do(func() {
			decoder, decoderErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxThreadBytes))
		})
		if decoderErr != nil {
			return nil, decoderErr
		}
		return decoder.DecodeAll(data, nil)
	}
	return nil, fmt.Errorf("data_type %q", transcript.CutBytes(dataType, 32))
}

// updKey is what the state keeps of an updated_at: itself, or a hash of one that is not short
// UTF-8 text.
func updKey(s string) string {
	if len(s) <= 64 && utf8.ValidString(s) && !strings.HasPrefix(s, "#") {
		return s
	}
	return "#" + shortKey(s)
}

// rootOf is the thread a thread belongs to: itself, or its parents' root (a subagent's thread).
func rootOf(id string, parents map[string]string) string {
	root := id
	for range 16 {
		parent := strings.TrimSpace(parents[root])
		if parent == "" || parent == root {
			break
		}
		root = parent
	}
	return root
}
