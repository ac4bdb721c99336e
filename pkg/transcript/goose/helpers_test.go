package goose

import (
	"database/sql"
	_ "embed"
	"flag"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

//go:embed testdata/schema.sql
var schemaSQL string

// newDB creates a session database with goose's schema at path, in WAL mode as goose keeps it
// (sqlx with journal_mode WAL), and returns a writer connection to it.
func newDB(tb testing.TB, path, schema string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_journal_mode=WAL")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(schema); err != nil {
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

// poll runs one pass of a fresh parser from state.
func poll(tb testing.TB, a *Adapter, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, a, transcript.Source{Client: Client, Path: path, Database: true}, state)
}

// srcDB is the source Discover gives a database.
func srcDB(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
}

// kinds counts events by kind, actions by type; messages are counted by the conversation tests.
func kinds(evs []event.Event) map[string]int {
	out := map[string]int{}
	for _, e := range transcripttest.WithoutMessages(evs) {
		k := string(e.Kind)
		if e.Action != nil {
			k += ":" + string(e.Action.Type)
		}
		if e.Session != nil && e.Session.Title != "" {
			k += ":title"
		}
		out[k]++
	}
	return out
}
