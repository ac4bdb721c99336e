package query

import (
	"context"
	"strings"

	"github.com/observerhq/observer/pkg/store"
)

// Tally is a session's actions and how many of them failed.
type Tally struct {
	Actions, Failures int64
}

// SessionTallies counts the actions and failures of each of keys' sessions, all time, from the
// writer's hourly rollup when the store has it; a session without actions is left out.
func SessionTallies(ctx context.Context, db Querier, keys []store.SessionKey) (map[store.SessionKey]Tally, error) {
	out := map[store.SessionKey]Tally{}
	if len(keys) == 0 {
		return out, nil
	}
	ph := make([]string, len(keys))
	args := make([]any, len(keys))
	for i, k := range keys {
		ph[i], args[i] = "?", k.SessionID
	}
	table := "(SELECT client, session_id, 1 AS actions, coalesce(success = 0, 0) AS failures FROM actions)"
	if ok, _, err := rollupsFor(ctx, db); err != nil {
		return nil, err
	} else if ok {
		table = "actions_hourly"
	}
	rows, err := db.QueryContext(ctx, "SELECT client, session_id, sum(actions), sum(failures) FROM "+table+" WHERE session_id IN ("+strings.Join(ph, ",")+") GROUP BY client, session_id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k store.SessionKey
		var t Tally
		if err := rows.Scan(&k.Client, &k.SessionID, &t.Actions, &t.Failures); err != nil {
			return nil, err
		}
		out[k] = t
	}
	return out, rows.Err()
}

// NameCount is a name (an action type, a tool) with its count, failures and successes.
type NameCount struct {
	Name      string `json:"name"`
	Count     int64  `json:"count"`
	Failures  int64  `json:"failures"`
	Successes int64  `json:"successes"`
}

// ActionTypeCounts counts a session's actions by type, the most frequent first, at most limit
// types.
func ActionTypeCounts(ctx context.Context, db Querier, client, id string, limit int) ([]NameCount, error) {
	return countWhere(ctx, db, "type", "", client, id, limit)
}

// ToolCounts counts a session's tool calls by tool, the most used first, at most limit tools:
// not the actions that name no tool, nor the lifecycle records that carry a label in tool (a
// compaction's compact_boundary).
func ToolCounts(ctx context.Context, db Querier, client, id string, limit int) ([]NameCount, error) {
	return countWhere(ctx, db, "tool", " AND tool != '' AND type NOT IN "+lifecycleTypes, client, id, limit)
}

// lifecycleTypes are the action types that are records of a session's life, not tool calls.
const lifecycleTypes = "('context_compacted', 'user_prompt', 'turn_aborted', 'api_error')"

func countWhere(ctx context.Context, db Querier, col, cond, client, id string, limit int) ([]NameCount, error) {
	rows, err := db.QueryContext(ctx, "SELECT "+col+", count(*), coalesce(sum(success = 0), 0), coalesce(sum(success = 1), 0) FROM actions WHERE session_id = ? AND client = ?"+cond+" GROUP BY "+col+" ORDER BY count(*) DESC, "+col+" LIMIT ?", id, client, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []NameCount{}
	for rows.Next() {
		var c NameCount
		if err := rows.Scan(&c.Name, &c.Count, &c.Failures, &c.Successes); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SessionTypeCounts counts the actions of every session of id (whatever its client) by type,
// with their failures, in no order. Client is left empty.
func SessionTypeCounts(ctx context.Context, db Querier, id string) ([]ActionCount, error) {
	rows, err := db.QueryContext(ctx, `SELECT type, count(*), coalesce(sum(success = 0), 0) FROM actions
		WHERE session_id = ? GROUP BY type`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ActionCount
	for rows.Next() {
		var c ActionCount
		if err := rows.Scan(&c.Type, &c.Actions, &c.Failures); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Subagents counts the distinct subagents that acted in a session.
func Subagents(ctx context.Context, db Querier, client, id string) (int64, error) {
	var n int64
	err := db.QueryRowContext(ctx, "SELECT count(DISTINCT agent_id) FROM actions WHERE session_id = ? AND client = ? AND agent_id != ''", id, client).Scan(&n)
	return n, err
}

// StateChange is one session event: the session's state from then on.
type StateChange struct {
	T      int64  `json:"t"` // ms
	State  string `json:"state"`
	Epoch  int64  `json:"epoch"`
	Source string `json:"source"`
}

// Lifecycle lists a session's state changes in time order, the first 200.
func Lifecycle(ctx context.Context, db Querier, client, id string) ([]StateChange, error) {
	rows, err := db.QueryContext(ctx, "SELECT ts, state, epoch, source FROM session_events WHERE session_id = ? AND client = ? ORDER BY ts, id LIMIT 200", id, client)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []StateChange{}
	for rows.Next() {
		var c StateChange
		if err := rows.Scan(&c.T, &c.State, &c.Epoch, &c.Source); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
