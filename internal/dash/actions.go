package dash

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
)

// Action is one row of the Actions firehose.
type Action struct {
	ID         int64  `json:"id"`
	T          int64  `json:"t"` // ms
	Client     string `json:"client"`
	SessionID  string `json:"session_id"`
	Project    string `json:"project"`
	Type       string `json:"type"`
	Tool       string `json:"tool,omitempty"`
	Target     string `json:"target,omitempty"` // the first targetPreview characters
	Success    *bool  `json:"success,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"duration_ms,omitempty"`
	OutputSize int64  `json:"output_size,omitempty"`
	Model      string `json:"model,omitempty"`
	AgentID    string `json:"agent_id,omitempty"`
	Freshness  string `json:"freshness,omitempty"`
}

// An actions cursor is the last row's "<ms>.<row id>"; the next page holds older rows.
var actionCursorRe = regexp.MustCompile(`^([0-9]{1,15})\.([0-9]{1,18})$`)

// actions answers /api/actions: the actions of the window, newest first, filtered by session,
// type, tool and failure, limit at a time through next_cursor.
func (s *Server) actions(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	session := q.str("session")
	typ := q.name("type")
	if typ != "" && !actionTypes[typ] {
		q.fail(badParam("type", "%q is not an action type", typ))
	}
	tool := q.str("tool")
	failed := q.boolParam("failed")
	limit := q.intParam("limit", 100, 1, maxPageSize)
	var cts, cid int64 = -1, 0
	if v := q.str("cursor"); v != "" {
		m := actionCursorRe.FindStringSubmatch(v)
		if m == nil {
			q.fail(badParam("cursor", "%q is not a cursor from a previous page's next_cursor", v))
		} else {
			cts, _ = strconv.ParseInt(m[1], 10, 64)
			cid, _ = strconv.ParseInt(m[2], 10, 64)
		}
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Store      bool     `json:"store"`
		Items      []Action `json:"items"`
		NextCursor string   `json:"next_cursor"`
	}{filters: f, Items: []Action{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	c := filterConds(f, "ts")
	if session != "" {
		c.add("session_id = :session", sql.Named("session", session))
	}
	if typ != "" {
		c.add("type = :type", sql.Named("type", typ))
	}
	if tool != "" {
		c.add("tool = :tool", sql.Named("tool", tool))
	}
	if failed {
		c.add("success = 0")
	}
	if cts >= 0 {
		c.add("(ts < :cts OR (ts = :cts AND id < :cid))", sql.Named("cts", cts), sql.Named("cid", cid))
	}
	args := append(c.args, sql.Named("limit", limit+1), sql.Named("tp", targetPreview))
	rows, err := db.QueryContext(ctx, `SELECT id, ts, client, session_id, project, type, tool, substr(target, 1, :tp), success,
       substr(error, 1, :tp), duration_ms, output_size, model, agent_id, freshness
  FROM actions`+c.sql()+` ORDER BY ts DESC, id DESC LIMIT :limit`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
		out.Items = append(out.Items, a)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out.Items) > limit {
		out.Items = out.Items[:limit]
		last := out.Items[limit-1]
		out.NextCursor = fmt.Sprintf("%d.%d", last.T, last.ID)
	}
	return out, nil
}
