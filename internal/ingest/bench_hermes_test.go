package ingest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/hermes"
)

// BenchmarkReaders_Hermes polls a Hermes Agent state.db as a cold scan reads it (dry run, no
// watermark), reporting MB/s of database and rows/s (messages) beside BenchmarkReaders: one
// state.db in Hermes's schema (pkg/transcript/hermes/testdata/schema.sql) holding
// OBSERVER_BENCH_HERMES_COPIES copies (default 1,000: 3,000 sessions, 21,000 messages) of the
// reader's fixture sessions (testdata/state.sql; no corpus holds a Hermes database), each copy's
// sessions under fresh ids, checkpointed as Hermes leaves it on exit.
func BenchmarkReaders_Hermes(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "hermes", "testdata")
	schema, err := os.ReadFile(filepath.Join(fixtures, "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	state, err := os.ReadFile(filepath.Join(fixtures, "state.sql"))
	if err != nil {
		b.Fatal(err)
	}
	home := filepath.Join(b.TempDir(), ".hermes")
	if err := os.MkdirAll(home, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(home, hermes.DBName)+"?_journal_mode=WAL&_synchronous=OFF")
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
	ids := []string{"20260210_101500_a1b2c3", "20260210_103012_d4e5f6", "20260211_090000_0f9e8d"}
	for i := range benchCopies("OBSERVER_BENCH_HERMES_COPIES", 1000) {
		script := string(state)
		for _, id := range ids {
			script = strings.ReplaceAll(script, "'"+id+"'", fmt.Sprintf("'%s_c%04d'", id, i))
		}
		if _, err := tx.Exec(script); err != nil {
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
	sum := benchScan(b, hermes.New([]string{home}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
