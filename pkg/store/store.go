// Package store owns observer's SQLite database.
//
// Ownership: exactly one process, the writer, opens the store for writing (OpenWriter); an
// exclusive lock on <db>.lock enforces it, and a second writer gets ErrLocked. Everyone else opens
// it read-only (OpenReader) and reads a consistent snapshot through WAL while the writer commits.
//
// Idempotency: every event table is keyed by the event id and written with INSERT OR IGNORE, so a
// batch delivered twice (a writer killed before its ack) stores each event once.
//
// Sessions of proxy turns: a client that sends no session id (Gemini CLI, Qwen Code, Cline) has its
// proxy turns linked by the writer to the messages of its own records (same figures within
// JoinWindowMs), and a turn no message claims, such as Gemini CLI's model-router call before each
// prompt, takes the session and project of the next proxy turn of the same client within
// NextTurnWindowMs (transcript_message_id NextTurnMark) rather than staying under no session. The
// writer decides, not the proxy, because only the writer sees the session the client's records give
// the turn after it; the rules and their limits are beside linkTurn in write.go.
//
// Migrations are the numbered .sql files under migrations/, each applied in its own transaction and
// recorded in schema_migrations. The database and its WAL files are created 0600.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver; build with -tags sqlite_fts5
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrLocked reports that another writer holds the store.
var ErrLocked = errors.New("store is locked by another writer")

// Store is a handle on the database.
type Store struct {
	DB   *sql.DB
	path string
	lock *os.File
	// file is the store file as it was when opened, for CheckFile.
	file os.FileInfo
	// Now is the clock, injectable in tests.
	Now func() time.Time

	readMu sync.Mutex
	read   *sql.DB // the writer's read-only connection (ReadDB)
	// bulkWAL: the writer's connection checkpoints the WAL at bulkWALPages (WriteOptions.Bulk).
	bulkWAL bool
}

// ReadDB is a read-only connection to the writer's own store, opened at the first call and closed
// with the store: work that reads much and writes little (the analysis) reads there, so that it
// does not hold the writer's only connection while it reads. It sees every committed write. Its
// page cache is ReadCacheKiB.
func (s *Store) ReadDB() (*sql.DB, error) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.read != nil {
		return s.read, nil
	}
	db, err := sql.Open(DriverName, dsn(s.path, true, ReadCacheKiB))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s.read = db
	return db, nil
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// ErrFileGone says that the store's path no longer names the file the store has open: it was
// removed or replaced (the observer home deleted under a running writer). What is committed after
// that goes to a file nobody will open again.
var ErrFileGone = errors.New("store file removed or replaced")

// CheckFile reports ErrFileGone when the path the writer opened no longer names its file.
func (s *Store) CheckFile() error {
	if s.file == nil {
		return nil
	}
	fi, err := os.Stat(s.path)
	if err != nil || !os.SameFile(fi, s.file) {
		return fmt.Errorf("%s: %w", s.path, ErrFileGone)
	}
	return nil
}

// CacheKiB is the page cache of each connection (SQLite's cache_size, in KiB). The writer's
// largest transactions (a bulk batch of 5,000 events) dirty about 10 MiB of pages: below that,
// SQLite spills them to the WAL before the commit and writes them twice. Readers reuse what the
// OS caches of the file. It was 64 MiB, which a connection fills as the store grows: most of a
// cold scan's memory.
//
// A connection's cache grows with the pages it touches until it reaches its size, and then stays
// there: on a store smaller than the cache, the process's RSS follows the store's size (a writer
// under steady load grows for as long as its store is under the cache sizes), then levels off.
// The writer's ceiling is CacheKiB on its connection plus ReadCacheKiB on ReadDB's, about 21 MiB
// with SQLite's per-page overhead, above the binary's mapped code and the Go heap
// (scripts/soak-writer.sh prints the curve).
const CacheKiB = 16 << 10

// ReadCacheKiB is the page cache of the writer's read connection (ReadDB). The analysis and the
// session memory read there: each session's actions once per change, a project's file and
// command actions once a minute: scans, which the OS's file cache serves as well. At CacheKiB the
// writer's two caches could hold 32 MiB between them.
const ReadCacheKiB = 4 << 10

func dsn(path string, readOnly bool, cacheKiB int) string {
	q := "?_busy_timeout=5000&_journal_mode=WAL&_synchronous=NORMAL&_foreign_keys=on&_cache_size=-" + strconv.Itoa(cacheKiB)
	if readOnly {
		return "file:" + path + q + "&mode=ro&_query_only=true"
	}
	return "file:" + path + q + "&_txlock=immediate&_stmt_cache_size=" + strconv.Itoa(WriterStmtCache)
}

// WriterStmtCache is how many compiled statements the writer's connection keeps for reuse
// (go-sqlite3's statement cache, by query text; a statement is reset when put back, so it holds no
// transaction open). A batch's transaction runs a few dozen statements (txQuery), and several of
// them (the session upsert, the rollups) take longer to compile than to run on a few rows. Only
// the writer's connection keeps them: on every connection, a cold scan's peak memory grew 10 MB.
const WriterStmtCache = 64

// MallocArenas is how many malloc arenas glibc may use in a process that opens the store for
// writing (OpenWriter), unless MALLOC_ARENA_MAX says otherwise. SQLite allocates its page caches
// and statements with malloc, from whichever OS thread the Go scheduler ran the call on, and glibc
// gives each thread an arena of its own, up to 8 per core: every arena then grows to the high-water
// mark of what was allocated in it and keeps it, so that the writer's RSS went on growing past its
// caches' ceiling (86 MB after 8 minutes at 120 requests/s, 5 arenas of 8 to 11 MB each, against
// 6 MB of Go heap). With two arenas the same memory is reused.
const MallocArenas = 2

// MallocTrimThreshold is how much free memory glibc keeps at the top of a malloc arena, in a
// process that opens the store for writing, unless MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES say
// otherwise. At glibc's default (128 KiB, or what its dynamic threshold grew to) each transaction
// freed what compiling and running its statements took, handed it back to the system (madvise)
// and faulted it in again at the next: a third of the writer's CPU for a small batch, spent in
// the kernel flushing TLBs. Settle still gives everything back after bulk work and when idle.
const MallocTrimThreshold = 4 << 20

var mallocOnce sync.Once

// limitMallocArenas applies MallocArenas and MallocTrimThreshold, once per process.
func limitMallocArenas() {
	mallocOnce.Do(func() {
		if os.Getenv("MALLOC_ARENA_MAX") == "" {
			setMallocArenas(MallocArenas)
		}
		if os.Getenv("MALLOC_TRIM_THRESHOLD_") == "" && !strings.Contains(os.Getenv("GLIBC_TUNABLES"), "trim_threshold") {
			setMallocTrimThreshold(MallocTrimThreshold)
		}
	})
}

// OpenWriter takes the writer lock, opens (creating) the database with mode 0600 and applies the
// pending migrations. It caps the process's malloc arenas (MallocArenas).
func OpenWriter(ctx context.Context, path string) (*Store, error) {
	limitMallocArenas()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	lock, err := acquireLock(path + ".lock")
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db, err := sql.Open(DriverName, dsn(path, false, CacheKiB))
	if err != nil {
		lock.Close()
		return nil, err
	}
	db.SetMaxOpenConns(1)
	s := &Store{DB: db, path: path, lock: lock, file: fi, Now: time.Now}
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		s.Close()
		return nil, fmt.Errorf("open store %s: journal mode is %q, want wal", path, mode)
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.KeepZone(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: daily rollup: %w", path, err)
	}
	// A writer stopped during a bulk load (killed, or the machine went down) left the indexes it
	// deferred: they are made now, before anything reads through them.
	if _, err := s.RestoreIndexes(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// OpenReader opens the database read-only. It fails if the database does not exist yet.
func OpenReader(ctx context.Context, path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open store %s: %w (has the writer run yet? start observer with `observerctl up`)", path, err)
	}
	db, err := sql.Open(DriverName, dsn(path, true, CacheKiB))
	if err != nil {
		return nil, err
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Store{DB: db, path: path, Now: time.Now}, nil
}

func acquireLock(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		holder := strings.TrimSpace(string(data))
		if holder == "" {
			holder = "unknown"
		}
		return nil, fmt.Errorf("%w (pid %s holds %s)", ErrLocked, holder, path)
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, nil
}

// Close closes the database and releases the writer lock.
func (s *Store) Close() error {
	s.readMu.Lock()
	if s.read != nil {
		s.read.Close()
		s.read = nil
	}
	s.readMu.Unlock()
	err := s.DB.Close()
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
	return err
}

// afterMigration fills what a migration created from the rows already stored, in its transaction.
var afterMigration = map[int]func(context.Context, *sql.Tx) error{
	5:  rebuildHourly,
	6:  fillAnalysis,
	8:  rebuildUsageLevels,
	11: fillTitles,
}

func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.DB.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := filepath.Base(name)
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migration %s: name must start with a number", base)
		}
		var n int
		if err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM schema_migrations WHERE version = ?", v).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.DB.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", base, err)
		}
		after := afterMigration[v]
		// The rollup rebuilds of 0005, 0008 and 0010 run today's TurnsSQL, which reads columns
		// 0010 and 0014 add: on a store older than those they wait for 0014, which rebuilds every
		// rollup anyway (its request-id join changes which transcript rows count).
		if (v == 5 || v == 8 || v == 10) && !hasColumn(ctx, tx, "api_turns", "origin") {
			after = nil
		}
		if v == 14 {
			after = rebuildRollups
		}
		if after != nil {
			if err := after(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migration %s: %w", base, err)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
			v, base, s.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

// hasColumn reports whether table has column.
func hasColumn(ctx context.Context, tx *sql.Tx, table, column string) bool {
	var n int
	tx.QueryRowContext(ctx, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?", table, column).Scan(&n)
	return n > 0
}

// ReadSchema reads the schema's pages: an error says the file does not open as a database.
func (s *Store) ReadSchema(ctx context.Context) error {
	var n int
	return s.DB.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
}

// QuarantineCount is how many bus messages the writer could not decode and kept.
func (s *Store) QuarantineCount(ctx context.Context) (int64, error) {
	var n int64
	err := s.DB.QueryRowContext(ctx, "SELECT count(*) FROM quarantine").Scan(&n)
	return n, err
}

// SchemaVersion returns the newest applied migration.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := s.DB.QueryRowContext(ctx, "SELECT max(version) FROM schema_migrations").Scan(&v)
	return int(v.Int64), err
}
