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
