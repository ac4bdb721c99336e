package dash

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
	"github.com/observerhq/observer/pkg/store"
)

// Team mode: a hub's store holds many members' events, each row of sessions, actions,
// token_usage and api_turns naming the member the hub received it from (migration 0015; '' on a
// single user's store and for the hub's own events).
//
// Which member a figure belongs to is the row's own member column, never its session's: the
// rollups (usage_*, actions_*) have no member column, so whatever is filtered or grouped by member
// is read from the raw tables, on 0015's partial indexes (member, ts). Joining the rollups to
// sessions on (client, session_id) would be faster but wrong twice: a proxy turn without a session
// has no session row and would belong to nobody, and a session id two members' clients both used
// has one session row, whose member is the first one seen, and would take the other's turns.
//
// Dollars and tokens are store.TurnsSQL's turns, each counted once exactly as query.Cost counts them
// (query.Cost reads the rollups that the writer computes from the same TurnsSQL): the member
// condition goes into both of its parts, beside the time, client and project conditions query.Cost
// puts there, so a member's figures plus the other members' plus the unattributed rows add up to
// query.Cost's total.

// memberCost is query.Cost's report for q restricted to one member's turns (and to one model when
// model is set), computed from the raw turns: rows ordered as query.Cost orders them (by the time
// key first when it leads, else highest cost first, then by the keys), and their total.
func memberCost(ctx context.Context, db *sql.DB, q query.CostQuery, member, model string) ([]query.CostRow, query.CostRow, error) {
	var total query.CostRow
	groups, err := memberTurns(ctx, db, q, member, model)
	if err != nil {
		return nil, total, err
	}
	rows := make([]query.CostRow, len(groups))
	for i, g := range groups {
		rows[i] = g.CostRow
	}
	byTime := len(q.GroupBy) > 0 && (q.GroupBy[0] == "day" || q.GroupBy[0] == "hour")
	slices.SortFunc(rows, func(a, b query.CostRow) int {
		if byTime {
			if c := strings.Compare(*query.KeyField(&a, q.GroupBy[0]), *query.KeyField(&b, q.GroupBy[0])); c != 0 {
				return c
			}
		}
		if a.CostUSD != b.CostUSD {
			return cmpCost(a.CostUSD, b.CostUSD, "", "")
		}
		for _, k := range q.GroupBy {
			if c := strings.Compare(*query.KeyField(&a, k), *query.KeyField(&b, k)); c != 0 {
				return c
			}
		}
		return 0
	})
	for _, r := range rows {
		total.Add(r)
	}
	return rows, total, nil
}

// turnGroup is one group of a member's turns and the time (ms) of its latest turn.
type turnGroup struct {
	query.CostRow
	Last int64
}

// memberTurns groups one member's turns (store.TurnsSQL's, of model when set) under q's filters
// by q's keys, in no particular order.
func memberTurns(ctx context.Context, db *sql.DB, q query.CostQuery, member, model string) ([]turnGroup, error) {
	p := []string{"api_turns.member = :member"}
	t := []string{"t.member = :member"}
	add := func(pc, tc string) { p, t = append(p, pc), append(t, tc) }
	args := []any{sql.Named("member", member), sql.Named("window", store.JoinWindowMs)}
	if !q.Since.IsZero() {
		add(fmt.Sprintf("api_turns.ts >= %d", q.Since.UnixMilli()), fmt.Sprintf("t.ts >= %d", q.Since.UnixMilli()))
	}
	if !q.Until.IsZero() {
		add(fmt.Sprintf("api_turns.ts < %d", q.Until.UnixMilli()), fmt.Sprintf("t.ts < %d", q.Until.UnixMilli()))
	}
	if q.SessionID != "" {
		add("api_turns.session_id = :session", "t.session_id = :session")
		args = append(args, sql.Named("session", q.SessionID))
	}
	if len(q.SessionIDs) > 0 {
		ph := make([]string, len(q.SessionIDs))
		for i, id := range q.SessionIDs {
			ph[i] = fmt.Sprintf(":sid%d", i)
			args = append(args, sql.Named(fmt.Sprintf("sid%d", i), id))
		}
		in := " IN (" + strings.Join(ph, ", ") + ")"
		add("api_turns.session_id"+in, "t.session_id"+in)
	}
	if q.Client != "" {
		add("api_turns.client = :client", "t.client = :client")
		args = append(args, sql.Named("client", q.Client))
	}
	if q.Project != "" {
		add(store.ProxyProject+" = :project", "t.project = :project")
		args = append(args, sql.Named("project", q.Project))
	}
	if model != "" {
		add("api_turns.model = :model", "t.model = :model")
		args = append(args, sql.Named("model", model))
	}
	// The keys as query.Cost groups raw turns (local days and hours by SQLite's localtime).
	exprs := map[string]string{
		"session": "session_id", "model": "model", "project": "project", "client": "client",
		"day":  "date(ts / 1000, 'unixepoch', 'localtime')",
		"hour": "strftime('%Y-%m-%dT%H', ts / 1000, 'unixepoch', 'localtime')",
	}
	var sel []string
	for _, k := range q.GroupBy {
		e, ok := exprs[k]
		if !ok {
			return nil, fmt.Errorf("cannot group by %q: choose among %s", k, strings.Join(query.CostKeys, ", "))
		}
		sel = append(sel, e)
	}
	// The measures as query.Cost sums its raw part: a turn each, proxy the proxy's.
	stmt := "SELECT " + strings.Join(append(slices.Clone(sel),
		"sum(input_tokens)", "sum(output_tokens)", "sum(cache_read_tokens)", "sum(cache_creation_tokens)",
		"sum(cache_creation_1h_tokens)", "sum(reasoning_tokens)", "sum(cost_usd)", "count(*)", "sum(proxy)",
		"sum(reliability = 'unreliable')", "sum(reliability = 'unknown')", "max(ts)"), ", ") +
		" FROM (" + fmt.Sprintf(store.TurnsSQL, strings.Join(p, " AND "), strings.Join(t, " AND ")) + ")"
	if len(sel) > 0 {
		stmt += " GROUP BY " + strings.Join(sel, ", ")
	}
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("member %s: cost query: %w", member, err)
	}
	defer rows.Close()
	out := []turnGroup{}
	for rows.Next() {
		var g turnGroup
		keys := make([]string, len(q.GroupBy))
		var in, o, cr, cc, cc1, rs, turns, proxy, unrel, unpriced, last sql.NullInt64
		var usd sql.NullFloat64
		dest := make([]any, 0, len(keys)+12)
		for i := range keys {
			dest = append(dest, &keys[i])
		}
		if err := rows.Scan(append(dest, &in, &o, &cr, &cc, &cc1, &rs, &usd, &turns, &proxy, &unrel, &unpriced, &last)...); err != nil {
			return nil, err
		}
		if turns.Int64 == 0 {
			continue // no group row when there is nothing at all, as query.Cost
		}
		r := &g.CostRow
		for i, k := range q.GroupBy {
			*query.KeyField(r, k) = keys[i]
		}
		r.InputTokens, r.OutputTokens, r.CacheReadTokens = in.Int64, o.Int64, cr.Int64
		r.CacheCreationTokens, r.CacheCreation1hTokens, r.ReasoningTokens = cc.Int64, cc1.Int64, rs.Int64
		r.CostUSD, r.Turns, r.ProxyTurns = usd.Float64, turns.Int64, proxy.Int64
		r.UnreliableTurns, r.UnpricedTurns = unrel.Int64, unpriced.Int64
		g.Last = last.Int64
		out = append(out, g)
	}
	return out, rows.Err()
}

// memberFigures are one member's figures, or one member's for one key of the compare-by.
type memberFigures struct {
	Member   string `json:"member"`
	Sessions int64  `json:"sessions"`  // sessions seen in the window (their last event in it)
	Actions  int64  `json:"actions"`   // rows of the actions table, as the Overview counts them
	Failures int64  `json:"failures"`  // of Actions, those whose result reported an error
	APITurns int64  `json:"api_turns"` // the proxy's turns, as the Overview's counts.api_turns
	Tokens   int64  `json:"tokens"`    // input + output + cache read + cache write
	LastSeen int64  `json:"last_seen"` // ms: the latest session, action or turn under the filters
	Totals
	Buckets
	row query.CostRow
	key string
}

// add adds o's figures into g; g's member and key stay.
func (g *memberFigures) add(o *memberFigures) {
	g.Sessions += o.Sessions
	g.Actions += o.Actions
	g.Failures += o.Failures
	g.LastSeen = max(g.LastSeen, o.LastSeen)
	g.row.Add(o.row)
	g.Buckets.add(o.Buckets)
}

// finish fills the figures that follow from the turns.
func (g *memberFigures) finish() {
	g.Totals = totalsOf(g.row)
	g.APITurns = g.row.ProxyTurns
	g.Tokens = g.row.InputTokens + g.row.OutputTokens + g.row.CacheReadTokens + g.row.CacheCreationTokens
}

// memberRow is one row of /api/members' members.
type memberRow struct {
	memberFigures
	// Hosts are the machines the member's sessions under the filters reported; OSUser is the
	// user the latest of them ran as.
	Hosts  []string `json:"hosts"`
	OSUser string   `json:"os_user"`
}

// memberKeyRow is one row of /api/members?by=...: a member's figures for one project, client or
// model.
type memberKeyRow struct {
	memberFigures
	Key string `json:"key"`
}

// memberBy are the keys /api/members compares members by: columns of sessions, actions and the
// turns alike.
var memberBy = map[string]bool{"project": true, "client": true, "model": true}

// membersAPI answers /api/members: one row per member seen under the filters (window, project,
// client, model, member), with their sessions, actions, failures, turns, tokens and dollars; with
// by=project|client|model, also one row per member and key. The model filter keeps the turns and
// the actions of that model and the sessions whose main model it is. Rows without a member (a
// single user's store, the hub's own events) are in no row: such a store answers empty lists.
func (s *Server) membersAPI(ctx context.Context, q *reqParams) (any, error) {
	f := q.teamFilters()
	model := q.str("model")
	by := q.str("by")
	if by != "" && !memberBy[by] {
		q.fail(badParam("by", "want project, client or model, got %q", by))
	}
	if err := q.done(); err != nil {
		return nil, err
	}
	out := struct {
		filters
		Model   string         `json:"model,omitempty"`
		Store   bool           `json:"store"`
		By      string         `json:"by"`
		Members []memberRow    `json:"members"`
		Rows    []memberKeyRow `json:"rows"`
	}{filters: f, Model: model, By: by, Members: []memberRow{}, Rows: []memberKeyRow{}}
	db, err := s.db(ctx)
	if err != nil || db == nil {
		return out, err
	}
	out.Store = true
	figs, hosts, err := s.memberFigures(ctx, db, f, model, by)
	if err != nil {
		return nil, err
	}
	members := map[string]*memberRow{}
	for _, g := range figs {
		m := members[g.Member]
		if m == nil {
			m = &memberRow{memberFigures: memberFigures{Member: g.Member}, Hosts: []string{}}
			if h := hosts[g.Member]; h != nil {
				m.Hosts, m.OSUser = h.hosts, h.osUser
			}
			members[g.Member] = m
		}
		m.add(g)
		if by != "" {
			g.finish()
			out.Rows = append(out.Rows, memberKeyRow{memberFigures: *g, Key: g.key})
		}
	}
	for _, m := range members {
		m.finish()
		out.Members = append(out.Members, *m)
	}
	slices.SortFunc(out.Members, func(a, b memberRow) int { return cmpCost(a.CostUSD, b.CostUSD, a.Member, b.Member) })
	slices.SortFunc(out.Rows, func(a, b memberKeyRow) int {
		return cmp.Or(strings.Compare(a.Member, b.Member), cmpCost(a.CostUSD, b.CostUSD, a.Key, b.Key))
	})
	return out, nil
}

// memberHosts are the machines of a member's sessions.
type memberHosts struct {
	hosts  []string
	osUser string
	at     int64 // last_seen of the session osUser is from
}

// memberFigures reads every member's figures under the filters, one group per member and key of
// by (the key "" without by): sessions and actions in one grouped query each, the turns a member
// at a time (memberTurns), grouped by model too so that each model's dollars are split into
// billing buckets at its own prices.
func (s *Server) memberFigures(ctx context.Context, db *sql.DB, f filters, model, by string) ([]*memberFigures, map[string]*memberHosts, error) {
	keyCol := "''"
	if by != "" {
		keyCol = by // a column name from memberBy
	}
	groups := map[[2]string]*memberFigures{}
	var order []*memberFigures
	group := func(member, key string) *memberFigures {
		g := groups[[2]string{member, key}]
		if g == nil {
			g = &memberFigures{Member: member, key: key}
			groups[[2]string{member, key}] = g
			order = append(order, g)
		}
		return g
	}
	// where is the filters on a table with the envelope columns, model and member.
	where := func(tsCol string) *conds {
		c := filterConds(f, tsCol)
		c.add("member != ''")
		if model != "" {
			c.add("model = :model", sql.Named("model", model))
		}
		return c
	}
	hosts := map[string]*memberHosts{}
	c := where("last_seen")
	err := eachRow(ctx, db, "SELECT member, "+keyCol+", host, os_user, count(*), max(last_seen) FROM sessions"+c.sql()+
		" GROUP BY member, "+keyCol+", host, os_user", c.args, func(sc scanner) error {
		var member, key, host, user string
		var n, last int64
		if err := sc.Scan(&member, &key, &host, &user, &n, &last); err != nil {
			return err
		}
		g := group(member, key)
		g.Sessions += n
		g.LastSeen = max(g.LastSeen, last)
		h := hosts[member]
		if h == nil {
			h = &memberHosts{hosts: []string{}}
			hosts[member] = h
		}
		if host != "" && !slices.Contains(h.hosts, host) {
			h.hosts = append(h.hosts, host)
		}
		if user != "" && last >= h.at {
			h.osUser, h.at = user, last
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	for _, h := range hosts {
		slices.Sort(h.hosts)
	}
	c = where("ts")
	err = eachRow(ctx, db, "SELECT member, "+keyCol+", count(*), coalesce(sum(success = 0), 0), max(ts) FROM actions"+c.sql()+
		" GROUP BY member, "+keyCol, c.args, func(sc scanner) error {
		var member, key string
		var n, fails, last int64
		if err := sc.Scan(&member, &key, &n, &fails, &last); err != nil {
			return err
		}
		g := group(member, key)
		g.Actions += n
		g.Failures += fails
		g.LastSeen = max(g.LastSeen, last)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	members, err := turnMembers(ctx, db, f)
	if err != nil {
		return nil, nil, err
	}
	keys := []string{"model"}
	if by != "" && by != "model" {
		keys = append(keys, by)
	}
	for _, member := range members {
		turns, err := memberTurns(ctx, db, query.CostQuery{GroupBy: keys, Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client}}, member, model)
		if err != nil {
			return nil, nil, err
		}
		for _, t := range turns {
			key := ""
			if by != "" {
				key = *query.KeyField(&t.CostRow, by)
			}
			g := group(member, key)
			g.row.Add(t.CostRow)
			g.Buckets.add(s.split(t.CostRow))
			g.LastSeen = max(g.LastSeen, t.Last)
		}
	}
	return order, hosts, nil
}

type scanner interface{ Scan(...any) error }

// eachRow runs a query and calls fn on each row.
func eachRow(ctx context.Context, db *sql.DB, stmt string, args []any, fn func(scanner) error) error {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// turnMembers lists the members with a proxy or transcript turn in the window (the filter's
// member alone when there is one). The other filters may leave such a member without turns:
// memberTurns then gives it no group.
func turnMembers(ctx context.Context, db *sql.DB, f filters) ([]string, error) {
	if f.Member != "" {
		return []string{f.Member}, nil
	}
	var out []string
	err := eachRow(ctx, db, `SELECT member FROM api_turns WHERE member != '' AND ts >= :since
		UNION SELECT member FROM token_usage WHERE member != '' AND ts >= :since`, []any{sql.Named("since", f.sinceMs())}, func(sc scanner) error {
		var m string
		err := sc.Scan(&m)
		out = append(out, m)
		return err
	})
	return out, err
}
