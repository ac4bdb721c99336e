package ingest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/warp"
)

// BenchmarkReaders_Warp polls a Warp database as a cold scan reads it (dry run, no State),
// reporting MB/s of database and rows/s beside BenchmarkReaders: one warp.sqlite in the schema of
// the reader's fixtures (pkg/transcript/warp/testdata/schema.sql) holding
// OBSERVER_BENCH_WARP_COPIES copies (default 3,000: 21,000 exchanges, 9,000 conversations) of its
// fixtures (first.sql then second.sql; no corpus holds a Warp database), each copy's
// conversation and exchange ids made fresh and its row ids moved past the previous copy's, the cut
// input mended, checkpointed as Warp leaves it on exit.
func BenchmarkReaders_Warp(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "warp", "testdata")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	schema := read("schema.sql")
	rows := strings.ReplaceAll(read("first.sql")+read("second.sql"), `{"text":"and the old'`, `{"text":"and the oldest"}}]'`)
	root := filepath.Join(b.TempDir(), ".local", "state", "warp-terminal")
	if err := os.MkdirAll(root, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(root, warp.DBName)+"?_journal_mode=WAL&_synchronous=OFF")
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
	for i := range benchCopies("OBSERVER_BENCH_WARP_COPIES", 3000) {
		q := rows
		// Fresh conversation and exchange ids (their first group), and row ids past the last copy's.
		for _, id := range []string{"7c1e2f4a", "a2f9d810", "0e4d3c2b", "5b0e6c1a"} {
			q = strings.ReplaceAll(q, "'"+id+"-", fmt.Sprintf("'%s-%05d-", id, i))
		}
		for row := 7; row >= 1; row-- {
			q = strings.ReplaceAll(q, fmt.Sprintf("\n(%d, '", row), fmt.Sprintf("\n(%d, '", i*10+row))
		}
		if _, err := tx.Exec(q); err != nil {
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
	sum := benchScan(b, warp.New([]string{root}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
