package cursor

import (
	"database/sql"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// vscdbSchema is the schema of a VS Code state database as Cursor has it (the storage
// references above: both tables, key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB).
const vscdbSchema = `CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);`

// newDB creates a state database at path in the journal mode given (VS Code's storage sets none:
// DELETE) and returns a writer connection to it.
func newDB(tb testing.TB, path, journal string) *sql.DB {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000&_synchronous=OFF&_journal_mode="+journal)
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	if _, err := db.Exec(vscdbSchema); err != nil {
		tb.Fatal(err)
	}
	return db
}

// put writes a cursorDiskKV row as Cursor does (INSERT, replacing the row of the same key); v is
// stored as a BLOB of its JSON, or as given when it is a string.
func put(tb testing.TB, db *sql.DB, table, key string, v any) {
	tb.Helper()
	var blob []byte
	switch v := v.(type) {
	case string:
		blob = []byte(v)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		blob = b
	}
	if _, err := db.Exec("INSERT INTO "+table+" (key, value) VALUES (?, ?)", key, blob); err != nil {
		tb.Fatal(err)
	}
}

// jsonString is v's JSON as a JSON string, the way Cursor stores rawArgs, params and result.
func jsonString(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func poll(tb testing.TB, a *Adapter, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, a, transcript.Source{Client: Client, Path: path, Database: true}, state)
}

// timeLayout writes an event's time in the golden files: to the millisecond, as Cursor records
// times.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// kinds counts events by kind, actions by type.
func kinds(evs []event.Event) map[string]int {
	out := map[string]int{}
	for _, e := range evs {
		k := string(e.Kind)
		switch {
		case e.Action != nil:
			k += ":" + string(e.Action.Type)
		case e.Session != nil && e.Session.Title != "":
			k += ":title"
		case e.Session != nil && e.Session.State == "":
			k += ":model"
		}
		out[k]++
	}
	return out
}

func srcOf(path string) transcript.Source {
	return transcript.Source{Client: Client, Path: path, Database: true}
}
