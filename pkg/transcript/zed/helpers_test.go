package zed

import (
	"database/sql"
	_ "embed"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

//go:embed testdata/schema.sql
var schemaSQL string

// The fixtures (testdata/threads) are threads written here to the format of Zed's source (see the
// package doc): a current thread (two turns, a thinking block, read_file, terminal, grep with the
// input of older releases, spawn_agent, an edit_file that failed then one that worked, cumulative
// usage with cache figures), its subagent's thread (GPT-5, usage only per turn, as the releases
// before accumulate_token_usage left it) and a thread of Zed's first agent (JSON, not
// compressed; a terminal call the user denied).
const (
	mainID   = "8f2c4c1e-5b7a-4d1e-9a43-2f0c6d9b7e15"
	subID    = "3b9d0f6a-2c1e-4f7b-8d5a-6e4c3b2a1f09"
	legacyID = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"

	mainCreated = "2026-02-10T09:15:02.118734+00:00"
	mainUpdated = "2026-02-10T09:18:40.512008+00:00"
)

const insThread = `INSERT INTO threads (id, parent_id, folder_paths, folder_paths_order, summary, updated_at, data_type, data, created_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// upsertThread is Zed's save_thread_sync: the row is rewritten whole, created_at kept.
const upsertThread = insThread + ` ON CONFLICT(id) DO UPDATE SET parent_id = excluded.parent_id,
	folder_paths = excluded.folder_paths, folder_paths_order = excluded.folder_paths_order, summary = excluded.summary,
	updated_at = excluded.updated_at, data_type = excluded.data_type, data = excluded.data`

func fixture(tb testing.TB, id string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "threads", id+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

func compress(tb testing.TB, data []byte) []byte {
	tb.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// newDB creates a threads database with Zed's schema at path and returns a writer connection.
func newDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schemaSQL); err != nil {
		tb.Fatal(err)
	}
	return db
}

func execT(tb testing.TB, db *sql.DB, q string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		tb.Fatal(err)
	}
}

// writeFixtures writes the three fixture threads as Zed stores them.
func writeFixtures(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db := newDB(tb, path)
	execT(tb, db, insThread, mainID, nil, "/nonexistent-observer/webapp", "0", "Flaky login test", mainUpdated, "zstd",
		compress(tb, fixture(tb, mainID)), mainCreated)
	execT(tb, db, insThread, subID, mainID, "/nonexistent-observer/webapp", "0", "Find timer helpers",
		"2026-02-10T09:16:31.004417+00:00", "zstd", compress(tb, fixture(tb, subID)), "2026-02-10T09:16:02.730011+00:00")
	execT(tb, db, insThread, legacyID, nil, nil, nil, "Rename config loader", "2025-06-03T14:02:11.884+00:00", "json",
		fixture(tb, legacyID), "2025-06-03T14:02:11.884+00:00")
	return db
}

func srcDB(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
}

// poll runs one pass of a fresh parser from state.
func poll(tb testing.TB, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, New(nil), srcDB(path), state)
}

func filter(evs []event.Event, keep func(*event.Event) bool) []event.Event {
	var out []event.Event
	for i := range evs {
		if keep(&evs[i]) {
			out = append(out, evs[i])
		}
	}
	return out
}

func ofThread(evs []event.Event, session, agent string) []event.Event {
	return filter(evs, func(e *event.Event) bool {
		if e.SessionID != session {
			return false
		}
		switch {
		case e.Action != nil:
			return e.Action.AgentID == agent
		case e.Message != nil:
			return e.Message.AgentID == agent
		case e.TokenUsage != nil:
			return e.TokenUsage.AgentID == agent
		}
		return agent == ""
	})
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	return filter(evs, func(e *event.Event) bool { return e.Kind == k })
}

func actionsByTool(evs []event.Event) map[string]*event.Action {
	out := map[string]*event.Action{}
	for _, e := range byKind(evs, event.KindAction) {
		key := e.Action.Tool
		if key == "" {
			key = string(e.Action.Type)
		}
		if _, dup := out[key]; !dup {
			out[key] = e.Action
		}
	}
	return out
}

// newDBNoSchema creates an empty database at path.
func newDBNoSchema(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
