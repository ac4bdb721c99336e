package zcode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/project"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// Component is the source stamped on every event.
const Component = "observer-watch"

const (
	maxTarget = 500
	batch     = 2000 // model_usage rows a query reads at a time
	maxDepth  = 16   // parent_id links followed to a root session
	// stale is how long before the newest call a call still not final is taken as abandoned.
	stale = 6 * time.Hour
)

// state is the parser's State: the model_usage watermark.
type state struct {
	Rowid int64 `json:"rowid"`
}

// Parser reads one database (a transcript.Poller).
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     state
	stats  transcript.Stats
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(src transcript.Source, raw []byte, prices func() *pricing.Table) *Parser {
	p := &Parser{src: src, prices: prices}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *Parser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns the watermark as JSON.
func (p *Parser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *Parser) Stats() transcript.Stats { return p.stats.Clone() }

type usageRow struct {
	rowid                        int64
	session, turn, model, status string
	input, output, reasoning     int64
	cacheRead, cacheWrite        int64
	started, completed           int64
}

type sessionRow struct {
	id, parent, dir, title string
	created                int64
}

// rows is what one pass read.
type rows struct {
	usage    []usageRow
	sessions map[string]sessionRow
}

// Poll reads the model_usage rows after the watermark and commits the new one only after a
// successful pass.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, func() state { return p.st }, p.read)
	if err != nil {
		return nil, err
	}
	evs := p.events(got)
	p.st = work
	p.stats.Lines += int64(len(got.usage))
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// read reads, in one read transaction, the model_usage rows after the watermark and the sessions.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *state) (*rows, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ucols, err := sqliteread.Columns(ctx, tx, "model_usage")
	if err != nil {
		return nil, err
	}
	for _, c := range []string{"session_id", "model_id", "status", "input_tokens", "output_tokens", "started_at"} {
		if !ucols[c] {
			return nil, fmt.Errorf("model_usage has no %s column: not a ZCode database, or a schema this reader does not know", c)
		}
	}
	r := &rows{sessions: map[string]sessionRow{}}
	var newest int64
	if err := tx.QueryRowContext(ctx, `SELECT CAST(COALESCE(MAX(started_at), 0) AS INTEGER) FROM model_usage`).Scan(&newest); err != nil {
		return nil, err
	}
	q := `SELECT rowid, COALESCE(session_id, ''), ` + sqliteread.Col(ucols, "turn_id", "TEXT", "''") + `,
	  COALESCE(model_id, ''), COALESCE(status, ''),
	  CAST(COALESCE(input_tokens, 0) AS INTEGER), CAST(COALESCE(output_tokens, 0) AS INTEGER),
	  ` + sqliteread.Col(ucols, "reasoning_tokens", "INTEGER", "0") + `,
	  ` + sqliteread.Col(ucols, "cache_read_input_tokens", "INTEGER", "0") + `,
	  ` + sqliteread.Col(ucols, "cache_creation_input_tokens", "INTEGER", "0") + `,
	  CAST(COALESCE(started_at, 0) AS INTEGER), ` + sqliteread.Col(ucols, "completed_at", "INTEGER", "0") + `
	FROM model_usage WHERE rowid > ? ORDER BY rowid LIMIT ?`
	after, held := st.Rowid, false
	for {
		qr, err := tx.QueryContext(ctx, q, after, batch)
		if err != nil {
			return nil, err
		}
		n := 0
		for qr.Next() {
			var u usageRow
			if err := qr.Scan(&u.rowid, &u.session, &u.turn, &u.model, &u.status, &u.input, &u.output, &u.reasoning,
				&u.cacheRead, &u.cacheWrite, &u.started, &u.completed); err != nil {
				qr.Close()
				return nil, err
			}
			n++
			after = u.rowid
			r.usage = append(r.usage, u)
			// The watermark moves past a row only while every row before it is final.
			if !held && (final(u.status) || newest-u.started > stale.Milliseconds()) {
				st.Rowid = u.rowid
			} else {
				held = true
			}
		}
		if err := sqliteread.CloseRows(qr); err != nil {
			return nil, err
		}
		if n < batch {
			break
		}
	}
	scols, err := sqliteread.Columns(ctx, tx, "session")
	if err != nil {
		return nil, err
	}
	if scols["id"] && len(r.usage) > 0 {
		qr, err := tx.QueryContext(ctx, `SELECT CAST(id AS TEXT), `+sqliteread.Col(scols, "parent_id", "TEXT", "''")+`,
		  `+sqliteread.Col(scols, "directory", "TEXT", "''")+`,
		  `+sqliteread.Col(scols, "title", "TEXT", "''")+`,
		  `+sqliteread.Opt(scols, "time_created", "COALESCE(time_created, '')", "''")+` FROM session`)
		if err != nil {
			return nil, err
		}
		for qr.Next() {
			var s sessionRow
			var created any
			if err := qr.Scan(&s.id, &s.parent, &s.dir, &s.title, &created); err != nil {
				qr.Close()
				return nil, err
			}
			s.created = unixMs(created)
			r.sessions[s.id] = s
		}
		if err := sqliteread.CloseRows(qr); err != nil {
			return nil, err
		}
	}
	return r, tx.Commit()
}

// final reports whether a call's status can no longer change.
func final(status string) bool {
	switch strings.ToLower(status) {
	case "completed", "complete", "success", "error", "failed", "cancelled", "canceled", "aborted":
		return true
	}
	return false
}

// unixMs reads a time column: unix milliseconds (or seconds, or nanoseconds) as a number or a
// numeric string, or an RFC 3339 string; anything else is 0.
func unixMs(v any) int64 {
	var n int64
	switch x := v.(type) {
	case int64:
		n = x
	case float64:
		n = int64(x)
	case []byte:
		return unixMs(string(x))
	case string:
		if t, ok := transcript.ParseTime(strings.TrimSpace(x)); ok {
			return t.UnixMilli()
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0
		}
		n = int64(f)
	default:
		return 0
	}
	switch {
	case n >= 1e17:
		return n / 1e6
	case n >= 1e11:
		return n
	case n >= 1e9:
		return n * 1000
	}
	return 0
}

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// owner is the session a row's events belong to: the root of its parent chain, and the subagent
// (the row's own session) when that is not the root.
type owner struct {
	session, agent string
	root           sessionRow
}

func ownerOf(sessions map[string]sessionRow, id string) owner {
	cur, ok := sessions[id]
	if !ok {
		return owner{session: id}
	}
	for range maxDepth {
		parent, ok := sessions[cur.parent]
		if cur.parent == "" || cur.parent == cur.id || !ok {
			break
		}
		cur = parent
	}
	if cur.parent != "" && cur.id == id { // a parent this database does not hold
		return owner{session: cur.parent, agent: id, root: sessionRow{id: cur.parent, dir: cur.dir}}
	}
	o := owner{session: cur.id, root: cur}
	if cur.id != id {
		o.agent = id
		if o.root.dir == "" {
			o.root.dir = sessions[id].dir
		}
	}
	return o
}

// events turns a pass's rows into events: per session a start, a title and one event per model,
// and a token_usage per completed call.
func (p *Parser) events(r *rows) []event.Event {
	var evs []event.Event
	done := map[string]bool{}
	for _, u := range r.usage {
		if !strings.EqualFold(u.status, "completed") || u.session == "" {
			continue
		}
		at := u.started
		if at <= 0 {
			at = u.completed
		}
		if unixMs(at) == 0 {
			continue
		}
		t := msTime(unixMs(at))
		o := ownerOf(r.sessions, u.session)
		dir := strings.TrimSpace(o.root.dir)
		proj := ""
		if filepath.IsAbs(dir) {
			proj = project.Root(filepath.Clean(dir))
		}
		if !done[o.session] {
			done[o.session] = true
			start := t
			if o.root.created > 0 {
				start = msTime(o.root.created)
			}
			ev := newEvent(o, proj, event.KindSession, event.ID(Client, string(event.KindSession), o.session, "started"), start)
			ev.Session = &event.Session{State: event.SessionStarted, Cwd: dir, StartedAt: start, TranscriptPath: p.src.Path}
			evs = append(evs, ev)
			if title := strings.TrimSpace(o.root.title); title != "" {
				ev := newEvent(o, proj, event.KindSession, event.ID(Client, string(event.KindSession), o.session, "title", title), start)
				ev.Session = &event.Session{Title: transcript.ClipTarget(title, maxTarget), TranscriptPath: p.src.Path}
				evs = append(evs, ev)
			}
		}
		model := strings.TrimSpace(u.model)
		if mk := o.session + "\x00" + model; model != "" && !done[mk] {
			done[mk] = true
			ev := newEvent(o, proj, event.KindSession, event.ID(Client, string(event.KindSession), o.session, "model\x00"+model), t)
			ev.Session = &event.Session{State: event.SessionActive, Cwd: dir, Model: model, TranscriptPath: p.src.Path}
			evs = append(evs, ev)
		}
		out := max(u.output, 0)
		tok := event.Tokens{Input: max(u.input, 0), Output: out, CacheRead: max(u.cacheRead, 0),
			CacheCreation: max(u.cacheWrite, 0), Reasoning: min(max(u.reasoning, 0), out)}
		tu := transcript.PricedUsage(p.prices(), model, u.turn, tok, 0, t)
		if tu == nil {
			continue
		}
		tu.AgentID = o.agent
		ev := newEvent(o, proj, event.KindTokenUsage, event.ID(Client, "usage", u.session, u.turn,
			strconv.FormatInt(u.started, 10), model, strconv.FormatInt(u.completed, 10)), t)
		ev.TokenUsage = tu
		evs = append(evs, ev)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	return evs
}

func newEvent(o owner, proj string, kind event.Kind, id string, t time.Time) event.Event {
	return event.Event{ID: id, Kind: kind, Time: t, Source: Component, Client: Client,
		SessionID: o.session, Project: proj, V: event.SchemaVersion}
}
