package ingest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/opencode"
)

// BenchmarkReaders_OpenCode polls a Kilo CLI database as a cold scan reads it (dry run, no
// watermark), reporting MB/s of database and rows/s (messages and parts) beside BenchmarkReaders:
// one kilo.db holding OBSERVER_BENCH_OPENCODE_COPIES copies (default 300: ~76 MB, 43,800 rows) of the corpus's
// kilo.db dumps (../shared/corpus/opencode, or $OBSERVER_CORPUS/opencode), each copy's sessions,
// messages and parts under fresh ids and shifted back an hour per copy, in the client's schema
// (pkg/transcript/opencode/testdata/schema.sql), checkpointed as the client leaves it on exit.
func BenchmarkReaders_OpenCode(b *testing.B) {
	data := openCodeHistory(b)
	sum := benchScan(b, opencode.NewKilo([]string{data}))
	b.ReportMetric(float64(sum.Lines)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// openCodeHistory writes the database BenchmarkReaders_OpenCode reads and returns its directory.
func openCodeHistory(b *testing.B) string {
	b.Helper()
	dir, entries := benchCorpus(b, "OpenCode/Kilo", "opencode")
	copies := benchCopies("OBSERVER_BENCH_OPENCODE_COPIES", 300)
	schema, err := os.ReadFile(filepath.Join("..", "..", "pkg", "transcript", "opencode", "testdata", "schema.sql"))
	if err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(b.TempDir(), "kilo")
	if err := os.MkdirAll(data, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(data, "kilo.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=OFF")
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
	ins := newRowInserter(tx)
	idRE := regexp.MustCompile(`"((?:ses|msg|prt)_[0-9A-Za-z]+)"`)
	const hour = int64(3600 * 1000)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		var projects struct {
			Projects []map[string]any `json:"projects"`
		}
		if err := json.Unmarshal(raw, &projects); err != nil {
			b.Fatalf("%s: %v", e.Name(), err)
		}
		for _, row := range projects.Projects { // shared by every copy, as sessions share a project
			ins.insert(b, "project", row, 0)
		}
		for i := range copies {
			// Every quoted session, message and part id, in the columns and inside data, gets the
			// copy's suffix.
			copyRaw := idRE.ReplaceAll(raw, []byte(fmt.Sprintf(`"${1}c%04d"`, i)))
			var dump map[string][]map[string]any
			if err := json.Unmarshal(copyRaw, &dump); err != nil {
				b.Fatalf("%s: %v", e.Name(), err)
			}
			for _, t := range [][2]string{{"sessions", "session"}, {"messages", "message"}, {"parts", "part"}} {
				for _, row := range dump[t[0]] {
					ins.insert(b, t[1], row, -int64(i)*hour)
				}
			}
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
	os.Remove(path + "-wal") // a client that exited cleanly leaves none: the reader opens it immutable
	os.Remove(path + "-shm")
	return data
}

// rowInserter inserts dump rows (column values; data, and any object, as JSON text) through one
// prepared statement per table and column set.
type rowInserter struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func newRowInserter(tx *sql.Tx) *rowInserter {
	return &rowInserter{tx: tx, stmts: map[string]*sql.Stmt{}}
}

// insert writes row into table, its time_created and time_updated moved by shift milliseconds.
func (r *rowInserter) insert(b *testing.B, table string, row map[string]any, shift int64) {
	b.Helper()
	cols := make([]string, 0, len(row))
	for k := range row {
		cols = append(cols, k)
	}
	slices.Sort(cols)
	key := table + ":" + strings.Join(cols, ",")
	st := r.stmts[key]
	if st == nil {
		q := fmt.Sprintf("INSERT OR REPLACE INTO `%s` (`%s`) VALUES (%s)", table, strings.Join(cols, "`,`"),
			strings.TrimSuffix(strings.Repeat("?,", len(cols)), ","))
		var err error
		if st, err = r.tx.Prepare(q); err != nil {
			b.Fatal(err)
		}
		r.stmts[key] = st
	}
	vals := make([]any, len(cols))
	for i, c := range cols {
		switch v := row[c].(type) {
		case map[string]any, []any:
			j, _ := json.Marshal(v)
			vals[i] = string(j)
		case float64:
			if v != math.Trunc(v) { // cost, a real column
				vals[i] = v
				break
			}
			n := int64(v)
			if c == "time_created" || c == "time_updated" {
				n += shift
			}
			vals[i] = n
		default:
			vals[i] = v
		}
	}
	if _, err := st.Exec(vals...); err != nil {
		b.Fatalf("insert into %s: %v", table, err)
	}
}
