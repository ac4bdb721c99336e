package store_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/store"
)

// goTestOutput is a tool output of the kind agents produce all day: long and repetitive.
func goTestOutput(term string) string {
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "=== RUN   TestParse/case_%02d\n--- PASS: TestParse/case_%02d (0.00s)\n", i, i)
	}
	b.WriteString("FAIL: " + term + " did not match\nok  \tgithub.com/acme/parse\t0.412s\n")
	return b.String()
}

func TestPack_KeepsTextAsItWas(t *testing.T) {
	long := goTestOutput("anything")
	random := make([]byte, 600)
	rand.Read(random)
	noisy := base64.StdEncoding.EncodeToString(random) // does not compress below itself
	for _, s := range []string{"", "short text", long, noisy, strings.Repeat("é漢", 200)} {
		v := store.Pack(s)
		if b, ok := v.([]byte); ok && len(b) >= len(s) {
			t.Errorf("packed %d bytes into %d", len(s), len(b))
		}
		if _, ok := v.(string); !ok && len(s) < 128 {
			t.Errorf("a text of %d bytes was packed", len(s))
		}
		got, err := store.Unpack(v)
		if err != nil || got != s {
			t.Errorf("Unpack(Pack(%.20q)) = %.20q, %v", s, got, err)
		}
	}
	if _, ok := store.Pack(long).([]byte); !ok {
		t.Errorf("a %d-byte test log was not packed", len(long))
	}
	if _, ok := store.Pack(noisy).(string); !ok {
		t.Error("a text that does not compress was packed anyway")
	}
	if _, err := store.Unpack([]byte("not a zstd frame")); err == nil {
		t.Error("Unpack of a damaged BLOB gave no error")
	}
}

// A long tool output is stored packed, read back whole, found by the full-text index with a
// snippet of its text, and pruned with its index entry; a short one is stored as it is.
func TestPack_OutputsStoredPackedSearchedPruned(t *testing.T) {
	ctx := context.Background()
	s, err := store.OpenWriter(ctx, filepath.Join(t.TempDir(), "observer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long, old := goTestOutput("zebrafish"), goTestOutput("okapi")
	evs := []event.Event{
		actionEv("a1", t0, event.Action{Type: "run_command", Tool: "Bash", Target: "go test ./...", Output: long, OutputSize: int64(len(long))}),
		actionEv("a2", t0, event.Action{Type: "read_file", Tool: "Read", Target: "/p/x.go", Output: "package x", OutputSize: 9}),
		actionEv("a3", t0.Add(-72*time.Hour), event.Action{Type: "run_command", Tool: "Bash", Target: "go test ./...", Output: old, OutputSize: int64(len(old))}),
	}
	write(t, s, evs, nil)
	stored := func(key string) (typ string, size int, text string) {
		t.Helper()
		if err := s.DB.QueryRow(`SELECT typeof(output), length(CAST(output AS BLOB)), unpack(output) FROM action_outputs WHERE event_id = ?`,
			event.ID("store-test", key)).Scan(&typ, &size, &text); err != nil {
			t.Fatal(err)
		}
		return
	}
	if typ, size, text := stored("a1"); typ != "blob" || size >= len(long)/2 || text != long {
		t.Errorf("long output: stored as %s of %d bytes (text %d bytes), want a blob under half of %d and the same text", typ, size, len(text), len(long))
	}
	if typ, _, text := stored("a2"); typ != "text" || text != "package x" {
		t.Errorf("short output: stored as %s %q", typ, text)
	}
	for {
		n, err := s.IndexOutputs(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	snippet := func(term string) []string {
		t.Helper()
		rows, err := s.DB.Query(`SELECT snippet(tool_output_fts, 0, '[', ']', '…', 8) FROM tool_output_fts WHERE tool_output_fts MATCH ?`, term)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}
	if got := snippet("zebrafish"); len(got) != 1 || !strings.Contains(got[0], "[zebrafish] did not match") {
		t.Errorf("zebrafish: snippets %q, want one from the output's text", got)
	}
	if got := snippet("okapi"); len(got) != 1 {
		t.Errorf("okapi: %d matches, want 1", len(got))
	}
	if _, err := s.DB.Exec(`INSERT INTO tool_output_fts (tool_output_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("full-text index: %v", err)
	}
	if _, err := s.Prune(ctx, store.PruneOptions{Before: t0.Add(-24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if got := snippet("okapi"); len(got) != 0 {
		t.Errorf("the pruned output is still found: %q", got)
	}
	if got := snippet("zebrafish"); len(got) != 1 {
		t.Errorf("the kept output is not found after the prune: %q", got)
	}
	if _, err := s.DB.Exec(`INSERT INTO tool_output_fts (tool_output_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("full-text index after prune: %v", err)
	}
}

// A store of schema 0019, whose outputs and messages are plain TEXT and indexed, migrates: its
// rows stay as they were and read the same, the indexes are made again over them, and new rows
// are packed beside them.
func TestPack_MigratesFromSchema19(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db := storeAtSchema(t, path, 19)
	oldOut, oldMsg := goTestOutput("gazelle"), "the gazelle parser fails on empty input; "+strings.Repeat("look at the lexer first. ", 10)
	for _, q := range []string{
		`INSERT INTO action_outputs (event_id, output) VALUES ('old-a', ?1)`,
		`INSERT INTO messages (event_id, ts, role, text, session_id, client) VALUES ('old-m', 1, 'assistant', ?2, 's', 'claude-code')`,
		`INSERT INTO tool_output_fts (rowid, output) SELECT rowid, output FROM action_outputs`,
		`INSERT INTO message_fts (rowid, text) SELECT id, text FROM messages`,
		`INSERT INTO fts_progress (name, last_id) VALUES ('tool_output', 1), ('message', 1)`,
	} {
		if _, err := db.Exec(q, oldOut, oldMsg); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := store.OpenWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	newOut := goTestOutput("gazelle and ibex")
	write(t, s, []event.Event{
		actionEv("new-a", t0, event.Action{Type: "run_command", Tool: "Bash", Target: "go test", Output: newOut, OutputSize: int64(len(newOut))}),
		messageEv("new-m", t0, event.Message{Role: "user", Text: "why does gazelle fail? " + strings.Repeat("it worked yesterday. ", 10), Seq: 1}),
	}, nil)
	for _, c := range []struct{ q, want string }{
		{`SELECT typeof(output) || ' ' || (unpack(output) = ?1) FROM action_outputs WHERE event_id = 'old-a'`, "text 1"},
		{`SELECT typeof(text) || ' ' || (unpack(text) = ?2) FROM messages WHERE event_id = 'old-m'`, "text 1"},
		{`SELECT typeof(output) || ' ' || (unpack(output) = ?3) FROM action_outputs WHERE event_id != 'old-a'`, "blob 1"},
		{`SELECT typeof(text) FROM messages WHERE event_id != 'old-m'`, "blob"},
	} {
		var got string
		if err := s.DB.QueryRow(c.q, oldOut, oldMsg, newOut).Scan(&got); err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.q, got, err, c.want)
		}
	}
	var n int
	for _, index := range []func(context.Context, int) (int, error){s.IndexOutputs, s.IndexMessages} {
		k, err := index(ctx, 100)
		if err != nil {
			t.Fatal(err)
		}
		n += k
	}
	if n != 4 {
		t.Errorf("indexed %d rows after the migration, want the 2 old and the 2 new", n)
	}
	for index, want := range map[string]int{"tool_output_fts": 2, "message_fts": 2} {
		var got int
		if err := s.DB.QueryRow(`SELECT count(*) FROM ` + index + ` WHERE ` + index + ` MATCH 'gazelle'`).Scan(&got); err != nil || got != want {
			t.Errorf("%s: %d matches of gazelle, %v; want %d", index, got, err, want)
		}
		if _, err := s.DB.Exec(`INSERT INTO ` + index + ` (` + index + `, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Errorf("%s: %v", index, err)
		}
	}
}
