package store

import (
	"context"
	"database/sql"
	"fmt"
)

// spanTurnsSQL sums the model turns of one session from :from to :to (Unix ms, :to excluded), each
// turn once (TurnsSQL): their count, tokens, cost, and models comma-separated. Its other
// parameters are :client, :session and :window (JoinWindowMs).
var spanTurnsSQL = `SELECT count(*), coalesce(sum(input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens), 0),
		coalesce(sum(cost_usd), 0), coalesce(group_concat(DISTINCT model), '') FROM (` +
	fmt.Sprintf(TurnsSQL,
		"api_turns.client = :client AND api_turns.session_id = :session AND api_turns.ts >= :from AND api_turns.ts < :to",
		"t.client = :client AND t.session_id = :session AND t.ts >= :from AND t.ts < :to") + `)`

// SpanTurns sums the model turns of spans of sessions on DB. With Prepare, through one statement
// compiled at the first call and kept until DB closes: the query (TurnsSQL, a union with its joins)
// takes longer to compile than to run, and the session memory runs it once per epoch (0.18 s of a
// history's catch-up for 540 epochs when each compiled it again). Not for concurrent use.
type SpanTurns struct {
	DB      *sql.DB
	Prepare bool
	st      *sql.Stmt
}

// Row reads the turns of client's session from from to to (Unix ms, to excluded): count, tokens,
// cost in USD, models comma-separated. Without Prepare, or where the statement cannot be
// prepared, the query is compiled for the call.
func (q *SpanTurns) Row(ctx context.Context, client, session string, from, to int64) *sql.Row {
	args := []any{sql.Named("client", client), sql.Named("session", session), sql.Named("from", from),
		sql.Named("to", to), sql.Named("window", JoinWindowMs)}
	if q.st == nil && q.Prepare {
		q.st, _ = q.DB.PrepareContext(ctx, spanTurnsSQL) // nil on failure: tried again at the next call
	}
	if q.st != nil {
		return q.st.QueryRowContext(ctx, args...)
	}
	return q.DB.QueryRowContext(ctx, spanTurnsSQL, args...)
}
