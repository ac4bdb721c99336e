package query

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
)

// A store an earlier version wrote has no table for the kinds that came later: reconcile, reading
// it before this version's writer migrates it, finds nothing of them stored, and no error (it then
// sends them, and the writer that migrates the store stores them).
func TestEventChecker_KindNewerThanTheStore(t *testing.T) {
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "old.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE actions (id INTEGER PRIMARY KEY, event_id TEXT)`); err != nil {
		t.Fatal(err)
	}
	c := NewEventChecker(db)
	defer c.Close()
	msg := event.New(event.KindMessage, "test")
	msg.ID, msg.Message = "m1", &event.Message{Role: "user", Text: "hi"}
	lim := event.New(event.KindLimit, "test")
	lim.ID, lim.Limit = "l1", &event.Limit{Provider: "anthropic", Window: "5h", UsedPercent: 1}
	for _, ev := range []event.Event{msg, lim, msg} {
		if ok, err := c.Stored(context.Background(), &ev); ok || err != nil {
			t.Errorf("%s: stored %v, %v; want not stored, no error", ev.Kind, ok, err)
		}
	}
}
