package kiro

import (
	"database/sql"
	_ "embed"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

//go:embed testdata/schema.sql
var schemaSQL string

// The fixtures are written here to the formats of the sources in the package doc: a KAS session
// (testdata/home/sessions/<bucket>/<id>: two turns, thinking, readFile, an executeBash that
// failed, strReplace, the lifecycle payloads that make no event), a v2 session and its subagent
// (testdata/home/sessions/cli: read, write's strReplace and insert, a shell that exited 2,
// use_subagent, a compaction, a turn with token figures and one with Kiro's zeros) and a v1
// conversation (testdata/conversations: execute_bash, fs_read, an MCP call that failed, fs_write,
// thinking), written into a database with the CLI's schema by the tests.
const (
	kasID     = "sess_5b1f0c9e-2a47-4d1e-9c3b-8e7f6a5d4c21"
	kasBucket = "7c3f1e2a9b4d5e60"
	v2ID      = "3f6c2b1a-8d4e-4f7a-9b2c-1e5d6a7b8c90"
	subID     = "8a2d4c6e-1b3f-4a5c-9e7d-0f1e2d3c4b5a"
	convID    = "c4e8a1f2-6b3d-4c9e-8a7f-2d1b0e9c8f7a"
	convKey   = "/home/dev/webapp"
	convCrtd  = int64(1771577999000)
	convUpd   = int64(1771578015500)
)

var check = transcripttest.Envelope(Client, Component)

func kasPath() string {
	p, _ := filepath.Abs(filepath.Join("testdata", "home", "sessions", kasBucket, kasID, kasMessages))
	return p
}

func cliPath(id, ext string) string {
	p, _ := filepath.Abs(filepath.Join("testdata", "home", "sessions", "cli", id+ext))
	return p
}

func srcOf(path, id string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, SessionID: id, Document: filepath.Ext(path) == ".json"}
}

// parse reads a fixture file in one pass.
func parse(tb testing.TB, src transcript.Source) ([]event.Event, transcript.Parser) {
	tb.Helper()
	return transcripttest.ParseFile(tb, New(nil).NewParser, src, check)
}

func byKind(evs []event.Event, k event.Kind) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// actions merges the action events as the writer does and returns them by tool-use id (a prompt
// by its target).
func actions(evs []event.Event) map[string]*event.Action {
	ids, byID := transcripttest.Merge(byKind(evs, event.KindAction))
	out := map[string]*event.Action{}
	for _, id := range ids {
		a := byID[id].Action
		k := a.ToolUseID
		if k == "" {
			k = string(a.Type) + ":" + a.Target
		}
		out[k] = a
	}
	return out
}

func fixture(tb testing.TB, rel string) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// newDB creates a database with the CLI's schema at path and returns a writer connection.
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

const upsertConv = `INSERT INTO conversations_v2 (key, conversation_id, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
	ON CONFLICT(key, conversation_id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`

// writeDB writes the v1 conversation into a new database under dir and returns its path and a
// writer connection.
func writeDB(tb testing.TB, dir string) (string, *sql.DB) {
	tb.Helper()
	path := filepath.Join(dir, DBName)
	db := newDB(tb, path)
	execT(tb, db, upsertConv, convKey, convID, string(fixture(tb, filepath.Join("conversations", convID+".json"))), convCrtd, convUpd)
	return path, db
}

func poll(tb testing.TB, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, New(nil), transcript.Source{Client: Client, Path: path, Database: true}, state)
}
