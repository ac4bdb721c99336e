package ingest

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/zcode"
)

// BenchmarkReaders_ZCode reads a ZCode database laid out as ZCode keeps it (dry run), reporting
// MB/s beside BenchmarkReaders: the reader's fixture schema (pkg/transcript/zcode/testdata; no
// corpus holds a ZCode database) filled with OBSERVER_BENCH_ZCODE_COPIES copies (default 1,000)
// of the fixture's rows, each under session ids of their own.
func BenchmarkReaders_ZCode(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "zcode", "testdata")
	schema, err := os.ReadFile(filepath.Join(fixtures, "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	rows, err := os.ReadFile(filepath.Join(fixtures, "rows.sql"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), ".zcode", "cli", "db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, zcode.DBName)+"?_journal_mode=WAL")
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
	for i := range benchCopies("OBSERVER_BENCH_ZCODE_COPIES", 1000) {
		copyRows := strings.NewReplacer("ses_8f2a61c0", fmt.Sprintf("ses_%08d", i), "'msg_1'", fmt.Sprintf("'msg_%d'", i),
			"'prt_1'", fmt.Sprintf("'prt_%d'", i)).Replace(string(rows))
		if _, err := tx.Exec(copyRows); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		b.Fatal(err)
	}
	benchScan(b, zcode.New([]string{dir}))
}
