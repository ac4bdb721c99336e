package opencode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/internal/ingest/ingesttest"
	"github.com/observerhq/observer/pkg/event"
)

// TestIngest_Scan drives the database through internal/ingest as `observerctl scan` and
// observer-watch do: a scan reads it, a scan with no change reads nothing (not even a poll), and
// rows the client adds (to its -wal file) are read at the next scan, once.
func TestIngest_Scan(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data", "opencode")
	db := newDB(t, mkdirAll(t, data, "opencode.db"))
	execT(t, db, insSession, "ses_1", nil, 1, 1)
	execT(t, db, insMessage, "msg_1", "ses_1", 10, 10, assistant(3, 2))
	scan := ingesttest.NewScan(t, New([]string{data}))
	if sum := scan.Run(); sum.Events != 2 || len(scan.Published) != 2 {
		t.Fatalf("first scan: %+v, published %d; want a session and a usage", sum, len(scan.Published))
	}
	if sum := scan.Run(); sum.Read != 0 || sum.Events != 0 {
		t.Fatalf("second scan with no change: %+v", sum)
	}
	execT(t, db, insMessage, "msg_2", "ses_1", 20, 20, assistant(4, 1))
	execT(t, db, insMessage, "msg_bad", "ses_1", 21, 21, "{")
	sum := scan.Run()
	if sum.Events != 1 || sum.Malformed != 1 || sum.MalformedFiles == nil {
		t.Fatalf("scan after a new row: %+v", sum)
	}
	if got := scan.Last(); got.ID != event.ID(Client, "usage", "msg_2") {
		t.Errorf("last event %s, want msg_2's usage", got.ID)
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that: %+v", sum)
	}
	// The client sets the session's title in place, time_updated unchanged: the next scan reads it.
	execT(t, db, "UPDATE session SET title = 'Login fix' WHERE id = 'ses_1'")
	if sum := scan.Run(); sum.Events != 1 || scan.Last().Session == nil || scan.Last().Session.Title != "Login fix" {
		t.Fatalf("scan after the title: %+v, last %+v", sum, scan.Last())
	}
	if sum := scan.Run(); sum.Events != 0 {
		t.Fatalf("scan after that: %+v", sum)
	}
}

func mkdirAll(tb testing.TB, dir, name string) string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(dir, name)
}
