package watchcli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/event"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
)

type countPub struct{ n int }

func (p *countPub) PublishBatch(_ context.Context, evs []event.Event) (int, error) {
	p.n += len(evs)
	return 0, nil
}

// A pass over Claude Code transcripts with malformed lines logs, per file, the lines it skipped and
// the file's total, and reads the good lines around them.
func TestReportMalformed_NamesEachFile(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	proj := filepath.Join(root, "-tmp-p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	prompt := func(id string) string {
		return `{"type":"user","uuid":"` + id + `","timestamp":"2026-03-01T10:00:00Z","cwd":"/tmp/p","message":{"role":"user","content":"hello ` + id + `"}}` + "\n"
	}
	a, b, c := filepath.Join(proj, "a.jsonl"), filepath.Join(proj, "b.jsonl"), filepath.Join(proj, "c.jsonl")
	files := map[string]string{
		a: prompt("a1") + "{not json\n" + `{"type":"user","uuid":"a2","message":{"content":"bad ` + "\xff\xfe" + `"}}` + "\n" + prompt("a3"),
		b: prompt("b1") + "[1,\n" + prompt("b2"),
		c: prompt("c1"),
	}
	for p, data := range files {
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cur, err := ingest.OpenCursors(filepath.Join(dir, "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	pub := &countPub{}
	s := &ingest.Scanner{Adapters: []transcript.Adapter{claudecode.New([]string{root})}, Cursors: cur, Publisher: pub}
	sum, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if pub.n != 2*5 {
		t.Fatalf("%d events published, want the 5 prompts and their 5 user messages", pub.n)
	}

	var buf bytes.Buffer
	reportMalformed(slog.New(slog.NewJSONHandler(&buf, nil)), sum)
	got := map[string][2]int64{}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var r struct {
			Msg       string `json:"msg"`
			Level     string `json:"level"`
			File      string `json:"file"`
			Count     int64  `json:"count"`
			FileTotal int64  `json:"file_total"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if r.Msg != "malformed transcript lines skipped" || r.Level != "WARN" || r.File == "" {
			t.Fatalf("unexpected log line %s", line)
		}
		got[r.File] = [2]int64{r.Count, r.FileTotal}
	}
	want := map[string][2]int64{a: {2, 2}, b: {1, 1}}
	if len(got) != len(want) || got[a] != want[a] || got[b] != want[b] {
		t.Fatalf("reported %v, want %v\n%s", got, want, buf.String())
	}
}
