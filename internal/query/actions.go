package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
)

// Action is one row of the actions firehose.
type Action struct {
	ID         int64  `json:"id"`
	T          int64  `json:"t"` // ms
	Client     string `json:"client"`
	SessionID  string `json:"session_id"`
	Project    string `json:"project"`
	Type       string `json:"type"`
	Tool       string `json:"tool,omitempty"`
	Target     string `json:"target,omitempty"` // the first TargetPreview characters
	Success    *bool  `json:"success,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
	OutputSize int64  `json:"output_size,omitempty"`
	Model      string `json:"model,omitempty"`
	AgentID    string `json:"agent_id,omitempty"`
	Freshness  string `json:"freshness,omitempty"`
}

// ActionsQuery selects a page of the firehose: the actions Filter selects (its time range on
// their ts), of a type, of a tool, failed only; the page before the cursor Before.
type ActionsQuery struct {
	Filter
	Type, Tool string // "": any
	Failed     bool
	Before     ActionCursor // the zero cursor: from the newest
	Limit      int
}

// ActionCursor is a firehose page's last row: the next page holds older rows.
type ActionCursor struct {
	TS, ID int64
	Set    bool
}

// An actions cursor is the last row's "<ms>.<row id>".
var actionCursorRe = regexp.MustCompile(`^([0-9]{1,15})\.([0-9]{1,18})$`)

// ParseActionCursor reads an ActionsPage's NextCursor; ok is false when v is not one.
func ParseActionCursor(v string) (c ActionCursor, ok bool) {
	m := actionCursorRe.FindStringSubmatch(v)
	if m == nil {
		return ActionCursor{}, false
	}
	c.TS, _ = strconv.ParseInt(m[1], 10, 64)
	c.ID, _ = strconv.ParseInt(m[2], 10, 64)
	c.Set = true
	return c, true
}

// ActionsPage is a page of the firehose; NextCursor continues after it, and is empty at the end.
type ActionsPage struct {
	Items      []Action
	NextCursor string
}

// Actions reads a page of the actions q selects, the newest first. Targets and errors are cut at
// TargetPreview characters.
func Actions(ctx context.Context, db Querier, q ActionsQuery) (*ActionsPage, error) {
	c := filterClause(q.Filter, "ts")
	if q.Type != "" {
		c.add("type = :type", sql.Named("type", q.Type))
	}
	if q.Tool != "" {
		c.add("tool = :tool", sql.Named("tool", q.Tool))
	}
	if q.Failed {
		c.add("success = 0")
	}
	if q.Before.Set {
		c.add("(ts < :cts OR (ts = :cts AND id < :cid))", sql.Named("cts", q.Before.TS), sql.Named("cid", q.Before.ID))
	}
	args := append(c.args, sql.Named("limit", q.Limit+1), sql.Named("tp", TargetPreview))
	rows, err := db.QueryContext(ctx, `SELECT id, ts, client, session_id, project, type, tool, substr(target, 1, :tp), success,
       substr(error, 1, :tp), duration_ms, output_size, model, agent_id, freshness
  FROM actions`+c.sql()+` ORDER BY ts DESC, id DESC LIMIT :limit`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	page := &ActionsPage{Items: []Action{}}
	for rows.Next() {
		var a Action
		var success sql.NullBool
		if err := rows.Scan(&a.ID, &a.T, &a.Client, &a.SessionID, &a.Project, &a.Type, &a.Tool, &a.Target, &success,
			&a.Error, &a.DurationMs, &a.OutputSize, &a.Model, &a.AgentID, &a.Freshness); err != nil {
			return nil, err
		}
		a.Success = boolOf(success)
		page.Items = append(page.Items, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(page.Items) > q.Limit {
		page.Items = page.Items[:q.Limit]
		last := page.Items[q.Limit-1]
		page.NextCursor = fmt.Sprintf("%d.%d", last.T, last.ID)
	}
	return page, nil
}

// Queries on one session walk its rows through actions(session_id, ts). A type condition is
// written +type so that the planner, which has no statistics, never prefers actions(type, ts):
// that index walks every session's actions of the type.

// ActionRow is an action as the MCP tools list it.
type ActionRow struct {
	ID        int64
	TS        int64 // ms
	SessionID string
	Type      string
	Target    string
	Success   *bool // nil while the result is unknown
	Error     string
	Freshness string
	Project   string
}

// actionRowCols are the columns scanActionRows reads, in its order.
const actionRowCols = `id, ts, session_id, type, target, success, error, freshness, project`

// queryActionRows runs a statement selecting actionRowCols.
func queryActionRows(ctx context.Context, db Querier, stmt string, args ...any) ([]ActionRow, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActionRow
	for rows.Next() {
		var a ActionRow
		var ok sql.NullBool
		if err := rows.Scan(&a.ID, &a.TS, &a.SessionID, &a.Type, &a.Target, &ok, &a.Error, &a.Freshness, &a.Project); err != nil {
			return nil, err
		}
		a.Success = boolOf(ok)
		out = append(out, a)
	}
	return out, rows.Err()
}

// RecentActions lists a session's latest actions but its prompts, the newest first, at most limit.
func RecentActions(ctx context.Context, db Querier, sessionID string, limit int) ([]ActionRow, error) {
	return queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE session_id = ?
		AND +type NOT IN ('user_prompt', 'system_prompt') ORDER BY ts DESC, id DESC LIMIT ?`, sessionID, limit)
}

// ActionScope is a session (by id) or, without one, a project.
type ActionScope struct {
	SessionID, Project string
}

// FailedActions lists the failed actions of a session or, without one, of a project (its failures
// index), the newest first, at most limit.
func FailedActions(ctx context.Context, db Querier, in ActionScope, limit int) ([]ActionRow, error) {
	if in.SessionID != "" {
		return queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE session_id = ? AND success = 0
			ORDER BY ts DESC, id DESC LIMIT ?`, in.SessionID, limit)
	}
	return queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE project = ? AND success = 0
			ORDER BY ts DESC, id DESC LIMIT ?`, in.Project, limit)
}

// CountFailed counts the failed actions of a session or, without one, of a project.
func CountFailed(ctx context.Context, db Querier, in ActionScope) (int, error) {
	var n int
	var err error
	if in.SessionID != "" {
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE session_id = ? AND success = 0`, in.SessionID).Scan(&n)
	} else {
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM actions WHERE project = ? AND success = 0`, in.Project).Scan(&n)
	}
	return n, err
}

// ActionsUpTo lists a session's actions up to and including (ts, id), the newest first, at most
// limit.
func ActionsUpTo(ctx context.Context, db Querier, sessionID string, ts, id int64, limit int) ([]ActionRow, error) {
	return queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE session_id = ? AND ts <= ?
		AND (ts < ? OR id <= ?) ORDER BY ts DESC, id DESC LIMIT ?`, sessionID, ts, ts, id, limit)
}

// ActionsAfter lists a session's actions after (ts, id), the oldest first, at most limit.
func ActionsAfter(ctx context.Context, db Querier, sessionID string, ts, id int64, limit int) ([]ActionRow, error) {
	return queryActionRows(ctx, db, `SELECT `+actionRowCols+` FROM actions WHERE session_id = ? AND ts >= ?
			AND (ts > ? OR id > ?) ORDER BY ts, id LIMIT ?`, sessionID, ts, ts, id, limit)
}

// ActionPlace is where an action stands: its session, time and id.
type ActionPlace struct {
	SessionID string
	TS, ID    int64
}

// ActionPlaceOf reads the place of action id; ok is false when there is none.
func ActionPlaceOf(ctx context.Context, db Querier, id int64) (p ActionPlace, ok bool, err error) {
	err = db.QueryRowContext(ctx, `SELECT session_id, ts, id FROM actions WHERE id = ?`, id).Scan(&p.SessionID, &p.TS, &p.ID)
	return rowFound(p, err)
}

// LastActionOf reads the place of a session's latest action; ok is false when it has none.
func LastActionOf(ctx context.Context, db Querier, sessionID string) (p ActionPlace, ok bool, err error) {
	p.SessionID = sessionID
	err = db.QueryRowContext(ctx, `SELECT ts, id FROM actions WHERE session_id = ? ORDER BY ts DESC, id DESC LIMIT 1`,
		sessionID).Scan(&p.TS, &p.ID)
	return rowFound(p, err)
}

// rowFound turns a single-row read's sql.ErrNoRows into ok = false.
func rowFound[T any](v T, err error) (T, bool, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return v, false, nil
	}
	return v, err == nil, err
}

// FixedLater returns the id of the first successful action of type typ on target in a project
// after ts (a failure's fix), or 0.
func FixedLater(ctx context.Context, db Querier, project, target string, ts int64, typ string) (int64, error) {
	var id int64
	err := db.QueryRowContext(ctx, `SELECT id FROM actions WHERE project = ? AND target = ? AND ts > ? AND +type = ?
		AND success = 1 ORDER BY ts LIMIT 1`, project, target, ts, typ).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, err
}

// PrevAction reads the type and target of the action before action id (at ts) in its session,
// both "" when it is the first.
func PrevAction(ctx context.Context, db Querier, id, ts int64) (typ, target string, err error) {
	err = db.QueryRowContext(ctx, `SELECT type, target FROM actions WHERE session_id = (SELECT session_id FROM actions WHERE id = ?1)
			AND ts <= ?2 AND (ts < ?2 OR id < ?1) ORDER BY ts DESC, id DESC LIMIT 1`, id, ts).Scan(&typ, &target)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	return typ, target, err
}

// ActionRun reads an action's duration and the event id its output is stored under.
func ActionRun(ctx context.Context, db Querier, id int64) (durationMs int64, eventID string, err error) {
	err = db.QueryRowContext(ctx, `SELECT duration_ms, event_id FROM actions WHERE id = ?`, id).Scan(&durationMs, &eventID)
	return durationMs, eventID, err
}

// ActionEventID reads the event id of action id, which its output is stored under.
func ActionEventID(ctx context.Context, db Querier, id int64) (string, error) {
	var eventID string
	err := db.QueryRowContext(ctx, `SELECT event_id FROM actions WHERE id = ?`, id).Scan(&eventID)
	return eventID, err
}

// ActionDetail is every field of one action the MCP tools show.
type ActionDetail struct {
	ID                              int64
	TS                              int64 // ms
	Client, SessionID, Project      string
	Type, Tool, Target              string
	Success                         *bool
	Error                           string
	DurationMs                      int64
	Model, AgentID, Freshness, Hash string
	OutputSize                      int64
	EventID                         string // its output's key
}

// ActionDetailOf reads action id; ok is false when there is none.
func ActionDetailOf(ctx context.Context, db Querier, id int64) (a ActionDetail, ok bool, err error) {
	var success sql.NullBool
	err = db.QueryRowContext(ctx, `SELECT id, ts, client, session_id, project, type, tool, target, success, error,
		duration_ms, model, agent_id, freshness, content_hash, output_size, event_id FROM actions WHERE id = ?`, id).Scan(
		&a.ID, &a.TS, &a.Client, &a.SessionID, &a.Project, &a.Type, &a.Tool, &a.Target, &success, &a.Error, &a.DurationMs, &a.Model, &a.AgentID,
		&a.Freshness, &a.Hash, &a.OutputSize, &a.EventID)
	a.Success = boolOf(success)
	return rowFound(a, err)
}
