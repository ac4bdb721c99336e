package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Rollups: usage_hourly and actions_hourly (migration 0005) sum the raw rows of each UTC hour. The
// writer keeps them exact: every batch notes the hours its rows touch (dirtyHours) and, in the
// same transaction, recomputes each such hour from the raw rows. A bulk load (WriteOptions.Bulk)
// records those hours in rollup_pending instead, and CatchUpRollups recomputes each once after
// the load: the rollups lag behind the raw rows of a backlog while it is stored. Recomputing instead of adding
// deltas keeps every rule of the raw queries (an action's call and result merged, a message's
// usage replaced by a larger one, a transcript row that stops counting once the proxy reports the
// same turn) without restating them. A reader that sums rollups for whole hours and raw rows for
// the partial hours at a window's edges gets exactly what the raw rows alone would give.

// HourMs is an hour in milliseconds, the rollups' bucket.
const HourMs int64 = 3_600_000

// HourOf is the start of the UTC hour holding ms.
func HourOf(ms int64) int64 {
	h := ms - ms%HourMs
	if ms < 0 && ms%HourMs != 0 {
		h -= HourMs
	}
	return h
}

// JoinWindowMs: a transcript row without a message id (Codex logs none) is the proxy's turn when
// the proxy saw a turn of the same session this close in time (see TurnsSQL).
const JoinWindowMs int64 = 30_000

// ProxyProject is a proxy turn's project. The proxy does not know the client's cwd, so a turn
// without one takes its session's.
const ProxyProject = `CASE WHEN api_turns.project != '' THEN api_turns.project
            ELSE coalesce((SELECT s.project FROM sessions s WHERE s.client = api_turns.client
                           AND s.session_id = api_turns.session_id), '') END`

// TurnsSQL is every model turn once: proxy turns; OTLP turns (origin 'otlp') the proxy did not see
// (joined by request id, else by session, time within :window ms and the same input and output
// figures, so that one turn stands for one); and transcript messages neither saw (joined by
// message id, by request id, or by the transcript message a session-less proxy turn was linked
// to; a Codex message, whose OTLP turn carries no id, by session, time and figures; a message
// without an id by session and time within :window ms). %[1]s and %[2]s
// are the filter conditions of the proxy part (table api_turns) and of the transcript part (alias
// t). Columns: ts, client, session_id, project, model, the six token counts, cost_usd, proxy (1
// for the proxy's turns) and reliability. (It runs in migrations too, on tables of any version
// since 0005: it names no later column.)
var TurnsSQL = strings.NewReplacer("{{member}}", "", "{{t.member}}", "").Replace(turnsTemplate)

// MemberTurnsSQL is TurnsSQL with one more column, member: the row's own (the team member a hub
// received it from, empty on a member's own store; migration 0015).
var MemberTurnsSQL = strings.NewReplacer("{{member}}", ", api_turns.member", "{{t.member}}", ", t.member").Replace(turnsTemplate)

const turnsTemplate = `
SELECT ts, client, session_id, ` + ProxyProject + ` AS project,
       model, input_tokens, output_tokens, cache_read_tokens,
       cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd, api_turns.origin = '' AS proxy, reliability{{member}}
  FROM api_turns WHERE %[1]s
   AND (api_turns.origin = ''
        OR (api_turns.request_id != '' AND NOT EXISTS (SELECT 1 FROM api_turns p WHERE p.request_id = api_turns.request_id
            AND p.request_id != '' AND p.origin = ''))
        OR (api_turns.request_id = '' AND (api_turns.session_id = '' OR NOT EXISTS (SELECT 1 FROM api_turns p
            WHERE p.session_id = api_turns.session_id AND p.origin = '' AND p.client = api_turns.client
            AND p.ts BETWEEN api_turns.ts - :window AND api_turns.ts + :window
            AND p.input_tokens = api_turns.input_tokens AND p.output_tokens = api_turns.output_tokens))))
UNION ALL
SELECT t.ts, t.client, t.session_id, t.project, t.model, t.input_tokens, t.output_tokens, t.cache_read_tokens,
       t.cache_creation_tokens, t.cache_creation_1h_tokens, t.reasoning_tokens, t.cost_usd, 0, t.reliability{{t.member}}
  FROM token_usage t
 WHERE %[2]s
   AND NOT (t.request_id != '' AND EXISTS (SELECT 1 FROM api_turns a WHERE a.request_id = t.request_id AND a.request_id != ''))
   AND CASE WHEN t.message_id != ''
       THEN NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.message_id = t.message_id)
        AND NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.transcript_message_id = t.message_id)
        AND NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.origin = 'otlp' AND a.request_id = '' AND a.message_id = ''
                        AND a.client = t.client AND a.session_id = t.session_id
                        AND a.ts BETWEEN t.ts - :window AND t.ts + :window
                        AND a.input_tokens = t.input_tokens AND a.output_tokens = t.output_tokens)
       ELSE t.session_id = '' OR NOT EXISTS (SELECT 1 FROM api_turns a WHERE a.session_id = t.session_id
                                             AND a.ts BETWEEN t.ts - :window AND t.ts + :window)
       END`

// usageSums are the summed columns of usage_hourly, in its order, as sums over TurnsSQL rows.
const usageSums = `count(*), sum(proxy), sum(reliability = 'unreliable'), sum(reliability = 'unknown'),
       sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens),
       sum(cache_creation_1h_tokens), sum(reasoning_tokens), sum(cost_usd)`

var usageHourSQL = `INSERT INTO usage_hourly SELECT :hour, client, session_id, project, model, ` + usageSums + `
  FROM (` + fmt.Sprintf(TurnsSQL, "api_turns.ts >= :hour AND api_turns.ts < :hour + 3600000",
	"t.ts >= :hour AND t.ts < :hour + 3600000") + `)
 GROUP BY client, session_id, project, model`

// usageSessionHourSQL is usageHourSQL for the rows of one session id of the hour (any client: a
// transcript row joins a turn by session id alone).
var usageSessionHourSQL = `INSERT INTO usage_hourly SELECT :hour, client, session_id, project, model, ` + usageSums + `
  FROM (` + fmt.Sprintf(TurnsSQL, "api_turns.session_id = :session AND api_turns.ts >= :hour AND api_turns.ts < :hour + 3600000",
	"t.session_id = :session AND t.ts >= :hour AND t.ts < :hour + 3600000") + `)
 GROUP BY client, session_id, project, model`

var usageAllSQL = `INSERT INTO usage_hourly SELECT ts - ts % 3600000 AS h, client, session_id, project, model, ` + usageSums + `
  FROM (` + fmt.Sprintf(TurnsSQL, "1", "1") + `)
 GROUP BY h, client, session_id, project, model`

const actionSums = `count(*), coalesce(sum(success = 0), 0), coalesce(sum(success IS NULL), 0),
       coalesce(sum(duration_ms > 0), 0), coalesce(sum(CASE WHEN duration_ms > 0 THEN duration_ms END), 0)`

const actionsHourSQL = `INSERT INTO actions_hourly SELECT :hour, client, session_id, project, type, tool, ` + actionSums + `
  FROM actions WHERE ts >= :hour AND ts < :hour + 3600000
 GROUP BY client, session_id, project, type, tool`

// actionsSessionHourSQL is actionsHourSQL for one session's rows of the hour.
const actionsSessionHourSQL = `INSERT INTO actions_hourly SELECT :hour, client, session_id, project, type, tool, ` + actionSums + `
  FROM actions WHERE session_id = :session AND client = :client AND ts >= :hour AND ts < :hour + 3600000
 GROUP BY client, session_id, project, type, tool`

// recomputeSessions replaces actions_hourly's rows of each dirty (hour, session) by what the
// session's actions of that hour sum to.
func recomputeSessions(ctx context.Context, tx *sql.Tx, bySess map[int64]map[sessionKey]bool) error {
	return recomputeBy(ctx, tx, "actions_hourly", bySess,
		`DELETE FROM actions_hourly WHERE hour = ? AND client = ? AND session_id = ?`, actionsSessionHourSQL,
		func(h int64, k sessionKey) []any { return []any{h, k.client, k.id} },
		func(h int64, k sessionKey) []any {
			return []any{sql.Named("hour", h), sql.Named("session", k.id), sql.Named("client", k.client)}
		})
}

// recomputeBy replaces a rollup table's rows of each dirty (hour, key) of bySess (an hour whose
// set is nil is not its to do): del, run with delArgs, deletes them and ins, run with insArgs,
// computes them again from the raw rows.
func recomputeBy[K comparable](ctx context.Context, tx *sql.Tx, table string, bySess map[int64]map[K]bool, del, ins string,
	delArgs, insArgs func(int64, K) []any) error {
	dst, ist := prepare(tx, del), prepare(tx, ins)
	for _, h := range slices.Sorted(maps.Keys(bySess)) {
		keys := bySess[h]
		if keys == nil {
			continue
		}
		for k := range keys {
			if _, err := dst.ExecContext(ctx, delArgs(h, k)...); err != nil {
				return fmt.Errorf("rollup %s: %w", table, err)
			}
			if _, err := ist.ExecContext(ctx, insArgs(h, k)...); err != nil {
				return fmt.Errorf("rollup %s: %w", table, err)
			}
		}
	}
	return nil
}

const actionsAllSQL = `INSERT INTO actions_hourly SELECT ts - ts % 3600000 AS h, client, session_id, project, type, tool, ` + actionSums + `
  FROM actions GROUP BY h, client, session_id, project, type, tool`

// dirtyHours are the hours a batch changed, per rollup. It also keeps, per hour, the sessions
// whose rows changed (actSess for actions_hourly; usageSess for usage_hourly, by session id): a live
// batch recomputes only those sessions' rows of the hour, not the hour's every row (a busy hour, a
// team hub's most of all, holds far more than a batch touches; recomputing a whole hour of 20,000
// proxy turns for each batch held the writer to a few hundred turns a second). An hour marked whole
// (action, turn) is recomputed whole.
//
// A session id's hour marked only by proxy turns the batch added (proxyTurn) may take those turns'
// sums instead of a recomputation (addProxyTurns): fresh holds their event ids by hour and session
// id; every other mark of the hour and session id (sessionHour) makes it stale, to be recomputed.
type dirtyHours struct {
	usage, actions map[int64]bool
	actSess        map[int64]map[sessionKey]bool // nil for an hour marked whole
	usageSess      map[int64]map[string]bool     // nil for an hour marked whole
	fresh          map[int64]map[string][]string // the proxy turns added, by hour and session id
	stale          map[int64]map[string]bool     // marked otherwise than by proxyTurn
}

func newDirtyHours() *dirtyHours {
	return &dirtyHours{usage: map[int64]bool{}, actions: map[int64]bool{}, actSess: map[int64]map[sessionKey]bool{},
		usageSess: map[int64]map[string]bool{}, fresh: map[int64]map[string][]string{}, stale: map[int64]map[string]bool{}}
}

// turn notes a model turn at ts whose sessions are not known: its hour, and the hours of
// transcript rows it may join or stop joining (within JoinWindowMs), whole.
func (d *dirtyHours) turn(ts int64) {
	for _, t := range []int64{ts - JoinWindowMs, ts, ts + JoinWindowMs} {
		h := HourOf(t)
		d.usage[h] = true
		d.usageSess[h] = nil
	}
}

// sessionHour notes that the rows of session id session in hour h changed.
func (d *dirtyHours) sessionHour(h int64, session string) {
	if d.markSession(h, session) {
		mapSet(d.stale, h, session)
	}
}

// markSession marks session id session's rows of hour h for recomputation, unless the whole hour
// is; it reports whether it did.
func (d *dirtyHours) markSession(h int64, session string) bool {
	if d.usage[h] && d.usageSess[h] == nil {
		return false // the whole hour is recomputed anyway
	}
	d.usage[h] = true
	mapSet(d.usageSess, h, session)
	return true
}

// proxyTurn notes a proxy turn (its origin empty) of session id session at ts, event id id, that
// the batch added. A proxy turn always counts, and can only make other rows stop counting (those
// of its session within JoinWindowMs, and those its message and request ids join, marked by
// markHours): where its session id's rows of an hour counted as proxy turns alone and nothing
// else marked them, the hour's sums grow by the added turns' and nothing else changes
// (addProxyTurns).
func (d *dirtyHours) proxyTurn(ts int64, session, id string) {
	for _, t := range []int64{ts - JoinWindowMs, ts, ts + JoinWindowMs} {
		d.markSession(HourOf(t), session)
	}
	h := HourOf(ts)
	if d.fresh[h] == nil {
		d.fresh[h] = map[string][]string{}
	}
	d.fresh[h][session] = append(d.fresh[h][session], id)
}

// turnOf notes a model turn, or a transcript row, of session id session at ts: only that session's
// rows of those hours change. Every row a turn decides about is of its own session id, but for the
// rows it joins by message or request id, which are marked by their own sessions (markHours).
func (d *dirtyHours) turnOf(ts int64, session string) {
	for _, t := range []int64{ts - JoinWindowMs, ts, ts + JoinWindowMs} {
		d.sessionHour(HourOf(t), session)
	}
}

func (d *dirtyHours) action(ts int64) {
	h := HourOf(ts)
	d.actions[h] = true
	d.actSess[h] = nil
}

// actionOf notes an action of session k at ts: only that session's rows of the hour change.
func (d *dirtyHours) actionOf(ts int64, k sessionKey) {
	h := HourOf(ts)
	if d.actions[h] && d.actSess[h] == nil {
		return // the whole hour is recomputed anyway
	}
	d.actions[h] = true
	if d.actSess[h] == nil {
		d.actSess[h] = map[sessionKey]bool{}
	}
	d.actSess[h][k] = true
}

func (d *dirtyHours) empty() bool { return len(d.usage) == 0 && len(d.actions) == 0 }

// refreshRollups recomputes the dirty hours from the raw rows.
func refreshRollups(ctx context.Context, tx *sql.Tx, d *dirtyHours) error {
	if d.empty() {
		return nil
	}
	window := sql.Named("window", JoinWindowMs)
	wholeUsage := map[int64]bool{}
	for h := range d.usage {
		if d.usageSess[h] == nil {
			wholeUsage[h] = true
		}
	}
	// The sessions of the dirty hours before and after: their all-time sums change.
	sessions := map[sessionKey]bool{}
	if err := sessionsIn(ctx, tx, wholeUsage, sessions); err != nil {
		return err
	}
	if err := sessionIDsIn(ctx, tx, d.usageSess, sessions); err != nil {
		return err
	}
	if err := recompute(ctx, tx, "usage_hourly", "hour", usageHourSQL, wholeUsage, func(h int64) []any {
		return []any{sql.Named("hour", h), window}
	}); err != nil {
		return err
	}
	recount, err := addProxyTurns(ctx, tx, d)
	if err != nil {
		return err
	}
	if err := recomputeUsageSessions(ctx, tx, recount); err != nil {
		return err
	}
	if err := sessionsIn(ctx, tx, wholeUsage, sessions); err != nil {
		return err
	}
	if err := sessionIDsIn(ctx, tx, d.usageSess, sessions); err != nil {
		return err
	}
	if err := refreshSessions(ctx, tx, sessions); err != nil {
		return err
	}
	whole := map[int64]bool{}
	for h := range d.actions {
		if d.actSess[h] == nil {
			whole[h] = true
		}
	}
	if err := recompute(ctx, tx, "actions_hourly", "hour", actionsHourSQL, whole, func(h int64) []any {
		return []any{sql.Named("hour", h)}
	}); err != nil {
		return err
	}
	if err := recomputeSessions(ctx, tx, d.actSess); err != nil {
		return err
	}
	if !WholeHourZone() {
		return nil
	}
	days := map[int64]bool{}
	for h := range d.actions {
		days[LocalDay(h)] = true
	}
	usageDays := map[int64]bool{}
	for h := range d.usage {
		usageDays[LocalDay(h)] = true
	}
	return refreshDays(ctx, tx, days, usageDays)
}

// deferRollups records the dirty hours in rollup_pending, for CatchUpRollups.
func deferRollups(ctx context.Context, tx *sql.Tx, d *dirtyHours) error {
	if d.empty() {
		return nil
	}
	st := prepare(tx, `INSERT OR IGNORE INTO rollup_pending (rollup, hour) VALUES (?, ?)`)
	for _, x := range []struct {
		name  string
		hours map[int64]bool
	}{{"usage", d.usage}, {"actions", d.actions}} {
		for h := range x.hours {
			if _, err := st.ExecContext(ctx, x.name, h); err != nil {
				return fmt.Errorf("defer rollups: %w", err)
			}
		}
	}
	return nil
}

// CatchUpRollups recomputes the rollups of at most limit hours that bulk writes left pending
// (WriteOptions.Bulk), in one transaction, and removes them from rollup_pending. It
// returns how many hours are still pending.
func (s *Store) CatchUpRollups(ctx context.Context, limit int) (left int64, err error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT rollup, hour FROM rollup_pending ORDER BY hour LIMIT ?`, limit)
	if err != nil {
		return 0, err
	}
	d := newDirtyHours()
	for rows.Next() {
		var name string
		var h int64
		if err := rows.Scan(&name, &h); err != nil {
			rows.Close()
			return 0, err
		}
		if name == "usage" {
			d.usage[h] = true
		} else {
			d.actions[h] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if d.empty() {
		return 0, nil
	}
	if err := refreshRollups(ctx, tx, d); err != nil {
		return 0, err
	}
	del := prepare(tx, `DELETE FROM rollup_pending WHERE rollup = ? AND hour = ?`)
	for name, hours := range map[string]map[int64]bool{"usage": d.usage, "actions": d.actions} {
		for h := range hours {
			if _, err := del.ExecContext(ctx, name, h); err != nil {
				return 0, err
			}
		}
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM rollup_pending`).Scan(&left); err != nil {
		return 0, err
	}
	return left, tx.Commit()
}

// RollupsPending counts the hours whose rollups wait for CatchUpRollups.
func (s *Store) RollupsPending(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM rollup_pending`).Scan(&n)
	return n, err
}

// usageHourlySums sums usage_hourly's measures.
const usageHourlySums = `sum(turns), sum(proxy_turns), sum(unreliable_turns), sum(unpriced_turns), sum(input_tokens),
       sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens), sum(cache_creation_1h_tokens),
       sum(reasoning_tokens), sum(cost_usd)`

const usageDaySQL = `INSERT INTO usage_daily SELECT :day, client, project, model, ` + usageHourlySums + `
  FROM usage_hourly WHERE hour >= :day AND hour < :next GROUP BY client, project, model`

const usageSessionSQL = `INSERT INTO usage_sessions SELECT client, session_id, project, model, ` + usageHourlySums + `
  FROM usage_hourly WHERE session_id = ? AND client = ? GROUP BY project, model`

// sessionsIn adds the sessions usage_hourly has in the given hours to set.
func sessionsIn(ctx context.Context, tx *sql.Tx, hours map[int64]bool, set map[sessionKey]bool) error {
	if len(hours) == 0 {
		return nil
	}
	st := prepare(tx, `SELECT DISTINCT client, session_id FROM usage_hourly WHERE hour = ?`)
	for h := range hours {
		if err := addSessions(ctx, st, set, h); err != nil {
			return err
		}
	}
	return nil
}

// sessionIDsIn adds to set the sessions usage_hourly has under the given session ids of each hour.
func sessionIDsIn(ctx context.Context, tx *sql.Tx, bySess map[int64]map[string]bool, set map[sessionKey]bool) error {
	st := prepare(tx, `SELECT DISTINCT client, session_id FROM usage_hourly WHERE hour = ? AND session_id = ?`)
	for h, ids := range bySess {
		if ids == nil {
			continue
		}
		for id := range ids {
			if err := addSessions(ctx, st, set, h, id); err != nil {
				return err
			}
		}
	}
	return nil
}

// addSessions adds to set the (client, session_id) rows st returns for args.
func addSessions(ctx context.Context, st *txQuery, set map[sessionKey]bool, args ...any) error {
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k sessionKey
		if err := rows.Scan(&k.client, &k.id); err != nil {
			return err
		}
		set[k] = true
	}
	return rows.Err()
}

// proxyOnlySQL tells whether an hour's rollup of a session id is not only proxy turns: a row of
// usage_hourly counts other turns, or the hour's rollups are pending (a bulk load's, not summed
// yet).
const proxyOnlySQL = `SELECT EXISTS (SELECT 1 FROM rollup_pending WHERE rollup = 'usage' AND hour = ?1)
    OR EXISTS (SELECT 1 FROM usage_hourly WHERE hour = ?1 AND session_id = ?2 AND turns != proxy_turns)`

// addProxySQL adds the sums of the given proxy turns (event ids, a JSON array) of one session id's
// hour to usage_hourly, as TurnsSQL counts them (every proxy turn, its project its session's when
// it has none). The unary + keep SQLite from reading the session's hour by api_turns_session_ts
// (all its turns) instead of the turns by their ids.
var addProxySQL = `INSERT INTO usage_hourly SELECT :hour, client, session_id, project, model, ` + usageSums + `
  FROM (SELECT ts, client, session_id, ` + ProxyProject + ` AS project, model, input_tokens, output_tokens,
               cache_read_tokens, cache_creation_tokens, cache_creation_1h_tokens, reasoning_tokens, cost_usd,
               1 AS proxy, reliability
          FROM api_turns WHERE event_id IN (SELECT value FROM json_each(:ids)) AND origin = ''
           AND +session_id = :session AND +ts >= :hour AND +ts < :hour + 3600000)
 WHERE true GROUP BY client, session_id, project, model
    ON CONFLICT (hour, client, session_id, project, model) DO UPDATE SET
       turns = turns + excluded.turns, proxy_turns = proxy_turns + excluded.proxy_turns,
       unreliable_turns = unreliable_turns + excluded.unreliable_turns,
       unpriced_turns = unpriced_turns + excluded.unpriced_turns,
       input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
       cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
       cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens,
       cache_creation_1h_tokens = cache_creation_1h_tokens + excluded.cache_creation_1h_tokens,
       reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens, cost_usd = cost_usd + excluded.cost_usd`

// addProxyTurns adds to usage_hourly the sums of the proxy turns a batch added to the hours of
// session ids nothing else marked and whose rollups counted proxy turns alone, and returns the
// hours and session ids left to recompute (recomputeUsageSessions). A recomputation reads every
// row of the session id's hour: a session that talks through the proxy alone (an SDK program, a
// client whose records observer does not read) makes thousands of turns an hour.
func addProxyTurns(ctx context.Context, tx *sql.Tx, d *dirtyHours) (map[int64]map[string]bool, error) {
	recount := map[int64]map[string]bool{}
	check, add := prepare(tx, proxyOnlySQL), prepare(tx, addProxySQL)
	for h, ids := range d.usageSess {
		if ids == nil {
			continue
		}
		for id := range ids {
			if d.stale[h][id] {
				mapSet(recount, h, id)
				continue
			}
			var other bool
			if err := check.QueryRowContext(ctx, h, id).Scan(&other); err != nil {
				return nil, fmt.Errorf("rollup usage_hourly: %w", err)
			}
			if other {
				mapSet(recount, h, id)
				continue
			}
			turns := d.fresh[h][id]
			if len(turns) == 0 {
				continue // an hour within JoinWindowMs of the batch's turns, with none of them
			}
			b, _ := json.Marshal(turns)
			if _, err := add.ExecContext(ctx, sql.Named("hour", h), sql.Named("session", id),
				sql.Named("ids", string(b))); err != nil {
				return nil, fmt.Errorf("rollup usage_hourly: %w", err)
			}
		}
	}
	return recount, nil
}

// mapSet adds k to the set m[h].
func mapSet(m map[int64]map[string]bool, h int64, k string) {
	if m[h] == nil {
		m[h] = map[string]bool{}
	}
	m[h][k] = true
}

// recomputeUsageSessions replaces usage_hourly's rows of each dirty (hour, session id) by what
// that session id's turns of the hour sum to.
func recomputeUsageSessions(ctx context.Context, tx *sql.Tx, bySess map[int64]map[string]bool) error {
	return recomputeBy(ctx, tx, "usage_hourly", bySess, `DELETE FROM usage_hourly WHERE hour = ? AND session_id = ?`, usageSessionHourSQL,
		func(h int64, id string) []any { return []any{h, id} },
		func(h int64, id string) []any {
			return []any{sql.Named("hour", h), sql.Named("session", id), sql.Named("window", JoinWindowMs)}
		})
}

// refreshSessions recomputes usage_sessions for the given sessions from usage_hourly.
func refreshSessions(ctx context.Context, tx *sql.Tx, set map[sessionKey]bool) error {
	if len(set) == 0 {
		return nil
	}
	del := prepare(tx, `DELETE FROM usage_sessions WHERE client = ? AND session_id = ?`)
	ins := prepare(tx, usageSessionSQL)
	for k := range set {
		if _, err := del.ExecContext(ctx, k.client, k.id); err != nil {
			return fmt.Errorf("rollup usage_sessions: %w", err)
		}
		if _, err := ins.ExecContext(ctx, k.id, k.client); err != nil {
			return fmt.Errorf("rollup usage_sessions: %w", err)
		}
	}
	return nil
}

const actionsDaySQL = `INSERT INTO actions_daily SELECT :day, client, type, tool, sum(actions), sum(failures),
       sum(pending), sum(timed), sum(duration_ms)
  FROM actions_hourly WHERE hour >= :day AND hour < :next GROUP BY client, type, tool`

// refreshDays recomputes actions_daily's days (local midnights, ms) from actions_hourly, and
// usage_daily's from usage_hourly.
func refreshDays(ctx context.Context, tx *sql.Tx, days, usageDays map[int64]bool) error {
	args := func(d int64) []any { return []any{sql.Named("day", d), sql.Named("next", NextLocalDay(d))} }
	if err := recompute(ctx, tx, "actions_daily", "day", actionsDaySQL, days, args); err != nil {
		return err
	}
	return recompute(ctx, tx, "usage_daily", "day", usageDaySQL, usageDays, args)
}

// recompute replaces a rollup table's rows for each key (its column col) by what insert, run
// with args(key), computes from the rows below it.
func recompute(ctx context.Context, tx *sql.Tx, table, col, insert string, keys map[int64]bool, args func(int64) []any) error {
	if len(keys) == 0 {
		return nil
	}
	del := prepare(tx, "DELETE FROM "+table+" WHERE "+col+" = ?")
	ins := prepare(tx, insert)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if _, err := del.ExecContext(ctx, k); err != nil {
			return fmt.Errorf("rollup %s: %w", table, err)
		}
		if _, err := ins.ExecContext(ctx, args(k)...); err != nil {
			return fmt.Errorf("rollup %s: %w", table, err)
		}
	}
	return nil
}

// rebuildDays recomputes actions_daily and usage_daily whole in the current zone and records the
// zone.
func rebuildDays(ctx context.Context, tx *sql.Tx) error { return rebuildDaysOf(ctx, tx, true) }

// rebuildDaysOf is rebuildDays; before migration 0008 (usage false) actions_daily alone.
func rebuildDaysOf(ctx context.Context, tx *sql.Tx, usage bool) error {
	tables := []string{"actions_daily"}
	if usage {
		tables = append(tables, "usage_daily")
	}
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return err
		}
	}
	zone := ZoneKey()
	if WholeHourZone() {
		span := func(table string) (map[int64]bool, error) {
			var lo, hi sql.NullInt64
			if err := tx.QueryRowContext(ctx, "SELECT min(hour), max(hour) FROM "+table).Scan(&lo, &hi); err != nil {
				return nil, err
			}
			days := map[int64]bool{}
			for d := LocalDay(lo.Int64); lo.Valid && d <= hi.Int64; d = NextLocalDay(d) {
				days[d] = true
			}
			return days, nil
		}
		days, err := span("actions_hourly")
		if err != nil {
			return err
		}
		usageDays := map[int64]bool{}
		if usage {
			if usageDays, err = span("usage_hourly"); err != nil {
				return err
			}
		}
		if err := refreshDays(ctx, tx, days, usageDays); err != nil {
			return err
		}
	} else {
		zone = "" // no daily rollup in this zone
	}
	_, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO rollup_state (key, value) VALUES ('zone', ?)", zone)
	return err
}

// ZoneKey identifies the local time zone by its names and offsets through the year; readers use
// actions_daily only when the writer kept it in the zone they are in.
func ZoneKey() string {
	y := time.Now().Year()
	var b strings.Builder
	for _, m := range []time.Month{time.January, time.April, time.July, time.October} {
		name, off := time.Date(y, m, 1, 12, 0, 0, 0, time.Local).Zone()
		fmt.Fprintf(&b, "%s%+d;", name, off)
	}
	return b.String()
}

// WholeHourZone reports whether the local zone's offsets are whole hours, so that local days are
// made of whole UTC hours.
func WholeHourZone() bool {
	y := time.Now().Year()
	for _, m := range []time.Month{time.January, time.April, time.July, time.October} {
		if _, off := time.Date(y, m, 1, 12, 0, 0, 0, time.Local).Zone(); off%3600 != 0 {
			return false
		}
	}
	return true
}

// LocalDay is the Unix ms of the local midnight starting the day that holds ms.
func LocalDay(ms int64) int64 {
	t := time.UnixMilli(ms).In(time.Local)
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.Local).UnixMilli()
}

// NextLocalDay is the local midnight after the one at day (ms).
func NextLocalDay(day int64) int64 {
	t := time.UnixMilli(day).In(time.Local)
	y, m, d := t.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.Local).UnixMilli()
}

// KeepZone rebuilds actions_daily when the local zone is not the one it was kept in (the writer
// calls it at start).
func (s *Store) KeepZone(ctx context.Context) error {
	var zone string
	err := s.DB.QueryRowContext(ctx, "SELECT value FROM rollup_state WHERE key = 'zone'").Scan(&zone)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	want := ZoneKey()
	if !WholeHourZone() {
		want = ""
	}
	if err == nil && zone == want {
		return nil
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := rebuildDays(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// RefreshRollups recomputes the rollups of the hours holding the given times (ms), for changes
// made to raw rows outside WriteBatch.
func (s *Store) RefreshRollups(ctx context.Context, usageTimes, actionTimes []int64) error {
	d := newDirtyHours()
	for _, t := range usageTimes {
		d.turn(t)
	}
	for _, t := range actionTimes {
		d.action(t)
	}
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := refreshRollups(ctx, tx, d); err != nil {
		return err
	}
	return tx.Commit()
}

// rebuildRollups recomputes the rollups from all raw rows.
func rebuildRollups(ctx context.Context, tx *sql.Tx) error {
	if err := rebuildHourly(ctx, tx); err != nil {
		return err
	}
	return rebuildUsageLevels(ctx, tx)
}

// rebuildHourly recomputes the hourly rollups, and actions_daily, from all raw rows (migration
// 0005, which precedes the other usage rollups).
func rebuildHourly(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range []string{"DELETE FROM usage_hourly", "DELETE FROM actions_hourly", actionsAllSQL} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("rebuild rollups: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, usageAllSQL, sql.Named("window", JoinWindowMs)); err != nil {
		return fmt.Errorf("rebuild rollups: %w", err)
	}
	return rebuildDaysOf(ctx, tx, false)
}

// rebuildUsageLevels rebuilds usage_sessions and the daily rollups from the hourly ones (migration
// 0008, and after a rebuild of the hourly ones).
func rebuildUsageLevels(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{"DELETE FROM usage_sessions", `INSERT INTO usage_sessions SELECT client, session_id, project, model, ` +
		usageHourlySums + ` FROM usage_hourly GROUP BY client, session_id, project, model`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("rebuild usage_sessions: %w", err)
		}
	}
	return rebuildDays(ctx, tx)
}

// RebuildRollups recomputes both rollups from all raw rows, in one transaction. The writer does it
// when migration 0005 creates them; a tool that fills the raw tables itself (the dashboard's
// benchmark generator) calls it after.
func (s *Store) RebuildRollups(ctx context.Context) error {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := rebuildRollups(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// LocalBucketSQL is an SQL expression of the start (Unix ms) of the local hour or day holding col
// (Unix ms), computed with the zone's offsets in [from, to] (from zero: five years back): SQLite's
// 'localtime' modifier costs a C library call per row, this costs a few comparisons. An hour's
// rollup row is bucketed by its start: in a zone whose offset is not a whole number of hours, a
// chart bar may take half an hour of its neighbour's calls (totals are unchanged).
func LocalBucketSQL(col, unit string, from, to time.Time) string {
	size := HourMs
	if unit == "day" {
		size = 24 * HourMs
	}
	off := offsetExpr(col, from, to)
	return fmt.Sprintf("((%[1]s + %[2]s) - (%[1]s + %[2]s) %% %[3]d - %[2]s)", col, off, size)
}

// offsetExpr is the local zone's UTC offset in ms at col, as a CASE over the offset changes
// between from and to.
func offsetExpr(col string, from, to time.Time) string {
	if from.IsZero() {
		from = to.AddDate(-5, 0, 0)
	}
	offMs := func(t time.Time) int64 { _, o := t.In(time.Local).Zone(); return int64(o) * 1000 }
	type change struct{ at, off int64 }
	first := offMs(from)
	var changes []change
	cur := first
	for d := from; d.Before(to.Add(24 * time.Hour)); d = d.Add(24 * time.Hour) {
		if o := offMs(d); o != cur {
			// Find the hour it changed.
			h := d.Add(-24 * time.Hour)
			for offMs(h) == cur {
				h = h.Add(time.Hour)
			}
			changes = append(changes, change{h.Truncate(time.Hour).UnixMilli(), o})
			cur = o
		}
	}
	if len(changes) == 0 {
		return fmt.Sprint(first)
	}
	var b strings.Builder
	b.WriteString("CASE")
	prev := first
	for _, c := range changes {
		fmt.Fprintf(&b, " WHEN %s < %d THEN %d", col, c.at, prev)
		prev = c.off
	}
	fmt.Fprintf(&b, " ELSE %d END", prev)
	return b.String()
}
