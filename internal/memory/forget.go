package memory

import (
	"context"
	"database/sql"
)

// ForgetSubject is where the running writer (the store's one writer) takes `observerctl memory
// forget` requests: {"id": N}, answered {"found": bool} or {"error": "..."}.
const ForgetSubject = "observer.ctl.memory.forget"

// Forget marks an observation forgotten: it is not shown again, and not brought back.
func Forget(ctx context.Context, db *sql.DB, id int64) (bool, error) {
	res, err := db.ExecContext(ctx, `UPDATE observations SET forgotten = 1 WHERE id = ? AND forgotten = 0`, id)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
