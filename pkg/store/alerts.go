package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/observerhq/observer/pkg/event"
)

// InsertAlert stores a, unless an alert of the same kind, scope, project, period and threshold is
// already stored: it reports whether a was new, and sets a.ID when it was.
func (s *Store) InsertAlert(ctx context.Context, a *event.Alert) (bool, error) {
	res, err := s.DB.ExecContext(ctx, `INSERT OR IGNORE INTO alerts
		(ts, kind, scope, project, period, threshold, spent_usd, limit_usd, message)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Time.UnixMilli(), a.Kind, a.Scope, a.Project, a.Period, a.Threshold, a.SpentUSD, a.LimitUSD, a.Message)
	if err != nil {
		return false, fmt.Errorf("store alert: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	a.ID, _ = res.LastInsertId()
	return true, nil
}

// RecentAlerts returns the alerts raised at or after since, newest first, at most limit of them.
// A store without the alerts table (a writer that has not migrated it yet) has none.
func RecentAlerts(ctx context.Context, db *sql.DB, since time.Time, limit int) ([]event.Alert, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'alerts'").Scan(&n); err != nil {
		return nil, err
	}
	out := []event.Alert{}
	if n == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT id, ts, kind, scope, project, period, threshold, spent_usd, limit_usd, message
		FROM alerts WHERE ts >= ? ORDER BY ts DESC, id DESC LIMIT ?`, since.UnixMilli(), limit)
	if err != nil {
		return nil, fmt.Errorf("read alerts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var a event.Alert
		var ts int64
		if err := rows.Scan(&a.ID, &ts, &a.Kind, &a.Scope, &a.Project, &a.Period, &a.Threshold, &a.SpentUSD, &a.LimitUSD, &a.Message); err != nil {
			return nil, err
		}
		a.Time = time.UnixMilli(ts).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
