package goose

import (
	"database/sql"
	_ "embed"
	"flag"
	"path/filepath"
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

// view is what a golden file keeps of an event: its identity and payload, the transcript path
// reduced to its base name (the tests' files live in temporary directories).
type view struct {
	ID         string            `json:"id"`
	Kind       event.Kind        `json:"kind"`
	Time       string            `json:"time"`
	Session    string            `json:"session"`
	Project    string            `json:"project,omitempty"`
	Action     *event.Action     `json:"action,omitempty"`
	TokenUsage *event.TokenUsage `json:"token_usage,omitempty"`
	State      *event.Session    `json:"session_event,omitempty"`
}

func views(evs []event.Event) []view {
	out := make([]view, 0, len(evs))
	for _, e := range evs {
		v := view{ID: e.ID, Kind: e.Kind, Time: e.Time.Format("2006-01-02T15:04:05Z07:00"), Session: e.SessionID,
			Project: e.Project, TokenUsage: e.TokenUsage}
		if e.Action != nil {
			a := *e.Action
			a.Transcript = filepath.Base(a.Transcript)
			v.Action = &a
		}
		if e.Session != nil {
			s := *e.Session
			s.TranscriptPath = filepath.Base(s.TranscriptPath)
			v.State = &s
		}
		out = append(out, v)
	}
	return out
}

// kinds counts events by kind, actions by type.
func kinds(evs []event.Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
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
