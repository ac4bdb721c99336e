package sqliteread

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// newDB creates a database with one row at path, in journal mode mode, and returns a writer
// connection to it.
func newDB(t *testing.T, path, mode string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode="+mode)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, q := range []string{"CREATE TABLE t (v TEXT)", "INSERT INTO t VALUES ('a')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func values(ctx context.Context, db *sql.DB) ([]string, error) {
	q, err := db.QueryContext(ctx, "SELECT v FROM t ORDER BY v")
	if err != nil {
		return nil, err
	}
	var out []string
	for q.Next() {
		var v string
		if err := q.Scan(&v); err != nil {
			q.Close()
			return nil, err
		}
		out = append(out, v)
	}
	return out, CloseRows(q)
}

func TestDSN(t *testing.T) {
	if got := dsn("/d/a b.db", true); got != "file:/d/a%20b.db?mode=ro&_busy_timeout=5000&_cache_size=-2000" {
		t.Errorf("with -wal: %s", got)
	}
	if got := dsn("/d/a b.db", false); got != "file:/d/a%20b.db?immutable=1&_cache_size=-2000" {
		t.Errorf("without -wal: %s", got)
	}
}

// A database with no -wal file is read as immutable and nothing is left beside it.
func TestRead_ImmutableLeavesNoFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := Read(context.Background(), path, func(ctx context.Context, db *sql.DB) (err error) {
		got, err = values(ctx, db)
		return err
	})
	if err != nil || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("read %v, %v", got, err)
	}
	if files := transcripttest.DirFiles(t, filepath.Dir(path)); !slices.Equal(files, []string{"x.db"}) {
		t.Errorf("files after: %v", files)
	}
}

// A database a writer holds open in WAL mode is read with mode=ro, and sees the rows committed
// to the -wal file.
func TestRead_WAL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	w := newDB(t, path, "WAL")
	if _, err := w.Exec("INSERT INTO t VALUES ('b')"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := Read(context.Background(), path, func(ctx context.Context, db *sql.DB) (err error) {
		got, err = values(ctx, db)
		return err
	})
	if err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("read %v, %v", got, err)
	}
	if _, err := w.Exec("INSERT INTO t VALUES ('c')"); err != nil {
		t.Errorf("the writer after the read: %v", err)
	}
}

// A database that changes while it is read as immutable is read again, at most three times.
func TestRead_ChangedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	// touch sets the file's times to the n-th of a series of past times, each unlike the others.
	touch := func(n int) error {
		at := time.Unix(int64(1_000_000+n), 0)
		return os.Chtimes(path, at, at)
	}
	calls := 0
	err := Read(context.Background(), path, func(ctx context.Context, db *sql.DB) error {
		if calls++; calls == 1 {
			if err := touch(calls); err != nil {
				return err
			}
		}
		_, err := values(ctx, db)
		return err
	})
	if err != nil || calls != 2 {
		t.Fatalf("changed once: %d calls, %v; want 2 and no error", calls, err)
	}
	calls = 0
	err = Read(context.Background(), path, func(context.Context, *sql.DB) error {
		calls++
		return touch(10 + calls)
	})
	if !errors.Is(err, ErrChanged) || calls != 3 {
		t.Fatalf("changed every time: %d calls, %v; want 3 and ErrChanged", calls, err)
	}
}

// An error of the read callback ends the retries and names the file.
func TestRead_Error(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	calls := 0
	boom := errors.New("boom")
	err := Read(context.Background(), path, func(context.Context, *sql.DB) error { calls++; return boom })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) || calls != 1 {
		t.Fatalf("%d calls, %v", calls, err)
	}
	if err := Read(context.Background(), path+".missing", func(context.Context, *sql.DB) error { return nil }); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing database: %v", err)
	}
}

// Pass gives each attempt a fresh copy of the committed state, and returns the successful one's.
func TestPass(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	committed := []string{"old"}
	attempts := 0
	start := func() []string { return slices.Clone(committed) }
	work, got, err := Pass(context.Background(), path, start, func(ctx context.Context, db *sql.DB, st *[]string) ([]string, error) {
		attempts++
		*st = append(*st, "read")
		if attempts == 1 { // the client writes meanwhile: this attempt is thrown away
			at := time.Unix(1_000_000, 0)
			if err := os.Chtimes(path, at, at); err != nil {
				return nil, err
			}
		}
		return values(ctx, db)
	})
	if err != nil || attempts != 2 || !slices.Equal(work, []string{"old", "read"}) || !slices.Equal(got, []string{"a"}) {
		t.Fatalf("%d attempts: state %v, read %v, %v", attempts, work, got, err)
	}
	if !slices.Equal(committed, []string{"old"}) {
		t.Errorf("committed state touched: %v", committed)
	}
}

// Unchanged tells a read of a database opened as immutable that the file changed since it was
// opened, and returning its ErrChanged retries the read; in mode=ro (a -wal file) and outside a
// read it is nil.
func TestUnchanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	if err := newDB(t, path, "DELETE").Close(); err != nil {
		t.Fatal(err)
	}
	if err := Unchanged(context.Background()); err != nil {
		t.Fatalf("outside a read: %v", err)
	}
	var seen []error
	err := Read(context.Background(), path, func(ctx context.Context, db *sql.DB) error {
		seen = append(seen, Unchanged(ctx))
		if len(seen) == 1 {
			at := time.Unix(1_000_000, 0)
			if err := os.Chtimes(path, at, at); err != nil {
				return err
			}
			err := Unchanged(ctx)
			seen = append(seen, err)
			return fmt.Errorf("handing over: %w", err)
		}
		return nil
	})
	if err != nil || len(seen) != 3 || seen[0] != nil || !errors.Is(seen[1], ErrChanged) || seen[2] != nil {
		t.Fatalf("Read: %v; Unchanged said %v; want nil, ErrChanged (retried), nil", err, seen)
	}
	walPath := filepath.Join(t.TempDir(), "w.db")
	newDB(t, walPath, "WAL") // a writer holds it open: mode=ro, a snapshot
	err = Read(context.Background(), walPath, func(ctx context.Context, db *sql.DB) error { return Unchanged(ctx) })
	if err != nil {
		t.Fatalf("mode=ro: %v", err)
	}
}
