package query

import (
	"context"
	"database/sql"
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
		if success.Valid {
			b := success.Bool
			a.Success = &b
		}
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
