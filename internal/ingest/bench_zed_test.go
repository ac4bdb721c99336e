package ingest

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/transcript/zed"
)

// BenchmarkReaders_Zed polls a Zed threads database as a cold scan reads it (dry run, no state),
// reporting MB/s of database and threads/s beside BenchmarkReaders: one threads.db in Zed's schema
// (pkg/transcript/zed/testdata/schema.sql) holding OBSERVER_BENCH_ZED_COPIES copies (default
// 2,000, ~6,000 threads) of the reader's fixtures (pkg/transcript/zed/testdata/threads; no corpus
// holds a Zed database), each under fresh thread ids, zstd-compressed as Zed stores them (the
// first agent's thread as JSON).
func BenchmarkReaders_Zed(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "zed", "testdata")
	schema, err := os.ReadFile(filepath.Join(fixtures, "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	const (
		mainID   = "8f2c4c1e-5b7a-4d1e-9a43-2f0c6d9b7e15"
		subID    = "3b9d0f6a-2c1e-4f7b-8d5a-6e4c3b2a1f09"
		legacyID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	)
	docs := map[string][]byte{}
	for _, id := range []string{mainID, subID, legacyID} {
		if docs[id], err = os.ReadFile(filepath.Join(fixtures, "threads", id+".json")); err != nil {
			b.Fatal(err)
		}
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		b.Fatal(err)
	}
	defer enc.Close()
	dir := filepath.Join(b.TempDir(), ".local", "share", "zed", "threads")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, zed.DBName)+"?_journal_mode=WAL&_synchronous=OFF")
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
	ins, err := tx.Prepare(`INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, updated_at, data_type, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_ZED_COPIES", 2000) {
		fresh := func(id string) string { return fmt.Sprintf("%s-%d", id, i) }
		for _, id := range []string{mainID, subID, legacyID} {
			doc := bytes.ReplaceAll(docs[id], []byte(mainID), []byte(fresh(mainID)))
			var parent any
			data, dataType := enc.EncodeAll(doc, nil), "zstd"
			created, updated := "2026-02-10T09:15:02.118734+00:00", "2026-02-10T09:18:40.512008+00:00"
			switch id {
			case subID:
				parent = fresh(mainID)
			case legacyID:
				data, dataType = doc, "json"
				created, updated = "2025-06-03T14:02:11.884+00:00", "2025-06-03T14:02:11.884+00:00"
			}
			if _, err := ins.Exec(fresh(id), parent, "/nonexistent-observer/webapp", "0", "Bench thread", updated, dataType, data, created); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	sum := benchScan(b, zed.New([]string{dir}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "threads/s")
}
