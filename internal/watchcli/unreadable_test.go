package watchcli

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/opencode"
)

// An OpenCode database the watcher cannot read (a corrupt file: the tests run as root, so mode
// 000 would not stop them) makes the watcher degraded, its heartbeat saying which database and
// why, logged once; once the database reads, the heartbeat is healthy again.
func TestHealth_UnreadableDatabase(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "opencode")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(data, "opencode.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
		t.Fatal(err)
	}
	cur, err := ingest.OpenCursors(filepath.Join(dir, "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	s := &ingest.Scanner{Adapters: []transcript.Adapter{opencode.New([]string{data})}, Cursors: cur, Publisher: &countPub{}}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	hs := &healthState{}
	pass := func() {
		t.Helper()
		sum, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		hs.afterPass(logger, s, sum)
	}

	pass()
	pass()
	h := hs.health()
	want := "opencode: cannot read " + path + ": file is not a database"
	if !h.OK || len(h.Degraded) != 1 || h.Degraded[0] != want {
		t.Fatalf("heartbeat OK %v, degraded %q; want OK and [%q]", h.OK, h.Degraded, want)
	}
	warned := 0
	for _, r := range logRecords(t, &logs) {
		if r["level"] == "WARN" {
			warned++
			if r["msg"] != "client database cannot be read" || r["file"] != path {
				t.Errorf("log %v", r)
			}
		}
	}
	if warned != 1 {
		t.Errorf("%d warnings over two passes; want one:\n%s", warned, logs.String())
	}

	// The client rewrites it as a database: the next pass reads it.
	os.Remove(path)
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE session (id TEXT PRIMARY KEY, parent_id TEXT, directory TEXT, title TEXT, time_created INTEGER, time_updated INTEGER)",
		"CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)",
		"CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, time_created INTEGER, time_updated INTEGER, data TEXT)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	logs.Reset()
	pass()
	if h := hs.health(); !h.OK || len(h.Degraded) != 0 {
		t.Fatalf("after the database reads: OK %v, degraded %q; want healthy", h.OK, h.Degraded)
	}
	if !strings.Contains(logs.String(), "client database no longer unreadable") {
		t.Errorf("no log of the recovery:\n%s", logs.String())
	}
}
