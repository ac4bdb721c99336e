package hermes

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/pricing"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// maxContent bounds the bytes of a row's content (and of a tool result's output field) a pass
// reads: more than any event keeps.
const maxContent = 64 << 10

// maxToolCalls bounds the bytes of a row's tool_calls a pass reads; a longer list (a write_file
// call with a huge file in its arguments) is cut and its calls are not read.
const maxToolCalls = 4 << 20

// dbState is a parser's State: the watermark (see the package doc).
type dbState struct {
	// Msg is the largest messages.id read.
	Msg int64 `json:"msg"`
	// Sessions holds, per recently active session reported (at most maxRecent), the
	// fingerprints of its title and figures and its last activity in Unix seconds
	// ("title:usage:activity").
	Sessions map[string]string `json:"sessions,omitempty"`
	// Settled is the largest started_at of the sessions dropped from Sessions: a session absent
	// from Sessions that started at or before it was reported by an earlier pass (it is settled);
	// one that started after it is new.
	Settled float64 `json:"settled,omitempty"`
	// Sums holds, per bucket of the settled sessions (bucketOf), the XOR of their fingerprints
	// (settledSum) as last reported: a bucket whose sum differs holds a settled session that
	// changed, and its sessions are reported again.
	Sums []uint64 `json:"sums,omitempty"`
}

func (s dbState) clone() dbState {
	s.Sessions = maps.Clone(s.Sessions)
	s.Sums = slices.Clone(s.Sums)
	return s
}

// Parser reads one state.db (a transcript.Poller).
type Parser struct {
	src    transcript.Source
	prices func() *pricing.Table
	st     dbState
	stats  transcript.Stats
	roots  map[string]string   // project.Root by directory
	calls  map[string]callInfo // tool calls read in this pass, by session and call id
}

var (
	_ transcript.Parser = (*Parser)(nil)
	_ transcript.Poller = (*Parser)(nil)
)

func newParser(src transcript.Source, raw []byte, prices func() *pricing.Table) *Parser {
	p := &Parser{src: src, prices: prices, roots: map[string]string{}, calls: map[string]callInfo{}}
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

// Poll reads the rows added since the watermark and the sessions whose title or figures changed,
// and commits the watermark only after a successful pass.
func (p *Parser) Poll(ctx context.Context) ([]event.Event, error) {
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
	usage    []usageRow
	messages []msgRow
}

type sessionRow struct {
	id, model, parent, title, titleSource, cwd, branch string
	started                                            float64
	active                                             float64 // the last activity Hermes noted (last_activity_at, ended_at), or 0
	fig                                                figures
}

type usageRow struct {
	session, model, provider, baseURL, mode, task string
	firstSeen, lastSeen                           float64
	fig                                           figures
}

type msgRow struct {
	rowID                                         int64
	session, role, content, callID, calls, tool   string
	reasoning, displayKind                        string
	ts                                            float64
	summary                                       bool
	exitCode, errField, successField, outputField string // a tool result's JSON fields, read by SQLite
}

// read reads the sessions, their per-model usage and the messages past the watermark in one read
// transaction.
func (p *Parser) read(ctx context.Context, db *sql.DB, st *dbState) (*rows, error) {
	col := sqliteread.Col
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	sc, err := sqliteread.Columns(ctx, tx, "sessions")
	if err != nil {
		return nil, err
	}
	mc, err := sqliteread.Columns(ctx, tx, "messages")
	if err != nil {
		return nil, err
	}
	if len(sc) == 0 || len(mc) == 0 {
		return nil, fmt.Errorf("no sessions or messages table: not a Hermes state.db, or not created yet")
	}
	uc, err := sqliteread.Columns(ctx, tx, "session_model_usage")
	if err != nil {
		return nil, err
	}
	active := "0"
	for _, c := range []string{"last_activity_at", "ended_at"} {
		if sc[c] {
			active += ", CAST(COALESCE(" + c + ", 0) AS REAL)"
		}
	}
	r := &rows{}
	q, err := tx.QueryContext(ctx, `SELECT CAST(id AS TEXT), `+col(sc, "model", "TEXT", "''")+`, `+
		col(sc, "parent_session_id", "TEXT", "''")+`, `+col(sc, "title", "TEXT", "''")+`, `+col(sc, "title_source", "TEXT", "''")+`, `+
		col(sc, "cwd", "TEXT", "''")+`, `+col(sc, "git_branch", "TEXT", "''")+`, `+col(sc, "started_at", "REAL", "0")+`, `+
		col(sc, "input_tokens", "INTEGER", "0")+`, `+col(sc, "output_tokens", "INTEGER", "0")+`, `+
		col(sc, "cache_read_tokens", "INTEGER", "0")+`, `+col(sc, "cache_write_tokens", "INTEGER", "0")+`, `+
		col(sc, "reasoning_tokens", "INTEGER", "0")+`, `+col(sc, "estimated_cost_usd", "REAL", "0")+`, `+
		col(sc, "actual_cost_usd", "REAL", "0")+`, MAX(`+active+`, 0)
	FROM sessions ORDER BY 8, 1`)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var s sessionRow
		if err := q.Scan(&s.id, &s.model, &s.parent, &s.title, &s.titleSource, &s.cwd, &s.branch, &s.started,
			&s.fig.in, &s.fig.out, &s.fig.cacheRead, &s.fig.cacheWrite, &s.fig.reasoning, &s.fig.est, &s.fig.actual, &s.active); err != nil {
			q.Close()
			return nil, err
		}
		r.sessions = append(r.sessions, s)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	if len(uc) > 0 {
		q, err = tx.QueryContext(ctx, `SELECT CAST(session_id AS TEXT), `+col(uc, "model", "TEXT", "''")+`, `+
			col(uc, "billing_provider", "TEXT", "''")+`, `+col(uc, "billing_base_url", "TEXT", "''")+`, `+
			col(uc, "billing_mode", "TEXT", "''")+`, `+col(uc, "task", "TEXT", "''")+`, `+col(uc, "first_seen", "REAL", "0")+`, `+
			col(uc, "last_seen", "REAL", "0")+`, `+
			col(uc, "input_tokens", "INTEGER", "0")+`, `+col(uc, "output_tokens", "INTEGER", "0")+`, `+
			col(uc, "cache_read_tokens", "INTEGER", "0")+`, `+col(uc, "cache_write_tokens", "INTEGER", "0")+`, `+
			col(uc, "reasoning_tokens", "INTEGER", "0")+`, `+col(uc, "estimated_cost_usd", "REAL", "0")+`, `+
			col(uc, "actual_cost_usd", "REAL", "0")+`
		FROM session_model_usage ORDER BY 1, 2, 3, 4, 5, 6`)
		if err != nil {
			return nil, err
		}
		for q.Next() {
			var u usageRow
			if err := q.Scan(&u.session, &u.model, &u.provider, &u.baseURL, &u.mode, &u.task, &u.firstSeen, &u.lastSeen,
				&u.fig.in, &u.fig.out, &u.fig.cacheRead, &u.fig.cacheWrite, &u.fig.reasoning, &u.fig.est, &u.fig.actual); err != nil {
				q.Close()
				return nil, err
			}
			r.usage = append(r.usage, u)
		}
		if err := sqliteread.CloseRows(q); err != nil {
			return nil, err
		}
	}
	reasoning := "''"
	switch {
	case mc["reasoning"] && mc["reasoning_content"]:
		reasoning = "CAST(COALESCE(NULLIF(reasoning, ''), reasoning_content, '') AS TEXT)"
	case mc["reasoning"]:
		reasoning = col(mc, "reasoning", "TEXT", "''")
	case mc["reasoning_content"]:
		reasoning = col(mc, "reasoning_content", "TEXT", "''")
	}
	// A tool result's fields are read by SQLite, so that a result longer than what is read of its
	// content still gives its outcome.
	field := func(path string) string {
		return `COALESCE(CASE WHEN role = 'tool' AND json_valid(content) AND json_type(content) = 'object'
			THEN substr(CAST(json_extract(content, '` + path + `') AS TEXT), 1, ` + strconv.Itoa(maxContent) + `) END, '')`
	}
	output := `COALESCE(CASE WHEN role = 'tool' AND json_valid(content) AND json_type(content) = 'object'
		THEN substr(CAST(COALESCE(json_extract(content, '$.output'), json_extract(content, '$.content')) AS TEXT), 1, ` +
		strconv.Itoa(maxContent) + `) END, '')`
	q, err = tx.QueryContext(ctx, `SELECT id, CAST(COALESCE(session_id, '') AS TEXT), `+col(mc, "role", "TEXT", "''")+`,
		substr(`+col(mc, "content", "TEXT", "''")+`, 1, `+strconv.Itoa(maxContent)+`), `+col(mc, "tool_call_id", "TEXT", "''")+`,
		substr(`+col(mc, "tool_calls", "TEXT", "''")+`, 1, `+strconv.Itoa(maxToolCalls+1)+`), `+col(mc, "tool_name", "TEXT", "''")+`,
		substr(`+reasoning+`, 1, `+strconv.Itoa(maxContent)+`), `+col(mc, "display_kind", "TEXT", "''")+`, `+
		col(mc, "timestamp", "REAL", "0")+`, `+col(mc, "_compressed_summary", "INTEGER", "0")+`, `+
		field("$.exit_code")+`, `+field("$.error")+`, `+field("$.success")+`, `+output+`
	FROM messages WHERE id > ? ORDER BY id`, st.Msg)
	if err != nil {
		return nil, err
	}
	for q.Next() {
		var m msgRow
		var summary int64
		if err := q.Scan(&m.rowID, &m.session, &m.role, &m.content, &m.callID, &m.calls, &m.tool, &m.reasoning,
			&m.displayKind, &m.ts, &summary, &m.exitCode, &m.errField, &m.successField, &m.outputField); err != nil {
			q.Close()
			return nil, err
		}
		m.summary = summary != 0
		r.messages = append(r.messages, m)
		st.Msg = max(st.Msg, m.rowID)
	}
	if err := sqliteread.CloseRows(q); err != nil {
		return nil, err
	}
	return r, tx.Commit()
}
