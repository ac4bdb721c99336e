package forge

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// call is a tool call reported without its result: its id and the time it was given.
type call struct {
	ID string `json:"id"`
	T  int64  `json:"t"`
}

// PendingID keys a call in the state's list of calls waiting for their results.
func (c call) PendingID() string { return c.ID }

// convState is what the parser reported of one conversation (see the package doc).
type convState struct {
	U       string                   `json:"u"`            // updated_at of the row read
	N       int                      `json:"n,omitempty"`  // messages reported
	LK      string                   `json:"lk,omitempty"` // key of the last message reported
	S       bool                     `json:"s,omitempty"`  // started event emitted
	Ti      string                   `json:"ti,omitempty"` // title reported (a hash)
	M       []string                 `json:"m,omitempty"`  // models reported
	Pending transcript.Pending[call] `json:"p,omitempty"`
}

// dbState is a parser's State: per conversation id, what was reported.
type dbState struct {
	Convs map[string]convState `json:"convs,omitempty"`
}

func (s dbState) clone() dbState {
	s.Convs = maps.Clone(s.Convs)
	return s
}

// DBParser reads one .forge.db (a transcript.Poller).
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

// Stats counts the conversations read (Lines) and those that did not decode (Malformed).
func (p *DBParser) Stats() transcript.Stats { return p.stats.Clone() }

// pass is what one pass produced, committed only when it succeeds.
type pass struct {
	evs   []event.Event
	stats transcript.Stats
}

// Poll reads the conversations changed since the last pass and commits the state only after a
// successful pass.
func (p *DBParser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, p.st.clone, p.read)
	if err != nil {
		return nil, err
	}
	p.st = work
	p.stats.Lines += got.stats.Lines
	p.stats.Malformed += got.stats.Malformed
	for k, n := range got.stats.Unknown {
		if p.stats.Unknown == nil {
			p.stats.Unknown = map[string]int64{}
		}
		p.stats.Unknown[k] += n
	}
	p.stats.Events += int64(len(got.evs))
	return got.evs, nil
}

// read lists the conversations and reads the changed ones, one row at a time, in one read
// transaction; st loses the conversations that are gone.
func (p *DBParser) read(ctx context.Context, db *sql.DB, st *dbState) (*pass, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	cols, err := sqliteread.Columns(ctx, tx, "conversations")
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("no conversations table: not a Forge database, or not created yet")
	}
	col := func(name string) string { return sqliteread.Col(cols, name, "TEXT", "''") }
	q, err := tx.QueryContext(ctx, `SELECT CAST(conversation_id AS TEXT), `+col("updated_at")+`, `+col("created_at")+
		` FROM conversations WHERE context IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	type listed struct{ id, updated, created string }
	var changed []listed
	present := map[string]bool{}
	for q.Next() {
		var l listed
		if err := q.Scan(&l.id, &l.updated, &l.created); err != nil {
			q.Close()
			return nil, err
		}
		present[l.id] = true
		if cs, ok := st.Convs[l.id]; !ok || cs.U != updKey(transcript.FirstNonEmpty(l.updated, l.created)) {
			changed = append(changed, l)
		}
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	for id := range st.Convs {
		if !present[id] {
			delete(st.Convs, id)
		}
	}
	sort.SliceStable(changed, func(i, j int) bool {
		a, b := transcript.FirstNonEmpty(changed[i].created, changed[i].updated), transcript.FirstNonEmpty(changed[j].created, changed[j].updated)
		if a != b {
			return a < b
		}
		return changed[i].id < changed[j].id
	})
	stmt, err := tx.PrepareContext(ctx, `SELECT `+col("title")+`, CAST(context AS TEXT), `+col("created_at")+`, `+
		col("updated_at")+` FROM conversations WHERE conversation_id = ?`)
	if err != nil {
		return nil, err
	}
	defer stmt.Close()
	got := &pass{}
	for _, l := range changed {
		var r row
		r.id = l.id
		err := stmt.QueryRowContext(ctx, l.id).Scan(&r.title, &r.context, &r.created, &r.updated)
		if err == sql.ErrNoRows {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		got.stats.Lines++
		if st.Convs == nil {
			st.Convs = map[string]convState{}
		}
		prev := st.Convs[r.id]
		evs, next, err := p.conversation(&r, prev, &got.stats)
		if err != nil {
			got.stats.Malformed++
			next = prev
		}
		next.U = updKey(transcript.FirstNonEmpty(r.updated, r.created))
		st.Convs[r.id] = next
		got.evs = append(got.evs, evs...)
	}
	return got, tx.Commit()
}

// row is one conversation a pass read.
type row struct {
	id, title, context, created, updated string
}

// updKey is what the state keeps of an updated_at: itself, or a hash of one that is not short
// UTF-8 text.
func updKey(s string) string {
	if len(s) <= 64 && utf8.ValidString(s) && !strings.HasPrefix(s, "#") {
		return s
	}
	return "#" + transcript.TextHash(s)
}

// parseTime reads Forge's timestamps: "YYYY-MM-DD HH:MM:SS[.ffffff]" in UTC (Diesel's
// NaiveDateTime), or RFC 3339.
func parseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, ok := transcript.ParseTime(s); ok {
		return t, true
	}
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil && t.Year() > 1970 && t.Year() < 2262 {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
