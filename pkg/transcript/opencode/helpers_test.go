package opencode

import (
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

//go:embed testdata/schema.sql
var schemaSQL string

// newDB creates a database with the client's schema at path, in WAL mode as the client keeps it,
// and returns a writer connection to it.
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

// loadDump inserts the rows of a corpus dump ({sessions, messages, parts, projects}: rows of
// column values, data as JSON objects) into db.
func loadDump(tb testing.TB, db *sql.DB, path string) {
	tb.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var dump map[string][]map[string]any
	if err := json.Unmarshal(raw, &dump); err != nil {
		tb.Fatal(err)
	}
	for _, t := range [][2]string{{"projects", "project"}, {"sessions", "session"}, {"messages", "message"}, {"parts", "part"}} {
		for _, row := range dump[t[0]] {
			insertRow(tb, db, t[1], row)
		}
	}
}

func insertRow(tb testing.TB, db *sql.DB, table string, row map[string]any) {
	tb.Helper()
	var cols, marks []string
	var vals []any
	keys := make([]string, 0, len(row))
	for k := range row {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := row[k]
		switch v.(type) {
		case map[string]any, []any:
			b, _ := json.Marshal(v)
			v = string(b)
		case float64:
			v = int64(v.(float64))
		}
		cols = append(cols, "`"+k+"`")
		marks = append(marks, "?")
		vals = append(vals, v)
	}
	q := fmt.Sprintf("INSERT OR REPLACE INTO `%s` (%s) VALUES (%s)", table, strings.Join(cols, ","), strings.Join(marks, ","))
	if _, err := db.Exec(q, vals...); err != nil {
		tb.Fatalf("insert into %s: %v", table, err)
	}
}

// poll runs one pass of a fresh parser from state, and returns its events and new state.
func poll(tb testing.TB, a *Adapter, path string, state []byte) ([]event.Event, []byte, transcript.Stats) {
	tb.Helper()
	return transcripttest.Poll(tb, a, transcript.Source{Client: a.Client(), Path: path, Database: true}, state)
}

// figures sums what a test checks.
type figures struct {
	Sessions, Usages, Actions int
	Titles                    []string // the titles reported, in order
	Tokens                    event.Tokens
	Cost                      float64
	Types                     map[event.ActionType]int
}

func sumUp(evs []event.Event) figures {
	f := figures{Types: map[event.ActionType]int{}}
	for _, e := range evs {
		switch e.Kind {
		case event.KindSession:
			if e.Session.Title != "" {
				f.Titles = append(f.Titles, e.Session.Title)
			} else {
				f.Sessions++
			}
		case event.KindTokenUsage:
			f.Usages++
			t := e.TokenUsage.Tokens
			f.Tokens.Input += t.Input
			f.Tokens.Output += t.Output
			f.Tokens.Reasoning += t.Reasoning
			f.Tokens.CacheRead += t.CacheRead
			f.Tokens.CacheCreation += t.CacheCreation
			f.Cost += e.TokenUsage.CostUSD
		case event.KindAction:
			f.Actions++
			f.Types[e.Action.Type]++
		}
	}
	return f
}

// copyFile copies a testdata database into a temporary directory, so a test never writes beside
// the original.
func copyFile(tb testing.TB, src string) string {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(tb.TempDir(), filepath.Base(src))
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return dst
}
