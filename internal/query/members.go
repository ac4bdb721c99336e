package query

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
// A member's dollars and tokens are Cost's (Filter.Member, or grouped by "member"): the member
// condition goes into both parts of store.TurnsSQL beside the other filters, so a member's figures
// plus the other members' plus the unattributed rows add up to Cost's total. MemberSessions and
// MemberActions count the rest of a member's figures.

import (
	"context"
	"database/sql"
	"fmt"
)

// MemberQuery selects what the member reads count: the Filter's window, project, client and
// member (rows of no member are left out), of one model when Model is set, grouped by member and,
// with By ("project", "client" or "model"), by that column too.
type MemberQuery struct {
	Filter
	Model string
	By    string
}

// memberKeys are the columns MemberQuery.By may name: columns of sessions, actions and the turns
// alike.
var memberKeys = map[string]bool{"project": true, "client": true, "model": true}

// conds are the query's conditions on a table with the envelope columns, model and member, its
// time column named tsCol, and the column of By (an empty string literal without one).
func (q MemberQuery) conds(tsCol string) (*sqlConds, string, error) {
	keyCol := "''"
	if q.By != "" {
		if !memberKeys[q.By] {
			return nil, "", fmt.Errorf("cannot compare members by %q: choose among project, client, model", q.By)
		}
		keyCol = q.By
	}
	c := envelopeConds(q.Filter, tsCol)
	c.add("member != ''")
	if q.Model != "" {
		c.add("model = :model", sql.Named("model", q.Model))
	}
	return c, keyCol, nil
}

// MemberSessionRow is the sessions of one member, key of By, host and OS user, seen in the window
// (their last event in it).
type MemberSessionRow struct {
	Member, Key, Host, OSUser string
	Sessions                  int64
	LastSeen                  int64 // ms: the latest of them
}

// MemberSessions counts the sessions of each member (and key of q.By), host and OS user, in the
// store's order. The model filter keeps the sessions whose main model it is.
func MemberSessions(ctx context.Context, db Querier, q MemberQuery) ([]MemberSessionRow, error) {
	c, keyCol, err := q.conds("last_seen")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT member, "+keyCol+", host, os_user, count(*), max(last_seen) FROM sessions"+c.sql()+
		" GROUP BY member, "+keyCol+", host, os_user", c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MemberSessionRow
	for rows.Next() {
		var r MemberSessionRow
		if err := rows.Scan(&r.Member, &r.Key, &r.Host, &r.OSUser, &r.Sessions, &r.LastSeen); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// MemberActionRow is the actions of one member and key of By in the window.
type MemberActionRow struct {
	Member, Key string
	Actions     int64 // rows of the actions table, as the Overview counts them
	Failures    int64 // of Actions, those whose result reported an error
	LastTS      int64 // ms: the latest of them
}

// MemberActions counts the actions of each member (and key of q.By), in the store's order.
func MemberActions(ctx context.Context, db Querier, q MemberQuery) ([]MemberActionRow, error) {
	c, keyCol, err := q.conds("ts")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, "SELECT member, "+keyCol+", count(*), coalesce(sum(success = 0), 0), max(ts) FROM actions"+c.sql()+
		" GROUP BY member, "+keyCol, c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []MemberActionRow
	for rows.Next() {
		var r MemberActionRow
		if err := rows.Scan(&r.Member, &r.Key, &r.Actions, &r.Failures, &r.LastTS); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
