// Package sqliteread reads a client's SQLite database while the client may be writing it, the way
// the database readers (packages opencode, crush, zed, ...) do.
//
// A pass opens the database read-only and never takes a write lock. When a -wal file exists (the
// client runs, or crashed), it opens it with mode=ro and a busy timeout: the connection shares the
// client's -shm wal-index and sees every committed row. When there is no -wal file (the client is
// not running and the database is checkpointed), mode=ro would create empty -wal and -shm files
// and leave them behind, so the pass opens it with immutable=1 instead, and afterwards checks
// that no -wal appeared and that the file's size and modification time are unchanged; if they
// changed (the client started meanwhile) the pass is thrown away and read again, at most three
// times in all. A reader that hands over part of what it read before its pass ends (a
// transcript.StreamPoller) calls Unchanged first, so that it never hands over what it read from a
// database that changed under an immutable connection; PassEach and its Batcher do that for it.
//
// Memory: a connection lives for one pass (the database is closed after it), and its page cache
// is capped at cacheKiB (SQLite's default, made explicit), whatever the database's size.
package sqliteread

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

// busyTimeoutMs is how long a read waits for a lock the client holds (a checkpoint, a WAL reset).
const busyTimeoutMs = 5000

// cacheKiB is the page cache of a connection, in KiB (PRAGMA cache_size=-cacheKiB).
const cacheKiB = 2000

// attempts is how many passes Read makes before it gives up on a database that keeps changing.
const attempts = 3

// ErrChanged reports a database the client started writing while it was read as immutable.
var ErrChanged = errors.New("database changed while read")

type fileSig struct {
	size, mtime int64
	wal         bool
}

func sigOf(path string) (fileSig, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{}, err
	}
	_, werr := os.Stat(path + "-wal")
	return fileSig{size: fi.Size(), mtime: fi.ModTime().UnixNano(), wal: werr == nil}, nil
}

// dsn returns the read-only URI of path: mode=ro when the database has a -wal file, immutable=1
// when it has none (see the package doc).
func dsn(path string, wal bool) string {
	q := fmt.Sprintf("mode=ro&_busy_timeout=%d&_cache_size=-%d", busyTimeoutMs, cacheKiB)
	if !wal {
		q = fmt.Sprintf("immutable=1&_cache_size=-%d", cacheKiB)
	}
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: q}
	return u.String()
}

// Read opens the database at path read-only (see the package doc) and calls read with it, on one
// connection. read starts from the caller's committed state each time it is called and must
// keep what it reads apart from it: a pass that read a database which changed meanwhile is thrown
// away and read is called again, at most three times in all (then the error is ErrChanged). The
// caller commits what the last call of read produced only when Read returns nil. An error of
// read is returned as "read PATH: ...", and ends the retries.
func Read(ctx context.Context, path string, read func(ctx context.Context, db *sql.DB) error) error {
	var err error
	for range attempts {
		err = readOnce(ctx, path, read)
		if !errors.Is(err, ErrChanged) {
			return err
		}
	}
	return err
}

// Pass is Read for a reader that keeps a watermark: each attempt reads from start(), a fresh copy
// of the committed state, which read advances as it reads. It returns the state and what the
// successful attempt read, for the caller to commit; on an error, nothing is to be committed.
func Pass[S, R any](ctx context.Context, path string, start func() S, read func(context.Context, *sql.DB, *S) (R, error)) (S, R, error) {
	var work S
	var got R
	err := Read(ctx, path, func(ctx context.Context, db *sql.DB) (err error) {
		work = start()
		got, err = read(ctx, db, &work)
		return err
	})
	return work, got, err
}

func readOnce(ctx context.Context, path string, read func(ctx context.Context, db *sql.DB) error) error {
	before, err := sigOf(path)
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", dsn(path, before.wal))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if !before.wal {
		ctx = context.WithValue(ctx, unchangedKey{}, func() error {
			if after, err := sigOf(path); err != nil || after != before {
				return ErrChanged
			}
			return nil
		})
	}
	if err := read(ctx, db); err != nil {
		if errors.Is(err, ErrChanged) {
			return err
		}
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !before.wal {
		if after, err := sigOf(path); err != nil || after != before {
			return ErrChanged
		}
	}
	return nil
}

type unchangedKey struct{}

// Unchanged returns ErrChanged when, in a read that Read or Pass called with ctx, the database was
// opened as immutable and has changed since (what was read from it may mix two states of the
// file), else nil. A read that returns ErrChanged (wrapped or not) is thrown away and called
// again, like one the check after it catches.
func Unchanged(ctx context.Context) error {
	if f, ok := ctx.Value(unchangedKey{}).(func() error); ok {
		return f()
	}
	return nil
}

// CloseRows closes q and returns the error that ended its iteration, else the one of closing it.
func CloseRows(q *sql.Rows) error {
	err := q.Err()
	if cerr := q.Close(); err == nil {
		err = cerr
	}
	return err
}

// Columns lists the columns of a table (empty when there is no such table), so that a reader
// reads the columns a client's later migrations added only where they exist.
func Columns(ctx context.Context, tx *sql.Tx, table string) (map[string]bool, error) {
	q, err := tx.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for q.Next() {
		var name string
		if err := q.Scan(&name); err != nil {
			q.Close()
			return nil, err
		}
		out[name] = true
	}
	return out, CloseRows(q)
}

// Col returns the SQL that reads column name, NULL read as def, as type typ ("TEXT", "INTEGER",
// "REAL"), or def when the table has no such column (cols, from Columns): a client's older
// schema lacks what its later migrations added.
func Col(cols map[string]bool, name, typ, def string) string {
	if !cols[name] {
		return def
	}
	return fmt.Sprintf("CAST(COALESCE(%s, %s) AS %s)", name, def, typ)
}

// Opt returns expr when the table has column col (cols, from Columns), else def.
func Opt(cols map[string]bool, col, expr, def string) string {
	if cols[col] {
		return expr
	}
	return def
}
