package dash

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/observerhq/observer/internal/query"
)

// Team mode: a hub's store holds many members' events, each row naming the member the hub
// received it from (migration 0015). Which member a figure belongs to is the row's own member
// column, never its session's (query/members.go says why); a member's dollars and tokens are
// query.Cost's (grouped by member, or filtered to one), so a member's figures plus the other
// members' plus the unattributed rows add up to query.Cost's total.

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
// by (the key "" without by): sessions and actions (query.MemberSessions, query.MemberActions),
// and the turns (query.Cost grouped by member and model, and by), by model so that each model's
// dollars are split into billing buckets at its own prices.
func (s *Server) memberFigures(ctx context.Context, db query.DB, f filters, model, by string) ([]*memberFigures, map[string]*memberHosts, error) {
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
	mq := query.MemberQuery{Filter: f.readFilter(), Model: model, By: by}
	hosts := map[string]*memberHosts{}
	sessions, err := query.MemberSessions(ctx, db, mq)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range sessions {
		g := group(r.Member, r.Key)
		g.Sessions += r.Sessions
		g.LastSeen = max(g.LastSeen, r.LastSeen)
		h := hosts[r.Member]
		if h == nil {
			h = &memberHosts{hosts: []string{}}
			hosts[r.Member] = h
		}
		if r.Host != "" && !slices.Contains(h.hosts, r.Host) {
			h.hosts = append(h.hosts, r.Host)
		}
		if r.OSUser != "" && r.LastSeen >= h.at {
			h.osUser, h.at = r.OSUser, r.LastSeen
		}
	}
	for _, h := range hosts {
		slices.Sort(h.hosts)
	}
	actions, err := query.MemberActions(ctx, db, mq)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range actions {
		g := group(r.Member, r.Key)
		g.Actions += r.Actions
		g.Failures += r.Failures
		g.LastSeen = max(g.LastSeen, r.LastTS)
	}
	keys := []string{"member", "model"}
	if by != "" && by != "model" {
		keys = append(keys, by)
	}
	rep, err := query.Cost(ctx, db, query.CostQuery{GroupBy: keys, Model: model, Last: true,
		Filter: query.Filter{Since: f.Since, Project: f.Project, Client: f.Client, Member: f.Member}})
	if err != nil {
		return nil, nil, err
	}
	// Rows of no member are in no group. The rest are added member by member, then by the keys in
	// order: a group's dollars are a sum of floats, whose last digits depend on its order.
	turns := slices.DeleteFunc(rep.Rows, func(r query.CostRow) bool { return r.Member == "" })
	slices.SortFunc(turns, func(a, b query.CostRow) int {
		for _, k := range keys {
			if c := strings.Compare(*query.KeyField(&a, k), *query.KeyField(&b, k)); c != 0 {
				return c
			}
		}
		return 0
	})
	for _, t := range turns {
		key := ""
		if by != "" {
			key = *query.KeyField(&t, by)
		}
		g := group(t.Member, key)
		g.row.Add(t)
		g.Buckets.add(s.split(t))
		g.LastSeen = max(g.LastSeen, t.LastTS)
	}
	return order, hosts, nil
}
