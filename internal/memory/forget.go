package memory

import (
	"context"
	"database/sql"

	"github.com/observerhq/observer/pkg/store"
)

// ForgetSubject is where the running writer (the store's one writer) takes `observerctl memory
// forget` requests: {"id": N}, answered {"found": bool} or {"error": "..."}.
const ForgetSubject = "observer.ctl.memory.forget"

// Forget marks an observation forgotten: it is not shown again, and not brought back.
func Forget(ctx context.Context, db *sql.DB, id int64) (bool, error) {
	return store.ForgetObservation(ctx, db, id)
}
