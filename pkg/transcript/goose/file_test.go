package goose

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/transcripttest"
)

// legacyLines are a session file as goose's storage.rs (01a262b2) wrote it: the SessionMetadata
// line, then one Message per line ({role, created, content}, tool results as the legacy
// Vec<Content>). It holds the first three messages of demoMessages, under the same session id.
var legacyLines = []string{
	`{"working_dir":"` + demoDir + `","description":"Fix README typo","schedule_id":null,"message_count":3,"total_tokens":3200,"input_tokens":3000,"output_tokens":200,"accumulated_total_tokens":12800,"accumulated_input_tokens":12000,"accumulated_output_tokens":800}`,
	`{"role":"user","created":1767607200,"content":[{"type":"text","text":"List the files and fix the typo in README.md"}]}`,
	`{"role":"assistant","created":1767607202,"content":[{"type":"text","text":"Let me look."},{"type":"toolRequest","id":"toolu_01","toolCall":{"status":"success","value":{"name":"developer__shell","arguments":{"command":"ls -la"}}}}]}`,
	`{"role":"user","created":1767607203,"content":[{"type":"toolResponse","id":"toolu_01","toolResult":{"status":"success","value":[{"type":"text","text":"README.md\nmain.go","annotations":null}]}}]}`,
}

func writeFile(tb testing.TB, path string, lines []string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

// readDoc hands a file to a fresh parser the way internal/ingest hands a Document source.
func readDoc(tb testing.TB, a *Adapter, path string, state []byte) ([]event.Event, []byte, error) {
	tb.Helper()
	src := transcript.Source{Client: Client, Path: path, Document: true, SessionID: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	p, err := a.NewParser(src, state)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	evs, err := p.Record(0, data)
	transcripttest.CheckEvents(tb, evs)
	return evs, p.State(), err
}

func TestFile_HandWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "20260105_1.jsonl")
	writeFile(t, path, legacyLines)
	a := New(nil)
	evs, state, err := readDoc(t, a, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"session": 1, "session:title": 1, "token_usage": 1, "action:user_prompt": 1, "action:run_command": 2}
	if got := kinds(evs); !maps.Equal(got, want) {
		t.Fatalf("kinds %v, want %v", got, want)
	}
	transcripttest.Golden(t, filepath.Join("testdata", "golden", "handwritten-jsonl.golden.json"), transcripttest.Views(transcripttest.WithoutMessages(evs), time.RFC3339), *update)

	// The same session in the database (goose imported the file) yields the same ids: stored once.
	dbPath := filepath.Join(dir, DBName)
	writeDemo(t, dbPath)
	fromDB, _, _ := poll(t, a, dbPath, nil)
	ids := map[string]bool{}
	for _, e := range fromDB {
		ids[e.ID] = true
	}
	for _, e := range evs {
		if !ids[e.ID] && !(e.Session != nil && e.Session.Title != "") {
			t.Errorf("file event %s (%s) has no twin in the database's events", e.ID, e.Kind)
		}
	}

	// Unchanged: nothing again.
	if evs, _, err := readDoc(t, a, path, state); err != nil || len(evs) != 0 {
		t.Errorf("re-read: %d events, %v", len(evs), err)
	}
	// goose rewrites the file with one more message and larger figures: only those.
	grown := append([]string{strings.Replace(legacyLines[0], `"accumulated_output_tokens":800`, `"accumulated_output_tokens":950`, 1)}, legacyLines[1:]...)
	grown = append(grown, `{"role":"user","created":1767607300,"content":[{"type":"text","text":"commit it"}]}`)
	writeFile(t, path, grown)
	evs, state, err = readDoc(t, a, path, state)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(evs), map[string]int{"token_usage": 1, "action:user_prompt": 1}; !maps.Equal(got, want) {
		t.Errorf("after the rewrite: %v, want %v", got, want)
	}
	// Caught half-written: malformed, and the state stays.
	if err := os.WriteFile(path, []byte(strings.Join(grown, "\n")[:len(legacyLines[0])+40]), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, after, err := readDoc(t, a, path, state)
	if !errors.Is(err, transcript.ErrMalformed) || len(evs) != 0 || string(after) != string(state) {
		t.Errorf("half-written: %d events, %v, state %s -> %s", len(evs), err, state, after)
	}
}

func TestFile_EmptyAndOdd(t *testing.T) {
	dir := t.TempDir()
	a := New(nil)
	for name, body := range map[string]string{
		"empty.jsonl":     "",
		"meta-only.jsonl": legacyLines[0] + "\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if evs, _, err := readDoc(t, a, path, nil); err != nil || len(evs) != 0 {
			t.Errorf("%s: %d events, %v", name, len(evs), err)
		}
	}
	// A file whose first line is a message (goose reads it as one) has no metadata.
	path := filepath.Join(dir, "no-meta.jsonl")
	writeFile(t, path, legacyLines[1:])
	evs, _, err := readDoc(t, a, path, nil)
	if err != nil || kinds(evs)["action:user_prompt"] != 1 || kinds(evs)["token_usage"] != 0 {
		t.Errorf("no metadata: %v, %v", kinds(evs), err)
	}
	path = filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(path, []byte("\xff\xfe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := readDoc(t, a, path, nil); !errors.Is(err, transcript.ErrMalformed) {
		t.Errorf("not UTF-8: %v", err)
	}
}
