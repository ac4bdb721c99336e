package store_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// storeAtSchema makes a store at path with the first version migrations applied, as an observer
// of that schema left it, and returns it open with the plain go-sqlite3 driver (no unpack).
func storeAtSchema(tb testing.TB, path string, version int) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		tb.Fatal(err)
	}
	files, _ := filepath.Glob("migrations/*.sql")
	sort.Strings(files)
	for v, f := range files[:version] {
		body, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		db.Exec("INSERT INTO schema_migrations VALUES (?, ?, 0)", v+1, filepath.Base(f))
	}
	return db
}
