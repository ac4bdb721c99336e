package store_test

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// openWriter opens a writer on path and closes it when the test ends.
func openWriter(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s, err := store.OpenWriter(context.Background(), path)
	if err != nil {
		tb.Fatalf("OpenWriter: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// newWriter opens a writer on a fresh database in a temp dir.
func newWriter(tb testing.TB) *store.Store {
	tb.Helper()
	return openWriter(tb, filepath.Join(tb.TempDir(), "observer.db"))
}

func openReader(tb testing.TB, path string) *store.Store {
	tb.Helper()
	s, err := store.OpenReader(context.Background(), path)
	if err != nil {
		tb.Fatalf("OpenReader: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// row runs a query that returns one row and gives its values as int64, float64, string, []byte
// or nil.
func row(tb testing.TB, db *sql.DB, query string, args ...any) []any {
	tb.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	if !rows.Next() {
		tb.Fatalf("%s %v: no row (err %v)", query, args, rows.Err())
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		tb.Fatal(err)
	}
	if rows.Next() {
		tb.Fatalf("%s %v: more than one row", query, args)
	}
	return vals
}

// checkRow fails when the query's one row is not want.
func checkRow(tb testing.TB, db *sql.DB, want []any, query string, args ...any) {
	tb.Helper()
	if got := row(tb, db, query, args...); !reflect.DeepEqual(got, want) {
		tb.Errorf("%s\n got  %#v\n want %#v", strings.Join(strings.Fields(query), " "), got, want)
	}
}

func count(tb testing.TB, db *sql.DB, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

func mode(tb testing.TB, path string) fs.FileMode {
	tb.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestOpenWriter_CreatesPrivateWALDatabase(t *testing.T) {
	// With the usual umask a file created without an explicit mode would be 0644.
	defer syscall.Umask(syscall.Umask(0o022))
	dir := filepath.Join(t.TempDir(), "home")
	path := filepath.Join(dir, "observer.db")
	s := openWriter(t, path)

	var journal string
	if err := s.DB.QueryRow("PRAGMA journal_mode").Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if journal != "wal" {
		t.Errorf("journal_mode = %q, want wal", journal)
	}
	if _, err := s.WriteBatch(context.Background(), []event.Event{hookEv("h1", t0, "SessionStart")}, nil); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("directory mode %v, want 0700", m)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
		if m := mode(t, f); m != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(f), m)
		}
	}
}

func TestOpenWriter_AppliesMigrationsOnce(t *testing.T) {
	files, err := filepath.Glob("migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found: %v", err)
	}
	newest, err := strconv.Atoi(strings.SplitN(filepath.Base(files[len(files)-1]), "_", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	migrations := func(s *store.Store) [][3]any {
		t.Helper()
		rows, err := s.DB.Query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][3]any
		for rows.Next() {
			var v, at int64
			var name string
			if err := rows.Scan(&v, &name, &at); err != nil {
				t.Fatal(err)
			}
			out = append(out, [3]any{v, name, at})
		}
		return out
	}

	s, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	first := migrations(s)
	if len(first) != len(files) {
		t.Errorf("schema_migrations has %d rows, want one per file (%d)", len(first), len(files))
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != newest {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, newest)
	}
	if _, err := s.WriteBatch(ctx, []event.Event{hookEv("h1", t0, "Stop")}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()

	time.Sleep(2 * time.Millisecond) // a re-applied migration would get a later applied_at
	s = openWriter(t, path)
	if again := migrations(s); !reflect.DeepEqual(again, first) {
		t.Errorf("schema_migrations after reopening = %v, want unchanged %v", again, first)
	}
	if v, err := s.SchemaVersion(ctx); err != nil || v != newest {
		t.Errorf("SchemaVersion after reopening = %d, %v; want %d", v, err, newest)
	}
	if n := count(t, s.DB, "SELECT count(*) FROM hook_events"); n != 1 {
		t.Errorf("hook_events has %d rows after reopening, want the 1 written before", n)
	}
}

func TestOpenWriter_SecondWriterIsLocked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "observer.db")
	first, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	second, err := store.OpenWriter(ctx, path)
	if err == nil {
		second.Close()
		first.Close()
		t.Fatal("a second OpenWriter on the same path succeeded")
	}
	if !errors.Is(err, store.ErrLocked) {
		t.Errorf("second OpenWriter = %v, want ErrLocked", err)
	}
	if pid := strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), "pid "+pid) {
		t.Errorf("second OpenWriter = %q, want it to name the holder, pid %s", err, pid)
	}

	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	openWriter(t, path)
}

func TestOpenReader_MissingDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observer.db")
	s, err := store.OpenReader(context.Background(), path)
	if err == nil {
		s.Close()
		t.Fatal("OpenReader on a missing database succeeded")
	}
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "observerctl up") {
		t.Errorf("OpenReader = %q, want a not-exist error naming the path and what to run", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenReader created %s", path)
	}
}

func TestOpenReader_ReadsCommittedRowsAndCannotWrite(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	if _, err := w.WriteBatch(ctx, []event.Event{hookEv("h1", t0, "SessionStart")}, nil); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, w.Path())

	// The writer holds its one connection in an open write transaction.
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO projects (path, name, first_seen, last_seen) VALUES ('/p', 'p', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	if n := count(t, r.DB, "SELECT count(*) FROM hook_events"); n != 1 {
		t.Errorf("reader sees %d hook events during the writer's transaction, want the 1 committed", n)
	}
	if n := count(t, r.DB, "SELECT count(*) FROM projects WHERE path = '/p'"); n != 0 {
		t.Errorf("reader sees the writer's uncommitted row")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, r.DB, "SELECT count(*) FROM projects WHERE path = '/p'"); n != 1 {
		t.Errorf("reader does not see the row after the commit")
	}

	if _, err := r.DB.Exec(`INSERT INTO projects (path, name, first_seen, last_seen) VALUES ('/q', 'q', 1, 1)`); err == nil {
		t.Error("an INSERT through the reader succeeded")
	}
	if n := count(t, w.DB, "SELECT count(*) FROM projects WHERE path = '/q'"); n != 0 {
		t.Error("the reader's INSERT landed in the database")
	}
}

// The writer's page caches are bounded as documented at CacheKiB: its own connection's at
// CacheKiB, the read connection's (ReadDB) at ReadCacheKiB.
func TestStore_CacheSizes(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rdb, err := st.ReadDB()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		db   *sql.DB
		want int
	}{{"writer", st.DB, -store.CacheKiB}, {"read", rdb, -store.ReadCacheKiB}} {
		var got int
		if err := c.db.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s connection: cache_size %d, want %d", c.name, got, c.want)
		}
	}
}

// Both full-text indexes gather 4 MiB of terms in memory before they write a segment (migration
// 0022), in the config table each keeps, so that every connection indexes with it.
func TestOpenWriter_FullTextIndexesGatherFourMiBPerSegment(t *testing.T) {
	s := newWriter(t)
	r := openReader(t, s.Path())
	for _, index := range []string{"tool_output_fts", "message_fts"} {
		for _, db := range []*sql.DB{s.DB, r.DB} {
			if got := row(t, db, `SELECT v FROM `+index+`_config WHERE k = 'hashsize'`); got[0] != int64(4<<20) {
				t.Errorf("%s: hashsize %v, want %d", index, got[0], 4<<20)
			}
		}
	}
}
