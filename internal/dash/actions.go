package dash

import (
	"context"

	"github.com/observerhq/observer/internal/query"
)

// Action is one row of the Actions firehose.
type Action = query.Action

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
	var before query.ActionCursor
	if v := q.str("cursor"); v != "" {
		c, ok := query.ParseActionCursor(v)
		if !ok {
			q.fail(badParam("cursor", "%q is not a cursor from a previous page's next_cursor", v))
		}
		before = c
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
	qf := f.readFilter()
	qf.SessionID = session
	page, err := query.Actions(ctx, db, query.ActionsQuery{Filter: qf, Type: typ, Tool: tool, Failed: failed, Before: before, Limit: limit})
	if err != nil {
		return nil, err
	}
	out.Items, out.NextCursor = page.Items, page.NextCursor
	return out, nil
}
