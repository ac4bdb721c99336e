package dash

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/observerhq/observer/internal/analysis"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Session is one row of the Sessions table.
type Session struct {
	Client          string `json:"client"`
	SessionID       string `json:"session_id"`
	Title           string `json:"title"` // the client's title, else the first prompt ("" when neither)
	Project         string `json:"project"`
	FirstSeen       int64  `json:"first_seen"` // ms
	LastSeen        int64  `json:"last_seen"`  // ms
	State           string `json:"state"`
	Model           string `json:"model,omitempty"`
	ParentSessionID string `json:"parent_session_id,omitempty"`
	Epoch           int64  `json:"epoch"`
	Events          int64  `json:"events"`
	TranscriptPath  string `json:"transcript_path,omitempty"`
	Actions         int64  `json:"actions"`
	Failures        int64  `json:"failures"`
	Tokens          int64  `json:"tokens"` // input + output + cache read + cache write
	// Paths are the capture paths that saw the session (store.Paths order: proxy, records,
	// hooks, otlp), all time.
	Paths []string `json:"paths"`
	Totals
}

const sessionCols = "client, session_id, project, first_seen, last_seen, state, model, parent_session_id, epoch, events, transcript_path, title"

func scanSession(sc interface{ Scan(...any) error }) (Session, error) {
	var s Session
	err := sc.Scan(&s.Client, &s.SessionID, &s.Project, &s.FirstSeen, &s.LastSeen, &s.State, &s.Model, &s.ParentSessionID, &s.Epoch, &s.Events, &s.TranscriptPath, &s.Title)
	s.Paths = []string{}
	return s, err
}

func sessionKey(client, id string) string { return client + "\x00" + id }

// sessions answers /api/sessions: the sessions seen in the window, newest first (sort=last_seen)
// or by their cost in the window (sort=cost), a page at a time; tokens and dollars are the
// window's, from query.Cost.
func (s *Server) sessions(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	page := q.intParam("page", 1, 1, maxOffset)
	limit := q.intParam("limit", 50, 1, maxPageSize)
	sort := q.str("sort")
	if sort == "" {
		sort = "last_seen"
	}
	if sort != "last_seen" && sort != "cost" {
		q.fail(badParam("sort", "want last_seen or cost, got %q", sort))
	}
	if (page-1)*limit > maxOffset {
		q.fail(badParam("page", "beyond the last %d rows", maxOffset))
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store    bool      `json:"store"`
		Sort     string    `json:"sort"`
		Page     int       `json:"page"`
		Limit    int       `json:"limit"`
		Total    int64     `json:"total"`
		Sessions []Session `json:"sessions"`
	}{filters: f, Sort: sort, Page: page, Limit: limit, Sessions: []Session{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	c := filterConds(f, "last_seen")
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sessions"+c.sql(), c.args...).Scan(&out.Total); err != nil {
		return nil, err
	}
	offset := (page - 1) * limit
	var list []Session
	costs := map[string]query.CostRow{}
	if sort == "last_seen" {
		// The page first, then the cost of its sessions only.
		args := append(c.args, sql.Named("limit", limit), sql.Named("offset", offset))
		if list, err = querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions"+c.sql()+" ORDER BY last_seen DESC, session_id LIMIT :limit OFFSET :offset", args...); err != nil {
			return nil, err
		}
		if len(list) > 0 {
			ids := make([]string, len(list))
			for i, s := range list {
				ids[i] = s.SessionID
			}
			rows, _, err := runCost(ctx, db, f, query.CostQuery{GroupBy: []string{"session", "client"}, Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client, SessionIDs: ids}})
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				costs[sessionKey(r.Client, r.SessionID)] = r
			}
		}
	} else {
		// By cost: the window's costs rank the sessions that had turns in it; the rest follow,
		// newest first.
		rows, _, err := costRows(ctx, db, f, "session", "client")
		if err != nil {
			return nil, err
		}
		var page []query.CostRow
		for _, r := range rows {
			costs[sessionKey(r.Client, r.SessionID)] = r
		}
		if offset < len(rows) {
			page = rows[offset:min(offset+limit, len(rows))]
		}
		if list, err = sessionsByKey(ctx, db, c, page); err != nil {
			return nil, err
		}
		if len(list) < limit {
			rest, err := querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions"+c.sql()+" ORDER BY last_seen DESC, session_id", c.args...)
			if err != nil {
				return nil, err
			}
			skip := max(offset-len(rows), 0)
			for _, s := range rest {
				if _, ok := costs[sessionKey(s.Client, s.SessionID)]; ok {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
				if len(list) == limit {
					break
				}
				list = append(list, s)
			}
		}
	}
	if err := addActionCounts(ctx, db, list); err != nil {
		return nil, err
	}
	if err := addPaths(ctx, db, list); err != nil {
		return nil, err
	}
	for i := range list {
		r := costs[sessionKey(list[i].Client, list[i].SessionID)]
		list[i].Totals = totalsOf(r)
		list[i].Tokens = r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheCreationTokens
	}
	out.Sessions = list
	return out, nil
}

// sessionsByKey reads the sessions of rows, in their order, among those c selects.
func sessionsByKey(ctx context.Context, db *sql.DB, c *conds, rows []query.CostRow) ([]Session, error) {
	if len(rows) == 0 {
		return []Session{}, nil
	}
	cc := &conds{parts: slices.Clone(c.parts), args: slices.Clone(c.args)}
	ph := make([]string, len(rows))
	for i, r := range rows {
		ph[i] = fmt.Sprintf(":id%d", i)
		cc.args = append(cc.args, sql.Named(fmt.Sprintf("id%d", i), r.SessionID))
	}
	cc.add("session_id IN (" + strings.Join(ph, ", ") + ")")
	found, err := querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions"+cc.sql(), cc.args...)
	if err != nil {
		return nil, err
	}
	byKey := map[string]Session{}
	for _, s := range found {
		byKey[sessionKey(s.Client, s.SessionID)] = s
	}
	out := make([]Session, 0, len(rows))
	for _, r := range rows {
		if s, ok := byKey[sessionKey(r.Client, r.SessionID)]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

func querySessions(ctx context.Context, db *sql.DB, stmt string, args ...any) ([]Session, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// addActionCounts fills the actions and failures of a page of sessions, from the hourly rollup's
// session index.
func addActionCounts(ctx context.Context, db *sql.DB, list []Session) error {
	if len(list) == 0 {
		return nil
	}
	idx := map[string]int{}
	var ph []string
	var args []any
	for i, s := range list {
		idx[sessionKey(s.Client, s.SessionID)] = i
		ph = append(ph, "?")
		args = append(args, s.SessionID)
	}
	table := "(SELECT client, session_id, 1 AS actions, coalesce(success = 0, 0) AS failures FROM actions)"
	if ok, err := hasRollups(ctx, db); err != nil {
		return err
	} else if ok {
		table = "actions_hourly"
	}
	rows, err := db.QueryContext(ctx, "SELECT client, session_id, sum(actions), sum(failures) FROM "+table+" WHERE session_id IN ("+strings.Join(ph, ",")+") GROUP BY client, session_id", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var client, id string
		var n, fails int64
		if err := rows.Scan(&client, &id, &n, &fails); err != nil {
			return err
		}
		if i, ok := idx[sessionKey(client, id)]; ok {
			list[i].Actions, list[i].Failures = n, fails
		}
	}
	return rows.Err()
}

// addPaths fills the capture paths of a page of sessions, in one query (store.SessionPaths).
func addPaths(ctx context.Context, db *sql.DB, list []Session) error {
	if len(list) == 0 {
		return nil
	}
	keys := make([]store.SessionKey, len(list))
	for i, s := range list {
		keys[i] = store.SessionKey{Client: s.Client, SessionID: s.SessionID}
	}
	paths, err := store.SessionPaths(ctx, db, keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		list[i].Paths = paths[k]
	}
	return nil
}

// resolveSession finds session id (of client, when given; else the most recent of that id).
func resolveSession(ctx context.Context, db *sql.DB, id, client string) (Session, error) {
	stmt := "SELECT " + sessionCols + " FROM sessions WHERE session_id = ?"
	args := []any{id}
	if client != "" {
		stmt += " AND client = ?"
		args = append(args, client)
	}
	s, err := scanSession(db.QueryRowContext(ctx, stmt+" ORDER BY last_seen DESC LIMIT 1", args...))
	if err == sql.ErrNoRows {
		if client != "" {
			return s, notFound("no session %q of client %q", id, client)
		}
		return s, notFound("no session %q", id)
	}
	if err != nil {
		return s, err
	}
	one := []Session{s}
	err = addPaths(ctx, db, one)
	return one[0], err
}

// countRow is a name with a count and its failures.
type countRow struct {
	Name      string `json:"name"`
	Count     int64  `json:"count"`
	Failures  int64  `json:"failures"`
	Successes int64  `json:"successes"`
}

func countBy(ctx context.Context, db *sql.DB, col string, s Session, limit int) ([]countRow, error) {
	return countWhere(ctx, db, col, "", s, limit)
}

// countTools counts the session's tool calls by tool: not the actions that name no tool, nor the
// lifecycle records that carry a label in tool (a compaction's compact_boundary).
func countTools(ctx context.Context, db *sql.DB, s Session, limit int) ([]countRow, error) {
	return countWhere(ctx, db, "tool", " AND tool != '' AND type NOT IN "+lifecycleTypes, s, limit)
}

// lifecycleTypes are the action types that are records of a session's life, not tool calls.
const lifecycleTypes = "('context_compacted', 'user_prompt', 'turn_aborted', 'api_error')"

func countWhere(ctx context.Context, db *sql.DB, col, cond string, s Session, limit int) ([]countRow, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+col+", count(*), coalesce(sum(success = 0), 0), coalesce(sum(success = 1), 0) FROM actions WHERE session_id = ? AND client = ?"+cond+" GROUP BY "+col+" ORDER BY count(*) DESC, "+col+" LIMIT ?", s.SessionID, s.Client, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []countRow{}
	for rows.Next() {
		var c countRow
		if err := rows.Scan(&c.Name, &c.Count, &c.Failures, &c.Successes); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// sessionDetail answers /api/sessions/{id}: the session, its action breakdown by type and tool,
// its tokens and dollars per model (all its turns, from query.Cost), its lifecycle and subagents,
// and the summaries of its ended epochs (memory.go).
func (s *Server) sessionDetail(ctx context.Context, q *reqParams) (any, error) {
	id, client := q.pathID(), q.name("client")
	if err := q.done(); err != nil {
		return nil, err
	}
	db, err := s.db(ctx)
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, notFound("no session %q: there is no store yet", id)
	}
	sess, err := resolveSession(ctx, db, id, client)
	if err != nil {
		return nil, err
	}
	out := struct {
		Session   Session       `json:"session"`
		Types     []countRow    `json:"action_types"`
		Tools     []countRow    `json:"tools"`
		Models    []ModelCost   `json:"models"`
		Total     Totals        `json:"total"`
		Buckets   Buckets       `json:"buckets"`
		Subagents int64         `json:"subagents"`
		Children  []Session     `json:"child_sessions"`
		Lifecycle []stateChange `json:"lifecycle"`
		// Analysis is the session's score and findings; null until the writer has analysed it.
		Analysis *analysis.Session `json:"analysis"`
		// Summaries are the accounts of the session's ended epochs, newest epoch first; the
		// current epoch of an active session has none yet.
		Summaries []SessionSummary `json:"summaries"`
	}{Session: sess, Models: []ModelCost{}}
	if out.Types, err = countBy(ctx, db, "type", sess, 100); err != nil {
		return nil, err
	}
	if out.Tools, err = countTools(ctx, db, sess, 100); err != nil {
		return nil, err
	}
	for _, t := range out.Types {
		out.Session.Actions += t.Count
		out.Session.Failures += t.Failures
	}
	// The session's turns of all time, per model.
	rep, err := query.Cost(ctx, db, query.CostQuery{GroupBy: []string{"model"}, Filter: query.Filter{SessionID: sess.SessionID, Client: sess.Client}})
	if err != nil {
		return nil, err
	}
	for _, r := range rep.Rows {
		r.SessionID, r.Client = sess.SessionID, sess.Client
		mc := s.modelCost(r)
		out.Models = append(out.Models, mc)
		out.Buckets.add(mc.Buckets)
	}
	total := rep.Total
	out.Total = totalsOf(total)
	out.Session.Totals = out.Total
	out.Session.Tokens = total.InputTokens + total.OutputTokens + total.CacheReadTokens + total.CacheCreationTokens
	if err := db.QueryRowContext(ctx, "SELECT count(DISTINCT agent_id) FROM actions WHERE session_id = ? AND client = ? AND agent_id != ''", sess.SessionID, sess.Client).Scan(&out.Subagents); err != nil {
		return nil, err
	}
	if out.Children, err = querySessions(ctx, db, "SELECT "+sessionCols+" FROM sessions WHERE parent_session_id = ? ORDER BY first_seen LIMIT 100", sess.SessionID); err != nil {
		return nil, err
	}
	if err := addPaths(ctx, db, out.Children); err != nil {
		return nil, err
	}
	if out.Lifecycle, err = lifecycle(ctx, db, sess); err != nil {
		return nil, err
	}
	scored, err := analysis.Scores(ctx, db, analysis.Filter{Client: sess.Client, Limit: 1}, sess.SessionID)
	if err != nil {
		return nil, err
	}
	if len(scored) == 1 {
		out.Analysis = &scored[0]
	}
	if out.Summaries, err = sessionSummaries(ctx, db, sess); err != nil {
		return nil, err
	}
	return out, nil
}

// stateChange is one session event.
type stateChange struct {
	T      int64  `json:"t"` // ms
	State  string `json:"state"`
	Epoch  int64  `json:"epoch"`
	Source string `json:"source"`
}

func lifecycle(ctx context.Context, db *sql.DB, s Session) ([]stateChange, error) {
	rows, err := db.QueryContext(ctx, "SELECT ts, state, epoch, source FROM session_events WHERE session_id = ? AND client = ? ORDER BY ts, id LIMIT 200", s.SessionID, s.Client)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []stateChange{}
	for rows.Next() {
		var c stateChange
		if err := rows.Scan(&c.T, &c.State, &c.Epoch, &c.Source); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// TimelineItem is one step of a session: an action (a prompt, a tool call with its result) or a
// model turn's usage.
type TimelineItem struct {
	Kind   string `json:"kind"` // action or usage
	Cursor string `json:"cursor"`
	T      int64  `json:"t"` // ms
	// Actions.
	Type            string `json:"type,omitempty"`
	Tool            string `json:"tool,omitempty"`
	Target          string `json:"target,omitempty"`
	TargetTruncated bool   `json:"target_truncated,omitempty"`
	Success         *bool  `json:"success,omitempty"`
	Error           string `json:"error,omitempty"`
	DurationMs      int64  `json:"duration_ms,omitempty"`
	OutputSize      int64  `json:"output_size,omitempty"`
	Output          string `json:"output,omitempty"` // the stored output's first outputPreview characters
	OutputTruncated bool   `json:"output_truncated,omitempty"`
	AgentID         string `json:"agent_id,omitempty"`
	Sidechain       bool   `json:"sidechain,omitempty"`
	Freshness       string `json:"freshness,omitempty"`
	ToolUseID       string `json:"tool_use_id,omitempty"`
	// Both.
	Model     string `json:"model,omitempty"`
	MessageID string `json:"message_id,omitempty"`
	// Usage.
	InputTokens      int64   `json:"input_tokens,omitempty"`
	OutputTokens     int64   `json:"output_tokens,omitempty"`
	CacheReadTokens  int64   `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64   `json:"cache_creation_tokens,omitempty"`
	CostUSD          float64 `json:"cost_usd,omitempty"`
	Reliability      string  `json:"reliability,omitempty"`
}

const (
	targetPreview = 2000
	outputPreview = 4000
)

// A timeline cursor is the last item's "<ms>.<0 action | 1 usage>.<row id>"; the next page
// starts after it in (time, kind, id) order.
var cursorRe = regexp.MustCompile(`^([0-9]{1,15})\.([01])\.([0-9]{1,18})$`)

type timelineCursor struct{ ts, kind, id int64 }

func parseTimelineCursor(v string) (timelineCursor, bool) {
	m := cursorRe.FindStringSubmatch(v)
	if m == nil {
		return timelineCursor{}, false
	}
	ts, _ := strconv.ParseInt(m[1], 10, 64)
	k, _ := strconv.ParseInt(m[2], 10, 64)
	id, _ := strconv.ParseInt(m[3], 10, 64)
	return timelineCursor{ts, k, id}, true
}

// afterCursor is the condition "(ts, kind, id) > cursor" for the rows of one kind; p prefixes the
// columns ("a." for an aliased table).
func afterCursor(p string, kind int64) string {
	return fmt.Sprintf("(%[1]sts > :cts OR (%[1]sts = :cts AND (%[2]d > :ck OR (%[2]d = :ck AND %[1]sid > :cid))))", p, kind)
}

// timeline answers /api/sessions/{id}/timeline: the session's actions and model turns in time
// order, limit at a time; next_cursor continues, and is empty at the end.
func (s *Server) timeline(ctx context.Context, q *reqParams) (any, error) {
	id, client := q.pathID(), q.name("client")
	limit := q.intParam("limit", 100, 1, maxPageSize)
	cur := timelineCursor{-1, 0, 0}
	if v := q.str("cursor"); v != "" {
		c, ok := parseTimelineCursor(v)
		if !ok {
			q.fail(badParam("cursor", "%q is not a cursor from a previous page's next_cursor", v))
		}
		cur = c
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	db, err := s.db(ctx)
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, notFound("no session %q: there is no store yet", id)
	}
	sess, err := resolveSession(ctx, db, id, client)
	if err != nil {
		return nil, err
	}
	args := []any{sql.Named("sid", sess.SessionID), sql.Named("client", sess.Client),
		sql.Named("cts", cur.ts), sql.Named("ck", cur.kind), sql.Named("cid", cur.id), sql.Named("limit", limit+1),
		sql.Named("tp", targetPreview), sql.Named("op", outputPreview)}
	stmt := `
SELECT * FROM (
  SELECT a.ts, 0 AS k, a.id, a.type, a.tool, substr(a.target, 1, :tp), length(a.target) > :tp, a.success, substr(a.error, 1, :tp),
         a.duration_ms, a.output_size, coalesce(substr(o.output, 1, :op), ''), coalesce(length(o.output) > :op, 0),
         a.agent_id, a.sidechain, a.freshness, a.tool_use_id, a.model, a.message_id, 0, 0, 0, 0, 0.0, ''
    FROM actions a LEFT JOIN action_outputs o ON o.event_id = a.event_id
   WHERE a.session_id = :sid AND a.client = :client AND ` + afterCursor("a.", 0) + `
  UNION ALL
  SELECT ts, 1, id, '', '', '', 0, NULL, '', 0, 0, '', 0, agent_id, 0, '', '', model, message_id,
         input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, reliability
    FROM token_usage
   WHERE session_id = :sid AND client = :client AND ` + afterCursor("", 1) + `
) ORDER BY 1, 2, 3 LIMIT :limit`
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	items := []TimelineItem{}
	for rows.Next() {
		var it TimelineItem
		var kind, rowID int64
		var success sql.NullBool
		var side, ttrunc, otrunc bool
		if err := rows.Scan(&it.T, &kind, &rowID, &it.Type, &it.Tool, &it.Target, &ttrunc, &success, &it.Error,
			&it.DurationMs, &it.OutputSize, &it.Output, &otrunc, &it.AgentID, &side, &it.Freshness, &it.ToolUseID,
			&it.Model, &it.MessageID, &it.InputTokens, &it.OutputTokens, &it.CacheReadTokens, &it.CacheWriteTokens,
			&it.CostUSD, &it.Reliability); err != nil {
			return nil, err
		}
		it.Kind = "action"
		if kind == 1 {
			it.Kind = "usage"
		}
		if success.Valid {
			b := success.Bool
			it.Success = &b
		}
		it.Sidechain, it.TargetTruncated, it.OutputTruncated = side, ttrunc, otrunc
		it.Cursor = fmt.Sprintf("%d.%d.%d", it.T, kind, rowID)
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	next := ""
	if len(items) > limit {
		items = items[:limit]
		next = items[limit-1].Cursor
	}
	return struct {
		Session    Session        `json:"session"`
		Items      []TimelineItem `json:"items"`
		NextCursor string         `json:"next_cursor"`
	}{sess, items, next}, nil
}

// actionTypes are the valid values of the type filter.
var actionTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range event.ActionTypes {
		m[string(t)] = true
	}
	return m
}()
