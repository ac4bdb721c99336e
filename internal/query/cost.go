// Cost answers "what did it cost" from the store: token figures and dollars grouped by
// session, day, hour, model, project, client or member, over a time range and optionally one
// project, client, session, member or model.
//
// Accounting: a model turn seen by the proxy (api_turns, exact) and by a transcript (token_usage,
// as the client logged it) is counted once, from the proxy. They are joined by the upstream
// message id; a transcript row without one (Codex logs none) is taken as the proxy's when the
// proxy saw a turn of the same session within store.JoinWindowMs of it. Transcript rows are already one
// per message (the writer merges a message's lines and copies by id). The totals are the same
// whatever the grouping.
//
// Filters are applied inside each part of the turn list, before the proxy/transcript join, so a
// time range or session condition can use the ts and session_id indexes of both tables. The project
// a proxy turn is filtered on is the one it is reported under: its session's (see store.TurnsSQL). Days
// and hours are local, as `observerctl cost` prints them.

package query

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/observerhq/observer/pkg/store"
)

// CostKeys are the keys rows can be grouped by.
var CostKeys = []string{"session", "day", "hour", "model", "project", "client", "member"}

// column is the JSON field of each grouping key.
var column = map[string]string{
	"session": "session_id",
	"day":     "day",
	"hour":    "hour",
	"model":   "model",
	"project": "project",
	"client":  "client",
	"member":  "member",
}

// CostRow is one group. The JSON is the contract `observerctl cost --json` keeps for later tools.
type CostRow struct {
	SessionID             string  `json:"session_id,omitempty"`
	Title                 string  `json:"title,omitempty"` // the session's title, grouped by session
	Client                string  `json:"client,omitempty"`
	Day                   string  `json:"day,omitempty"`
	Hour                  string  `json:"hour,omitempty"` // local, "2026-11-30T14"
	Model                 string  `json:"model,omitempty"`
	Project               string  `json:"project,omitempty"`
	Member                string  `json:"member,omitempty"` // a hub's team member ("": the hub's own rows)
	InputTokens           int64   `json:"input_tokens"`
	OutputTokens          int64   `json:"output_tokens"`
	CacheReadTokens       int64   `json:"cache_read_tokens"`
	CacheCreationTokens   int64   `json:"cache_creation_tokens"`
	CacheCreation1hTokens int64   `json:"cache_creation_1h_tokens"`
	ReasoningTokens       int64   `json:"reasoning_tokens"`
	CostUSD               float64 `json:"cost_usd"`
	Turns                 int64   `json:"turns"`
	ProxyTurns            int64   `json:"proxy_turns"`      // of Turns, those measured by the proxy
	UnreliableTurns       int64   `json:"unreliable_turns"` // of Turns, from transcripts known to log placeholders
	UnpricedTurns         int64   `json:"unpriced_turns"`   // of Turns, of a model without a price
	Reliability           string  `json:"reliability,omitempty"`
	// LastTS is the time (ms) of the group's latest turn, when CostQuery.Last asks for it.
	LastTS int64 `json:"last_ts,omitempty"`
}

// CostQuery selects what to report.
type CostQuery struct {
	GroupBy []string // among CostKeys; empty means one total row
	Filter
	// Model, when set, keeps that model's turns alone.
	Model string
	// Last asks for each row's latest turn (CostRow.LastTS). The rollups do not keep it: the turns
	// are read raw.
	Last bool
}

// CostReport is the answer: the rows, and their total.
type CostReport struct {
	GroupBy []string  `json:"group_by"`
	Since   string    `json:"since,omitempty"`
	Until   string    `json:"until,omitempty"`
	Rows    []CostRow `json:"rows"`
	Total   CostRow   `json:"total"`
	// Compression is what the proxy's request compression saved in the same window (nil: none).
	Compression *CompressionReport `json:"compression,omitempty"`
}

// conds returns the filter conditions of the proxy part and of the transcript part of the raw
// turns between from and to (ms; 0 for no bound), and the same filters on usage_hourly's rows.
// No condition at all is "1": for all time, reading the whole table beats walking the time index
// row by row (17 ms against 46 ms for 21,000 turns).
func conds(q CostQuery, from, to int64) (proxy, transcript string) {
	var p, t []string
	add := func(on bool, pc, tc string) {
		if on {
			p, t = append(p, pc), append(t, tc)
		}
	}
	add(from != 0, fmt.Sprintf("api_turns.ts >= %d", from), fmt.Sprintf("t.ts >= %d", from))
	add(to != 0, fmt.Sprintf("api_turns.ts < %d", to), fmt.Sprintf("t.ts < %d", to))
	add(q.SessionID != "", "api_turns.session_id = :session", "t.session_id = :session")
	add(len(q.SessionIDs) > 0, "api_turns.session_id IN ("+idList(q)+")", "t.session_id IN ("+idList(q)+")")
	add(q.Client != "", "api_turns.client = :client", "t.client = :client")
	add(q.Project != "", store.ProxyProject+" = :project", "t.project = :project")
	add(q.Member != "", "api_turns.member = :member", "t.member = :member")
	add(q.Model != "", "api_turns.model = :model", "t.model = :model")
	if len(p) == 0 {
		return "1", "1"
	}
	return strings.Join(p, " AND "), strings.Join(t, " AND ")
}

// idList is the placeholders of q.SessionIDs (arguments from idArgs).
func idList(q CostQuery) string {
	ph := make([]string, len(q.SessionIDs))
	for i := range ph {
		ph[i] = fmt.Sprintf(":sid%d", i)
	}
	return strings.Join(ph, ", ")
}

// queryArgs are the named arguments of the parts' filters.
func queryArgs(q CostQuery) []any {
	return append(idArgs(q), sql.Named("session", q.SessionID), sql.Named("client", q.Client),
		sql.Named("project", q.Project), sql.Named("member", q.Member), sql.Named("model", q.Model), sql.Named("window", store.JoinWindowMs))
}

func idArgs(q CostQuery) []any {
	var args []any
	for i, id := range q.SessionIDs {
		args = append(args, sql.Named(fmt.Sprintf("sid%d", i), id))
	}
	return args
}

// rawPart is the raw turns between from and to (ms, 0 for no bound) in the columns of rollupPart.
func rawPart(q CostQuery, from, to int64) string {
	pc, tc := conds(q, from, to)
	return `SELECT ts, client, session_id, project, model, 1 AS turns, proxy AS proxy_turns,
       reliability = 'unreliable' AS unreliable_turns, reliability = 'unknown' AS unpriced_turns,
       input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens,
       reasoning_tokens, cost_usd, member FROM (` + fmt.Sprintf(store.MemberTurnsSQL, pc, tc) + ")"
}

// rollupPart is usage_hourly's hours from from to to (ms, whole hours, 0 for no bound).
func rollupPart(q CostQuery, from, to int64) string {
	return levelPart(q, "usage_hourly", "hour", "session_id", from, to)
}

// levelPart reads a usage rollup (usage_hourly, usage_daily by day, usage_sessions without time)
// in the columns of rawPart: its time column as ts (0 without one), "" for a session it lacks.
func levelPart(q CostQuery, table, timeCol, sessionCol string, from, to int64) string {
	var c []string
	if from != 0 {
		c = append(c, fmt.Sprintf("%s >= %d", timeCol, from))
	}
	if to != 0 {
		c = append(c, fmt.Sprintf("%s < %d", timeCol, to))
	}
	if q.SessionID != "" {
		c = append(c, "session_id = :session")
	}
	if len(q.SessionIDs) > 0 {
		c = append(c, "session_id IN ("+idList(q)+")")
	}
	if q.Client != "" {
		c = append(c, "client = :client")
	}
	if q.Project != "" {
		c = append(c, "project = :project")
	}
	if q.Model != "" {
		c = append(c, "model = :model")
	}
	where := ""
	if len(c) > 0 {
		where = " WHERE " + strings.Join(c, " AND ")
	}
	return `SELECT ` + timeCol + ` AS ts, client, ` + sessionCol + ` AS session_id, project, model, turns, proxy_turns,
       unreliable_turns, unpriced_turns, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
       cache_creation_1h_tokens, reasoning_tokens, cost_usd, '' AS member FROM ` + table + where
}

// useRollups is false only in tests that compare with raw rows.
var useRollups = true

// levels picks the turns q covers (only names the rollup when it is the one part: usage_hourly's
// ts is an hour, usage_daily's a local day, each usable as a key as it is) from the coarsest rollups that answer it exactly (the writer
// keeps each of them with every turn once, by the same rule as the raw query). Without rollups
// (a store not migrated yet), or when days or hours are asked in a time zone whose offset is not
// a whole number of hours, everything is read raw. Otherwise: usage_sessions for all time without a
// day or hour key; usage_daily for the whole local days of a window grouped by day, model,
// project or client only (kept in this zone); usage_hourly for whole hours; raw rows for the
// partial hours at the edges.
func levels(ctx context.Context, db Querier, q CostQuery) (parts []string, rolled bool, only string, err error) {
	from, to := int64(0), int64(0)
	if !q.Since.IsZero() {
		from = q.Since.UnixMilli()
	}
	if !q.Until.IsZero() {
		to = q.Until.UnixMilli()
	}
	raw := rawPart(q, from, to)
	// The rollups have no member column: a member's figures, or figures by member, are read raw
	// (on migration 0015's partial indexes when one member is asked for). Nor do they keep each
	// turn's time.
	if !useRollups || q.Member != "" || slices.Contains(q.GroupBy, "member") || q.Last {
		return []string{raw}, false, "", nil
	}
	timed := slices.Contains(q.GroupBy, "day") || slices.Contains(q.GroupBy, "hour")
	if timed {
		for _, at := range []time.Time{time.Now(), q.Since, q.Until} {
			if _, off := at.Zone(); !at.IsZero() && off%3600 != 0 {
				return []string{raw}, false, "", nil
			}
		}
	}
	var hourly, daily, sessions, zone sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'usage_hourly'),
		(SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'usage_daily'),
		(SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'usage_sessions'),
		(SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'rollup_state')`).Scan(&hourly, &daily, &sessions, &zone); err != nil {
		return nil, false, "", err
	}
	if !hourly.Valid {
		return []string{raw}, false, "", nil
	}
	if sessions.Valid && !timed && from == 0 && to == 0 {
		return []string{levelPart(q, "usage_sessions", "0", "session_id", 0, 0)}, true, "usage_sessions", nil
	}
	dayKeys := !slices.ContainsFunc(q.GroupBy, func(k string) bool { return k == "hour" || k == "session" })
	if daily.Valid && zone.Valid && dayKeys && q.SessionID == "" && len(q.SessionIDs) == 0 && store.WholeHourZone() {
		var kept sql.NullString
		if err := db.QueryRowContext(ctx, `SELECT value FROM rollup_state WHERE key = 'zone'`).Scan(&kept); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, false, "", err
		}
		d1, d2 := from, to
		if from != 0 {
			if d1 = store.LocalDay(from); d1 != from {
				d1 = store.NextLocalDay(d1)
			}
		}
		if to != 0 {
			d2 = store.LocalDay(to)
		}
		if kept.String == store.ZoneKey() && (from == 0 || to == 0 || d1 < d2) {
			parts = []string{levelPart(q, "usage_daily", "day", "''", d1, d2)}
			if from != 0 && d1 != from {
				parts = append(parts, hourlyParts(q, from, d1)...)
			}
			if to != 0 && d2 != to {
				parts = append(parts, hourlyParts(q, d2, to)...)
			}
			if len(parts) == 1 {
				return parts, true, "usage_daily", nil
			}
			return parts, true, "", nil
		}
	}
	parts = hourlyParts(q, from, to)
	if len(parts) == 1 && strings.Contains(parts[0], "FROM usage_hourly") {
		return parts, true, "usage_hourly", nil
	}
	return parts, true, "", nil
}

// hourlyParts reads whole hours from usage_hourly and the partial hours at the edges raw.
func hourlyParts(q CostQuery, from, to int64) []string {
	h1, h2 := from, to
	if from != 0 {
		h1 = store.HourOf(from + store.HourMs - 1)
	}
	if to != 0 {
		h2 = store.HourOf(to)
	}
	if from != 0 && to != 0 && h1 >= h2 {
		return []string{rawPart(q, from, to)}
	}
	parts := []string{rollupPart(q, h1, h2)}
	if from != 0 && h1 != from {
		parts = append(parts, rawPart(q, from, h1))
	}
	if to != 0 && h2 != to {
		parts = append(parts, rawPart(q, h2, to))
	}
	return parts
}

// Cost computes the report: q's turns, each once, grouped by q.GroupBy. The groups add up to
// the total whatever the grouping.
func Cost(ctx context.Context, db Querier, q CostQuery) (*CostReport, error) {
	var keys []string
	for _, k := range q.GroupBy {
		if _, ok := column[k]; !ok {
			return nil, fmt.Errorf("cannot group by %q: choose among %s", k, strings.Join(CostKeys, ", "))
		}
		keys = append(keys, k)
	}
	rep := &CostReport{GroupBy: keys, Rows: []CostRow{}}
	if !q.Since.IsZero() {
		rep.Since = q.Since.UTC().Format(time.RFC3339)
	}
	if !q.Until.IsZero() {
		rep.Until = q.Until.UTC().Format(time.RFC3339)
	}
	parts, rolled, only, err := levels(ctx, db, q)
	src := strings.Join(parts, "\nUNION ALL\n")
	if err != nil {
		return nil, fmt.Errorf("cost query: %w", err)
	}
	// Days and hours: from rollups, grouped by the Unix ms of their local start (a few comparisons
	// a row) and labelled here, once per group; raw rows alone (no rollup, or a zone whose offset
	// is not whole hours) by SQLite's localtime. Groups with the same label (a day whose offset
	// changed) are added together.
	var sel, group []string
	for _, k := range keys {
		expr := column[k]
		switch {
		case k == "day" && only == "usage_daily", k == "hour" && only == "usage_hourly":
			expr = "ts" // the rollup's own bucket: grouped in its key's order, without a sort
		case k == "day" && rolled:
			expr = store.LocalBucketSQL("ts", "day", q.Since, time.Now())
		case k == "hour" && rolled:
			expr = "ts - ts % 3600000"
		case k == "day":
			expr = "date(ts / 1000, 'unixepoch', 'localtime')"
		case k == "hour":
			expr = "strftime('%Y-%m-%dT%H', ts / 1000, 'unixepoch', 'localtime')"
		}
		sel = append(sel, expr)
	}
	// GROUP BY in the order of the rollup's primary key, which lets SQLite group along it instead
	// of sorting; the result is the same in any order.
	keyOrder := []string{"day", "hour", "client", "session", "project", "model", "member"}
	if only == "usage_sessions" {
		keyOrder = []string{"client", "session", "model", "project"}
	}
	for _, k := range keyOrder {
		if i := slices.Index(keys, k); i >= 0 {
			group = append(group, sel[i])
		}
	}
	measures := []string{"input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens",
		"cache_creation_1h_tokens", "reasoning_tokens", "cost_usd", "turns", "proxy_turns", "unreliable_turns", "unpriced_turns"}
	for i, m := range measures {
		measures[i] = "sum(" + m + ")"
	}
	if q.Last {
		measures = append(measures, "max(ts)")
	}
	stmt := "SELECT " + strings.Join(append(sel, measures...), ", ") + " FROM (" + src + ")"
	if len(group) > 0 {
		stmt += " GROUP BY " + strings.Join(group, ", ")
	}
	rows, err := db.QueryContext(ctx, stmt, queryArgs(q)...)
	if err != nil {
		return nil, fmt.Errorf("cost query: %w", err)
	}
	defer rows.Close()
	groups := map[string]*CostRow{}
	var order []*CostRow
	labels := map[int64][2]string{} // hour start -> local day, local hour
	keyVals := make([]any, len(keys))
	for rows.Next() {
		var r CostRow
		ts := make([]int64, len(keys))
		dest := make([]any, 0, len(keys)+11)
		for i, k := range keys {
			switch {
			case (k == "day" || k == "hour") && rolled:
				dest = append(dest, &ts[i])
			default:
				keyVals[i] = new(string)
				dest = append(dest, keyVals[i])
			}
		}
		var in, out, cr, cc, cc1, rs, turns, proxy, unrel, unpriced, last sql.NullInt64
		var usd sql.NullFloat64
		dest = append(dest, &in, &out, &cr, &cc, &cc1, &rs, &usd, &turns, &proxy, &unrel, &unpriced)
		if q.Last {
			dest = append(dest, &last)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		var gk strings.Builder
		for i, k := range keys {
			var v string
			if (k == "day" || k == "hour") && rolled {
				l, ok := labels[ts[i]]
				if !ok {
					t := time.UnixMilli(ts[i]).In(time.Local)
					day := time.UnixMilli(ts[i] + 12*store.HourMs).In(time.Local) // a bucket of a day: its midday
					l = [2]string{day.Format("2006-01-02"), t.Format("2006-01-02T15")}
					labels[ts[i]] = l
				}
				v = l[0]
				if k == "hour" {
					v = l[1]
				}
			} else {
				v = *keyVals[i].(*string)
			}
			*KeyField(&r, k) = v
			gk.WriteString(v)
			gk.WriteByte(0)
		}
		r.InputTokens, r.OutputTokens, r.CacheReadTokens = in.Int64, out.Int64, cr.Int64
		r.CacheCreationTokens, r.CacheCreation1hTokens, r.ReasoningTokens = cc.Int64, cc1.Int64, rs.Int64
		r.CostUSD, r.Turns, r.ProxyTurns = usd.Float64, turns.Int64, proxy.Int64
		r.UnreliableTurns, r.UnpricedTurns = unrel.Int64, unpriced.Int64
		r.LastTS = last.Int64
		if r.Turns == 0 {
			continue // no group rows when there is nothing at all
		}
		g := groups[gk.String()]
		if g == nil {
			g = &CostRow{SessionID: r.SessionID, Client: r.Client, Day: r.Day, Hour: r.Hour, Model: r.Model, Project: r.Project, Member: r.Member}
			groups[gk.String()] = g
			order = append(order, g)
		}
		g.Add(r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Grouped first by day or hour: in time order. Otherwise highest cost first. Ties go by the
	// keys in order (unique per group: a total order).
	byTime := len(keys) > 0 && (keys[0] == "day" || keys[0] == "hour")
	slices.SortFunc(order, func(a, b *CostRow) int {
		if byTime {
			if c := strings.Compare(*KeyField(a, keys[0]), *KeyField(b, keys[0])); c != 0 {
				return c
			}
		}
		if a.CostUSD != b.CostUSD {
			if a.CostUSD > b.CostUSD {
				return -1
			}
			return 1
		}
		for _, k := range keys {
			if c := strings.Compare(*KeyField(a, k), *KeyField(b, k)); c != 0 {
				return c
			}
		}
		return 0
	})
	rep.Rows = slices.Grow(rep.Rows, len(order))
	for _, g := range order {
		g.Reliability = g.reliability()
		rep.Rows = append(rep.Rows, *g)
		rep.Total.Add(*g)
	}
	rep.Total.Reliability = rep.Total.reliability()
	if slices.Contains(keys, "session") {
		if err := addTitles(ctx, db, rep.Rows); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// addTitles gives each row its session's title (sessions.title).
func addTitles(ctx context.Context, db Querier, rows []CostRow) error {
	if len(rows) == 0 {
		return nil
	}
	type key struct{ client, id string }
	titles := map[key]string{}
	byID := map[string]string{}
	res, err := db.QueryContext(ctx, `SELECT client, session_id, title FROM sessions WHERE title != ''`)
	if err != nil {
		return fmt.Errorf("session titles: %w", err)
	}
	defer res.Close()
	for res.Next() {
		var k key
		var t string
		if err := res.Scan(&k.client, &k.id, &t); err != nil {
			return err
		}
		titles[k], byID[k.id] = t, t
	}
	if err := res.Err(); err != nil {
		return err
	}
	for i := range rows {
		r := &rows[i]
		if r.Client != "" {
			r.Title = titles[key{r.Client, r.SessionID}]
		} else {
			r.Title = byID[r.SessionID]
		}
	}
	return nil
}

// KeyField is the field of r that holds group key k (session, day, hour, model, project, client, member).
func KeyField(r *CostRow, k string) *string {
	switch k {
	case "session":
		return &r.SessionID
	case "day":
		return &r.Day
	case "hour":
		return &r.Hour
	case "model":
		return &r.Model
	case "project":
		return &r.Project
	case "member":
		return &r.Member
	}
	return &r.Client
}

// Add adds r's figures into t; t's group keys stay.
func (t *CostRow) Add(r CostRow) {
	t.InputTokens += r.InputTokens
	t.OutputTokens += r.OutputTokens
	t.CacheReadTokens += r.CacheReadTokens
	t.CacheCreationTokens += r.CacheCreationTokens
	t.CacheCreation1hTokens += r.CacheCreation1hTokens
	t.ReasoningTokens += r.ReasoningTokens
	t.CostUSD += r.CostUSD
	t.Turns += r.Turns
	t.ProxyTurns += r.ProxyTurns
	t.UnreliableTurns += r.UnreliableTurns
	t.UnpricedTurns += r.UnpricedTurns
	t.LastTS = max(t.LastTS, r.LastTS)
}

// Reliability tags of a figure: its least trustworthy turn's.
const (
	Accurate     = "accurate"      // every turn measured by observer-proxy
	Approximate  = "approximate"   // some turns as a client's transcript logged them
	Unreliable   = "unreliable"    // some turns from a transcript known to log placeholders
	UnknownPrice = "unknown price" // some turns of a model without a price: their dollars are 0
)

func (r CostRow) reliability() string {
	switch {
	case r.Turns == 0:
		return ""
	case r.UnpricedTurns > 0:
		return UnknownPrice
	case r.UnreliableTurns > 0:
		return Unreliable
	case r.ProxyTurns < r.Turns:
		return Approximate
	}
	return Accurate
}

// ModelSpend is one model's turns in SessionSpend's or ProjectSpend's answer.
type ModelSpend struct {
	Model                                                           string
	InputTokens, OutputTokens, CacheReadTokens, CacheCreationTokens int64
	CostUSD                                                         float64
	Turns, ProxyTurns                                               int64
}

// SessionSpend is a session's turns (by id, of any client), all of them, by model, costliest
// first: Cost's rows grouped by model.
func SessionSpend(ctx context.Context, db Querier, sessionID string) ([]ModelSpend, error) {
	return spend(ctx, db, CostQuery{GroupBy: []string{"model"}, Filter: Filter{SessionID: sessionID}})
}

// ProjectSpend is the turns since since (ms) of the sessions of a project seen since then, by
// model, costliest first. A turn counts for the project of its session, which also places the
// proxy's turns (the proxy does not know the project), where Cost's project filter selects
// transcript turns by their own project: so the sessions are chosen here, and Cost sums their
// turns.
func ProjectSpend(ctx context.Context, db Querier, project string, since int64) ([]ModelSpend, error) {
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT session_id FROM sessions WHERE project = ? AND last_seen >= ?`, project, since)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil || len(ids) == 0 {
		return nil, err
	}
	q := CostQuery{GroupBy: []string{"model"}, Filter: Filter{SessionIDs: ids}}
	if since != 0 {
		q.Since = time.UnixMilli(since)
	}
	return spend(ctx, db, q)
}

// spend is Cost's answer to q (grouped by model) as ModelSpend rows.
func spend(ctx context.Context, db Querier, q CostQuery) ([]ModelSpend, error) {
	rep, err := Cost(ctx, db, q)
	if err != nil {
		return nil, err
	}
	var out []ModelSpend
	for _, r := range rep.Rows {
		out = append(out, ModelSpend{Model: r.Model, InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheCreationTokens: r.CacheCreationTokens, CostUSD: r.CostUSD,
			Turns: r.Turns, ProxyTurns: r.ProxyTurns})
	}
	return out, nil
}
