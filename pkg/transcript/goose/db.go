package goose

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// dbState is a database parser's State: the watermark (see the package doc).
type dbState struct {
	// Msg is the largest messages.id read.
	Msg int64 `json:"msg"`
	// Sessions holds, per session reported, the fingerprints of its title and figures
	// ("title:usage"); a session absent has not been reported yet.
	Sessions map[string]string `json:"sessions,omitempty"`
}

func (s dbState) clone() dbState {
	s.Sessions = maps.Clone(s.Sessions)
	return s
}

// DBParser reads one sessions.db (a transcript.Poller).
type DBParser struct {
	reader
	src transcript.Source
	st  dbState
}

var (
	_ transcript.Parser = (*DBParser)(nil)
	_ transcript.Poller = (*DBParser)(nil)
)

func newDBParser(a *Adapter, src transcript.Source, raw []byte) *DBParser {
	p := &DBParser{reader: newReader(a, src.Path), src: src}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &p.st) // a damaged state costs a re-read, never data
	}
	return p
}

// Record refuses lines: a database is read by Poll.
func (p *DBParser) Record(off int64, line []byte) ([]event.Event, error) {
	p.stats.Malformed++
	return nil, transcript.Malformed(Client, "%s is a database, read by Poll", p.src.Path)
}

// State returns the watermark as JSON.
func (p *DBParser) State() []byte { return transcript.MarshalState(p.st) }

// Stats counts the rows read.
func (p *DBParser) Stats() transcript.Stats { return p.stats.Clone() }

// Poll reads the rows added since the watermark and the sessions whose title or figures changed,
// and commits the watermark only after a successful pass.
func (p *DBParser) Poll(ctx context.Context) ([]event.Event, error) {
	work, got, err := sqliteread.Pass(ctx, p.src.Path, p.st.clone, p.read)
	if err != nil {
		return nil, err
	}
	p.calls = map[string]callInfo{}
	evs := p.events(got, &work)
	p.st = work
	p.stats.Events += int64(len(evs))
	return evs, nil
}

// rows is what one pass read.
type rows struct {
	sessions []sessionRow
	messages []msgRow
}

type sessionRow struct {
	id, cwd, name, typ, created, updated, provider, modelConfig string
	userSetName                                                 bool
	fig                                                         figures
}

type msgRow struct {
	rowID               int64
	messageID, session  string
	role, content, meta string
	created             int64
}

// columns lists the columns of a table, so that columns later migrations added are read only
// where they exist.
func columns(ctx context.Context, tx *sql.Tx, table string) (map[string]bool, error) {
	out, err := sqliteread.Columns(ctx, tx, table)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no %s table: not a goose session database, or not created yet", table)
	}
	return out, err
}

// read reads the sessions and the messages past the watermark in one read transaction.
func (p *DBParser) read(ctx context.Context, db *sql.DB, st *dbState) (*rows, error) {
	col := sqliteread.Col
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	sc, err := columns(ctx, tx, "sessions")
	if err != nil {
		return nil, err
	}
	mc, err := columns(ctx, tx, "messages")
	if err != nil {
		return nil, err
	}
	name := col(sc, "description", "TEXT", "''")
	if sc["name"] {
		name = fmt.Sprintf("CASE WHEN COALESCE(name, '') != '' THEN CAST(name AS TEXT) ELSE %s END", name)
	}
	q, err := tx.QueryContext(ctx, `SELECT CAST(id AS TEXT), `+col(sc, "working_dir", "TEXT", "''")+`, `+name+`, `+
		col(sc, "user_set_name", "INTEGER", "0")+`, `+col(sc, "session_type", "TEXT", "''")+`, `+
		col(sc, "created_at", "TEXT", "''")+`, `+col(sc, "updated_at", "TEXT", "''")+`, `+
		col(sc, "accumulated_input_tokens", "INTEGER", "0")+`, `+col(sc, "accumulated_output_tokens", "INTEGER", "0")+`, `+
		col(sc, "input_tokens", "INTEGER", "0")+`, `+col(sc, "output_tokens", "INTEGER", "0")+`, `+
		col(sc, "accumulated_cost", "REAL", "0")+`, `+col(sc, "provider_name", "TEXT", "''")+`, `+
		col(sc, "model_config_json", "TEXT", "''")+`
	FROM sessions ORDER BY 6, 1`)
	if err != nil {
		return nil, err
	}
	r := &rows{}
	for q.Next() {
		var s sessionRow
		var userSet int64
		if err := q.Scan(&s.id, &s.cwd, &s.name, &userSet, &s.typ, &s.created, &s.updated, &s.fig.accIn, &s.fig.accOut,
			&s.fig.in, &s.fig.out, &s.fig.cost, &s.provider, &s.modelConfig); err != nil {
			q.Close()
			return nil, err
		}
		s.userSetName = userSet != 0
		r.sessions = append(r.sessions, s)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	msgID := "'msg_' || session_id || '_' || id" // migration 7 gives rows from before it this id
	if mc["message_id"] {
		msgID = "COALESCE(CAST(message_id AS TEXT), " + msgID + ")"
	}
	q, err = tx.QueryContext(ctx, `SELECT id, `+msgID+`, CAST(session_id AS TEXT), `+col(mc, "role", "TEXT", "''")+`, `+
		col(mc, "content_json", "TEXT", "''")+`, `+col(mc, "created_timestamp", "INTEGER", "0")+`, `+
		col(mc, "metadata_json", "TEXT", "''")+`
	FROM messages WHERE id > ? ORDER BY id`, st.Msg)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var m msgRow
		if err := q.Scan(&m.rowID, &m.messageID, &m.session, &m.role, &m.content, &m.created, &m.meta); err != nil {
			q.Close()
			return nil, err
		}
		r.messages = append(r.messages, m)
		st.Msg = max(st.Msg, m.rowID)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	return r, tx.Commit()
}

// timeLayouts are the forms goose's TIMESTAMP columns take: SQLite's CURRENT_TIMESTAMP and
// datetime('now') (UTC), and sqlx's encoding of a chrono DateTime<Utc>.
var timeLayouts = []string{"2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"}

// parseTime reads a TIMESTAMP column; the zero time when it does not parse or is out of range.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			if t.Year() <= 1970 || t.Year() >= 2262 {
				return time.Time{}
			}
			return t.UTC()
		}
	}
	return time.Time{}
}

// modelName reads model_config_json's model name.
func modelName(raw string) string {
	var mc struct {
		ModelName  string `json:"model_name"`
		ModelName2 string `json:"modelName"`
	}
	if strings.TrimSpace(raw) == "" || json.Unmarshal([]byte(raw), &mc) != nil {
		return ""
	}
	if mc.ModelName != "" {
		return transcript.CutRunes(strings.TrimSpace(mc.ModelName), 200)
	}
	return transcript.CutRunes(strings.TrimSpace(mc.ModelName2), 200)
}

// events turns one pass's rows into events: the sessions first, then the messages in row order.
func (p *DBParser) events(r *rows, st *dbState) []event.Event {
	var out []event.Event
	byID := map[string]*session{}
	seen := map[string]bool{}
	for _, row := range r.sessions {
		s := &session{id: row.id, cwd: row.cwd, model: modelName(row.modelConfig), created: parseTime(row.created)}
		if s.created.IsZero() {
			s.created = parseTime(row.updated)
		}
		byID[row.id] = s
		seen[row.id] = true
		if s.created.IsZero() {
			continue // no time to report it at; its messages still carry theirs
		}
		prev, reported := st.Sessions[row.id]
		prevTitle, prevUsage, _ := strings.Cut(prev, ":")
		if !reported {
			out = append(out, p.startedEvent(s))
		}
		titleKey := prevTitle
		updated := parseTime(row.updated)
		if updated.IsZero() {
			updated = s.created
		}
		if ev, ok := p.titleEvent(s, row.name, row.userSetName, updated); ok {
			titleKey = shortKey(ev.Session.Title)
			if titleKey != prevTitle {
				out = append(out, ev)
			}
		}
		usageKey := row.fig.key()
		if usageKey != prevUsage {
			if ev, ok := p.usageEvent(s, row.fig); ok {
				out = append(out, ev)
			}
		}
		if st.Sessions == nil {
			st.Sessions = map[string]string{}
		}
		st.Sessions[row.id] = titleKey + ":" + usageKey
	}
	for id := range st.Sessions {
		if !seen[id] {
			delete(st.Sessions, id)
		}
	}
	for i := range r.messages {
		m := &r.messages[i]
		p.stats.Lines++
		s := byID[m.session]
		if s == nil {
			s = &session{id: m.session}
		}
		evs, err := p.messageEvents(s, &msg{role: m.role, created: m.created, content: []byte(m.content), userVisible: visible([]byte(m.meta)),
			place: m.rowID})
		if err != nil {
			p.stats.Malformed++
			continue
		}
		out = append(out, evs...)
	}
	return out
}
