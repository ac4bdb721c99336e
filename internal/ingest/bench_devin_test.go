package ingest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/devin"
)

// BenchmarkReaders_Devin polls a Devin CLI database as a cold scan reads it (dry run, no
// watermark), reporting MB/s of database and rows/s beside BenchmarkReaders: one cli/sessions.db
// in the schema of the reader's fixtures (pkg/transcript/devin/testdata/schema.sql) holding
// OBSERVER_BENCH_DEVIN_COPIES copies (default 3,000, ~36,000 rows) of its fixture session
// (first.sql and second.sql; no corpus holds a Devin database), each under a fresh session id, its
// cut row removed, checkpointed as the CLI leaves it on exit.
func BenchmarkReaders_Devin(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "devin", "testdata")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	schema, first, second := read("schema.sql"), read("first.sql"), read("second.sql")
	root := filepath.Join(b.TempDir(), ".local", "share", "devin")
	path := filepath.Join(root, "cli", devin.DBName)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=OFF")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		b.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_DEVIN_COPIES", 3000) {
		fresh := fmt.Sprintf("quiet-harbor-%05d", i)
		for _, q := range []string{first, second} {
			if _, err := tx.Exec(strings.ReplaceAll(q, "quiet-harbor-7f3a", fresh)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := tx.Exec(`DELETE FROM message_nodes WHERE chat_message LIKE '%cut sh'`); err != nil {
		b.Fatal(err)
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
	sum := benchScan(b, devin.New([]string{root}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
