package ingest

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/kiro"
)

// BenchmarkReaders_Kiro reads a Kiro history laid out as Kiro keeps it, as a cold scan reads it
// (dry run, fresh cursors), reporting MB/s beside BenchmarkReaders: copies of the reader's
// fixtures (pkg/transcript/kiro/testdata; no corpus holds a Kiro history), OBSERVER_BENCH_KIRO_COPIES
// of each (default 1,000, ~17 MB), each under fresh ids: a KAS session directory
// (sessions/<bucket>/<id>/messages.jsonl and session.json, 100 buckets), a v2 session and its
// subagent (sessions/cli/<uuid>.jsonl and .json), and a row of the v1 database (data.sqlite3's
// conversations_v2, in the CLI's schema), checkpointed as the CLI leaves it on exit.
func BenchmarkReaders_Kiro(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "kiro", "testdata")
	read := func(rel ...string) []byte {
		data, err := os.ReadFile(filepath.Join(append([]string{fixtures}, rel...)...))
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	const (
		kasBucket = "7c3f1e2a9b4d5e60"
		kasID     = "sess_5b1f0c9e-2a47-4d1e-9c3b-8e7f6a5d4c21"
		v2ID      = "3f6c2b1a-8d4e-4f7a-9b2c-1e5d6a7b8c90"
		subID     = "8a2d4c6e-1b3f-4a5c-9e7d-0f1e2d3c4b5a"
		convID    = "c4e8a1f2-6b3d-4c9e-8a7f-2d1b0e9c8f7a"
	)
	kasMsgs := read("home", "sessions", kasBucket, kasID, "messages.jsonl")
	kasMeta := read("home", "sessions", kasBucket, kasID, "session.json")
	cli := map[string][]byte{}
	for _, id := range []string{v2ID, subID} {
		for _, ext := range []string{".jsonl", ".json"} {
			cli[id+ext] = read("home", "sessions", "cli", id+ext)
		}
	}
	conv := read("conversations", convID+".json")
	schema := read("schema.sql")

	home := filepath.Join(b.TempDir(), ".kiro")
	data := filepath.Join(b.TempDir(), ".local", "share", "kiro-cli")
	for _, d := range []string{filepath.Join(home, "sessions", "cli"), data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	write := func(path string, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(data, kiro.DBName)+"?_journal_mode=WAL&_synchronous=OFF")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(string(schema)); err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	ins, err := tx.Prepare(`INSERT INTO conversations_v2 (key, conversation_id, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_KIRO_COPIES", 1000) {
		fresh := func(id string) string { return fmt.Sprintf("%s-%05d", id[:len(id)-6], i) }
		dir := filepath.Join(home, "sessions", fmt.Sprintf("%016x", i%100), fresh(kasID))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		write(filepath.Join(dir, "messages.jsonl"), bytes.ReplaceAll(kasMsgs, []byte(kasID), []byte(fresh(kasID))))
		write(filepath.Join(dir, "session.json"), bytes.ReplaceAll(kasMeta, []byte(kasID), []byte(fresh(kasID))))
		for name, content := range cli {
			content = bytes.ReplaceAll(bytes.ReplaceAll(content, []byte(v2ID), []byte(fresh(v2ID))), []byte(subID), []byte(fresh(subID)))
			id, ext := name[:len(name)-len(filepath.Ext(name))], filepath.Ext(name)
			write(filepath.Join(home, "sessions", "cli", fresh(id)+ext), content)
		}
		value := bytes.ReplaceAll(conv, []byte(convID), []byte(fresh(convID)))
		if _, err := ins.Exec("/nonexistent-observer/webapp", fresh(convID), string(value), 1771577999000-int64(i)*60000, 1771578015500-int64(i)*60000); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	os.Remove(filepath.Join(data, kiro.DBName) + "-wal") // a CLI that exited cleanly leaves none
	os.Remove(filepath.Join(data, kiro.DBName) + "-shm")
	benchScan(b, kiro.New([]string{home, data}))
}
