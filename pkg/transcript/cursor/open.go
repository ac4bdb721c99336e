package cursor

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/observerhq/observer/pkg/transcript/sqliteread"
)

// busyTimeoutMs is how long a read waits for a lock Cursor holds.
const busyTimeoutMs = 5000

// rollbackJournal reports whether the database at path is in a rollback-journal mode: its header
// says legacy file format versions (1, 1) rather than WAL (2, 2). VS Code's storage, which Cursor
// inherits, opens its databases without setting a journal mode, so they are (SQLite's default
// DELETE mode).
func rollbackJournal(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var h [20]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return string(h[:16]) == "SQLite format 3\x00" && h[18] == 1 && h[19] == 1
}

// readPass runs one read pass of the database at path from start(), like sqliteread.Pass. A
// database in a rollback-journal mode is opened with mode=ro and a busy timeout instead: its
// reader takes SQLite's shared lock, so Cursor's writes wait for the pass (or the pass for them)
// and it sees only committed pages, which immutable=1 does not promise while Cursor writes the
// file in place; mode=ro creates no -wal or -shm file in that mode.
func readPass[S, R any](ctx context.Context, path string, start func() S, read func(context.Context, *sql.DB, *S) (R, error)) (S, R, error) {
	if !rollbackJournal(path) {
		return sqliteread.Pass(ctx, path, start, read)
	}
	work := start()
	var got R
	u := url.URL{Scheme: "file", OmitHost: true, Path: path, RawQuery: fmt.Sprintf("mode=ro&_busy_timeout=%d", busyTimeoutMs)}
	db, err := sql.Open("sqlite3", u.String())
	if err != nil {
		return work, got, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	got, err = read(ctx, db, &work)
	if err != nil {
		return work, got, fmt.Errorf("read %s: %w", path, err)
	}
	return work, got, nil
}
