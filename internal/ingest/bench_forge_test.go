package ingest

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/forge"
)

// BenchmarkReaders_Forge polls a Forge database as a cold scan reads it (dry run, no state),
// reporting MB/s of database and conversations/s beside BenchmarkReaders: one .forge.db in
// Forge's schema (pkg/transcript/forge/testdata/schema.sql) holding
// OBSERVER_BENCH_FORGE_COPIES copies (default 2,000, ~10 MB) of the reader's fixture
// conversations (pkg/transcript/forge/testdata/conversations; no corpus holds a Forge database),
// each under a fresh conversation id, their contexts compact JSON as Forge stores them.
func BenchmarkReaders_Forge(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "forge", "testdata")
	schema, err := os.ReadFile(filepath.Join(fixtures, "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	ids := []string{"0b9e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b", "7c6b5a4f-3e2d-4c1b-9a0f-8e7d6c5b4a39"}
	ctxs := map[string][]byte{}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(fixtures, "conversations", id+".json"))
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			b.Fatal(err)
		}
		ctxs[id] = buf.Bytes()
	}
	dir := filepath.Join(b.TempDir(), ".forge")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, forge.DBName)+"?_journal_mode=WAL&_synchronous=OFF")
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
	ins, err := tx.Prepare(`INSERT INTO conversations (conversation_id, title, workspace_id, context, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_FORGE_COPIES", 2000) {
		for _, id := range ids {
			fresh := fmt.Sprintf("%s-%d", id, i)
			ctx := bytes.ReplaceAll(ctxs[id], []byte(id), []byte(fresh))
			if _, err := ins.Exec(fresh, "Bench conversation", 7135546719238765822, string(ctx),
				"2026-03-10 16:42:07.513209", "2026-03-10 16:49:52.104877"); err != nil {
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
	sum := benchScan(b, forge.New([]string{dir}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "conversations/s")
}
