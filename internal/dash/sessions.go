package dash

import (
	"context"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// Session is one row of the Sessions table: the read model's session with the figures the
// dashboard adds.
type Session struct {
	query.Session
	Actions  int64 `json:"actions"`
	Failures int64 `json:"failures"`
	Tokens   int64 `json:"tokens"` // input + output + cache read + cache write
	// Paths are the capture paths that saw the session (store.Paths order: proxy, records,
	// hooks, otlp), all time.
	Paths []string `json:"paths"`
	Totals
}

// enrich wraps the read model's sessions, with no capture paths yet.
func enrich(list []query.Session) []Session {
	out := make([]Session, len(list))
	for i, s := range list {
		out[i] = Session{Session: s, Paths: []string{}}
	}
	return out
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
	qf := f.readFilter()
	if out.Total, err = query.CountSessions(ctx, db, qf); err != nil {
		return nil, err
	}
	offset := (page - 1) * limit
	var list []Session
	costs := map[string]query.CostRow{}
	if sort == "last_seen" {
		// The page first, then the cost of its sessions only.
		found, err := query.Sessions(ctx, db, qf, limit, offset)
		if err != nil {
			return nil, err
		}
		list = enrich(found)
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
		keys := make([]store.SessionKey, len(page))
		for i, r := range page {
			keys[i] = store.SessionKey{Client: r.Client, SessionID: r.SessionID}
		}
		found, err := query.SessionsOf(ctx, db, qf, keys)
		if err != nil {
			return nil, err
		}
		list = enrich(found)
		if len(list) < limit {
			all, err := query.Sessions(ctx, db, qf, 0, 0)
			if err != nil {
				return nil, err
			}
			rest := enrich(all)
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

// addActionCounts fills the actions and failures of a page of sessions, from the hourly rollup's
// session index.
func addActionCounts(ctx context.Context, db query.DB, list []Session) error {
	if len(list) == 0 {
		return nil
	}
	keys := make([]store.SessionKey, len(list))
	for i, s := range list {
		keys[i] = store.SessionKey{Client: s.Client, SessionID: s.SessionID}
	}
	tallies, err := query.SessionTallies(ctx, db, keys)
	if err != nil {
		return err
	}
	for i, k := range keys {
		if t, ok := tallies[k]; ok {
			list[i].Actions, list[i].Failures = t.Actions, t.Failures
		}
	}
	return nil
}

// addPaths fills the capture paths of a page of sessions, in one query (store.SessionPaths).
func addPaths(ctx context.Context, db query.DB, list []Session) error {
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

// session opens the store and finds session id of client (see resolveSession); a 404 when there
// is no store yet or no such session.
func (s *Server) session(ctx context.Context, id, client string) (query.DB, Session, error) {
	db, err := s.db(ctx)
	if err != nil {
		return nil, Session{}, err
	}
	if db == nil {
		return nil, Session{}, notFound("no session %q: there is no store yet", id)
	}
	sess, err := resolveSession(ctx, db, id, client)
	return db, sess, err
}

// resolveSession finds session id (of client, when given; else the most recent of that id).
func resolveSession(ctx context.Context, db query.DB, id, client string) (Session, error) {
	found, ok, err := query.FindSession(ctx, db, id, client)
	s := Session{Session: found, Paths: []string{}}
	if err == nil && !ok {
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
type countRow = query.NameCount

// sessionDetail answers /api/sessions/{id}: the session, its action breakdown by type and tool,
// its tokens and dollars per model (all its turns, from query.Cost), its lifecycle and subagents,
// and the summaries of its ended epochs (memory.go).
func (s *Server) sessionDetail(ctx context.Context, q *reqParams) (any, error) {
	id, client := q.pathID(), q.name("client")
	if err := q.done(); err != nil {
		return nil, err
	}
	db, sess, err := s.session(ctx, id, client)
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
		Analysis *query.SessionScore `json:"analysis"`
		// Summaries are the accounts of the session's ended epochs, newest epoch first; the
		// current epoch of an active session has none yet.
		Summaries []SessionSummary `json:"summaries"`
	}{Session: sess, Models: []ModelCost{}}
	if out.Types, err = query.ActionTypeCounts(ctx, db, sess.Client, sess.SessionID, 100); err != nil {
		return nil, err
	}
	if out.Tools, err = query.ToolCounts(ctx, db, sess.Client, sess.SessionID, 100); err != nil {
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
	if out.Subagents, err = query.Subagents(ctx, db, sess.Client, sess.SessionID); err != nil {
		return nil, err
	}
	children, err := query.ChildSessions(ctx, db, sess.SessionID, 100)
	if err != nil {
		return nil, err
	}
	out.Children = enrich(children)
	if err := addPaths(ctx, db, out.Children); err != nil {
		return nil, err
	}
	if out.Lifecycle, err = query.Lifecycle(ctx, db, sess.Client, sess.SessionID); err != nil {
		return nil, err
	}
	scored, err := query.Scores(ctx, db, query.AnalysisQuery{Filter: query.Filter{Client: sess.Client, SessionID: sess.SessionID}, Limit: 1})
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
type stateChange = query.StateChange

// TimelineItem is one step of a session.
type TimelineItem = query.TimelineItem

// targetPreview is how much of a target or an error lists show.
const targetPreview = query.TargetPreview

// timeline answers /api/sessions/{id}/timeline: the session's actions and model turns in time
// order, limit at a time; next_cursor continues, and is empty at the end.
func (s *Server) timeline(ctx context.Context, q *reqParams) (any, error) {
	id, client := q.pathID(), q.name("client")
	limit := q.intParam("limit", 100, 1, maxPageSize)
	cur := query.TimelineStart
	if v := q.str("cursor"); v != "" {
		c, ok := query.ParseTimelineCursor(v)
		if !ok {
			q.fail(badParam("cursor", "%q is not a cursor from a previous page's next_cursor", v))
		}
		cur = c
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	db, sess, err := s.session(ctx, id, client)
	if err != nil {
		return nil, err
	}
	page, err := query.Timeline(ctx, db, sess.Client, sess.SessionID, cur, limit)
	if err != nil {
		return nil, err
	}
	return struct {
		Session    Session        `json:"session"`
		Items      []TimelineItem `json:"items"`
		NextCursor string         `json:"next_cursor"`
	}{sess, page.Items, page.NextCursor}, nil
}

// actionTypes are the valid values of the type filter.
var actionTypes = func() map[string]bool {
	m := map[string]bool{}
	for _, t := range event.ActionTypes {
		m[string(t)] = true
	}
	return m
}()
