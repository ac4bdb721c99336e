package zed

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"sync"
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
	K  string `json:"k,omitempty"`  // usage reported
	Ti string `json:"ti,omitempty"` // title reported
	M  string `json:"m,omitempty"`  // model reported
	S  bool   `json:"s,omitempty"`  // started event emitted
}

// dbState is a parser's State: per thread id, what was reported.
type dbState struct {
	Threads map[string]threadState `json:"threads,omitempty"`
}

func (s dbState) clone() dbState {
	s.Threads = maps.Clone(s.Threads)
	return s
}

// DBParser reads one threads.db (a transcript.Poller).
type DBParser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     dbState
	stats  transcript.Stats
}

var (
	_ transcript.Parser = (*DBParser)(nil)
	_ transcript.Poller = (*DBParser)(nil)
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
// successful pass.
func (p *DBParser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, p.st.clone, read)
	if err != nil {
		return nil, err
	}
	evs := p.events(got, &work)
	p.st = work
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// row is one thread row a pass read.
type row struct {
	id, parent, updated, created, summary, dataType, folders string
	data                                                     []byte
}

// pass is what one pass read: every thread's parent, and the rows that changed, oldest first.
type pass struct {
	parents map[string]string
	rows    []row
}

func col(cols map[string]bool, name string) string {
	if !cols[name] {
		return "''"
	}
	return "CAST(COALESCE(" + name + ", '') AS TEXT)"
}

// read lists the threads and reads the changed ones in one read transaction; st loses the
// threads that are gone.
func read(ctx context.Context, db *sql.DB, st *dbState) (*pass, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	cols, err := sqliteread.Columns(ctx, tx, "threads")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no threads table: not a Zed threads database, or not created yet")
	}
	q, err := tx.QueryContext(ctx, `SELECT CAST(id AS TEXT), `+col(cols, "updated_at")+`, `+col(cols, "parent_id")+` FROM threads`)
	if err != nil {
		return nil, err
	}
	got := &pass{parents: map[string]string{}}
	var changed []string
	updated := map[string]string{}
	for q.Next() {
		var id, upd, parent string
		if err := q.Scan(&id, &upd, &parent); err != nil {
			q.Close()
			return nil, err
		}
		got.parents[id] = parent
		updated[id] = upd
		if ts, ok := st.Threads[id]; !ok || ts.U != updKey(upd) {
			changed = append(changed, id)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	for id := range st.Threads {
		if _, ok := got.parents[id]; !ok {
			delete(st.Threads, id)
		}
	}
	stmt, err := tx.PrepareContext(ctx, `SELECT `+col(cols, "summary")+`, `+col(cols, "data_type")+`, data, `+
		col(cols, "created_at")+`, `+col(cols, "folder_paths")+` FROM threads WHERE id = ?`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	for _, id := range changed {
		r := row{id: id, parent: got.parents[id], updated: updated[id]}
		var data any
		err := stmt.QueryRowContext(ctx, id).Scan(&r.summary, &r.dataType, &data, &r.created, &r.folders)
		if err == sql.ErrNoRows {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		switch d := data.(type) {
		case []byte:
			r.data = d
		case string:
			r.data = []byte(d)
		}
		got.rows = append(got.rows, r)
	}
	sort.SliceStable(got.rows, func(i, j int) bool {
		a, b := got.rows[i], got.rows[j]
		ca, cb := firstNonEmpty(a.created, a.updated), firstNonEmpty(b.created, b.updated)
		if ca != cb {
			return ca < cb
		}
		return a.id < b.id
	})
	return got, tx.Commit()
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

// events turns one pass's rows into events, thread by thread.
func (p *DBParser) events(got *pass, st *dbState) []event.Event {
	var out []event.Event
	for i := range got.rows {
		r := &got.rows[i]
		p.stats.Lines++
		prev := st.Threads[r.id]
		evs, next, err := p.thread(r, rootOf(r.id, got.parents), prev)
		if err != nil {
			p.stats.Malformed++
			prev.U = updKey(r.updated) // read again only when it changes
			next = prev
		}
		if st.Threads == nil {
			st.Threads = map[string]threadState{}
		}
		st.Threads[r.id] = next
		out = append(out, evs...)
	}
	return out
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
