package query

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Savings is what request compression saved with one mechanism (or in all, for the total).
// Tokens are estimates, a quarter of the bytes; dollars price them at each model's input price.
type Savings struct {
	Mechanism   string  `json:"mechanism,omitempty"`
	Decisions   int64   `json:"decisions"`
	BytesBefore int64   `json:"bytes_before"`
	BytesAfter  int64   `json:"bytes_after"`
	TokensSaved int64   `json:"tokens_saved"`
	SavedUSD    float64 `json:"saved_usd"`
}

// CompressionReport sums the proxy's compression decisions of a window, by mechanism.
type CompressionReport struct {
	Rows  []Savings `json:"rows"`
	Total Savings   `json:"total"`
}

// Compression reports what request compression saved in q's window, client and session (a
// compression decision belongs to no project of its own, so q.Project is not applied). It
// returns nil when there was none.
func Compression(ctx context.Context, db *sql.DB, q CostQuery) (*CompressionReport, error) {
	var where []string
	var args []any
	if !q.Since.IsZero() {
		where, args = append(where, "ts >= ?"), append(args, q.Since.UnixMilli())
	}
	if !q.Until.IsZero() {
		where, args = append(where, "ts < ?"), append(args, q.Until.UnixMilli())
	}
	if q.Client != "" {
		where, args = append(where, "client = ?"), append(args, q.Client)
	}
	if q.SessionID != "" {
		where, args = append(where, "session_id = ?"), append(args, q.SessionID)
	}
	w := ""
	if len(where) > 0 {
		w = " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := db.QueryContext(ctx, `SELECT mechanism, count(*), sum(bytes_before), sum(bytes_after),
		sum(max(tokens_before - tokens_after, 0)), sum(saved_usd) FROM compression_events`+w+`
		GROUP BY mechanism ORDER BY sum(bytes_before) - sum(bytes_after) DESC, mechanism`, args...)
	if err != nil {
		return nil, fmt.Errorf("compression savings: %w", err)
	}
	defer rows.Close()
	rep := &CompressionReport{Rows: []Savings{}}
	for rows.Next() {
		var s Savings
		if err := rows.Scan(&s.Mechanism, &s.Decisions, &s.BytesBefore, &s.BytesAfter, &s.TokensSaved, &s.SavedUSD); err != nil {
			return nil, err
		}
		rep.Rows = append(rep.Rows, s)
		t := &rep.Total
		t.Decisions += s.Decisions
		t.BytesBefore += s.BytesBefore
		t.BytesAfter += s.BytesAfter
		t.TokensSaved += s.TokensSaved
		t.SavedUSD += s.SavedUSD
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(rep.Rows) == 0 {
		return nil, nil
	}
	return rep, nil
}

// CompressionGroup sums the compression events of one mechanism on one model.
type CompressionGroup struct {
	Mechanism    string  `json:"mechanism"`
	Model        string  `json:"model"`
	Events       int64   `json:"events"`
	BytesBefore  int64   `json:"bytes_before"`
	BytesAfter   int64   `json:"bytes_after"`
	TokensBefore int64   `json:"tokens_before"`
	TokensAfter  int64   `json:"tokens_after"`
	SavedUSD     float64 `json:"saved_usd"`
}

// CompressionGroups sums the compression events f selects (its time range on their ts) by
// mechanism and model, the most bytes saved first.
func CompressionGroups(ctx context.Context, db Querier, f Filter) ([]CompressionGroup, error) {
	c := filterClause(f, "ts")
	rows, err := db.QueryContext(ctx, `SELECT mechanism, model, count(*), sum(bytes_before), sum(bytes_after), sum(tokens_before), sum(tokens_after), sum(saved_usd)
  FROM compression_events`+c.sql()+` GROUP BY mechanism, model ORDER BY sum(bytes_before) - sum(bytes_after) DESC, mechanism, model`, c.args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CompressionGroup
	for rows.Next() {
		var r CompressionGroup
		if err := rows.Scan(&r.Mechanism, &r.Model, &r.Events, &r.BytesBefore, &r.BytesAfter, &r.TokensBefore, &r.TokensAfter, &r.SavedUSD); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// CompressionEvent is one request the proxy rewrote.
type CompressionEvent struct {
	T            int64   `json:"t"` // ms
	Client       string  `json:"client"`
	SessionID    string  `json:"session_id"`
	Mechanism    string  `json:"mechanism"`
	Mode         string  `json:"mode"`
	Provider     string  `json:"provider"`
	Model        string  `json:"model"`
	BytesBefore  int64   `json:"bytes_before"`
	BytesAfter   int64   `json:"bytes_after"`
	TokensBefore int64   `json:"tokens_before"`
	TokensAfter  int64   `json:"tokens_after"`
	SavedUSD     float64 `json:"saved_usd"`
	StashID      string  `json:"stash_id,omitempty"`
}

// CompressionEvents lists the compression events f selects, the newest first, at most limit.
func CompressionEvents(ctx context.Context, db Querier, f Filter, limit int) ([]CompressionEvent, error) {
	c := filterClause(f, "ts")
	rows, err := db.QueryContext(ctx, `SELECT ts, client, session_id, mechanism, mode, provider, model, bytes_before, bytes_after, tokens_before, tokens_after, saved_usd, stash_id
  FROM compression_events`+c.sql()+` ORDER BY ts DESC, id DESC LIMIT :limit`, append(c.args, sql.Named("limit", limit))...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []CompressionEvent
	for rows.Next() {
		var e CompressionEvent
		if err := rows.Scan(&e.T, &e.Client, &e.SessionID, &e.Mechanism, &e.Mode, &e.Provider, &e.Model, &e.BytesBefore, &e.BytesAfter, &e.TokensBefore, &e.TokensAfter, &e.SavedUSD, &e.StashID); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
