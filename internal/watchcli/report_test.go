package watchcli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/observerhq/observer/internal/ingest"
	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
)

// logRecords are the JSON log lines in buf.
func logRecords(tb testing.TB, buf *bytes.Buffer) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal(line, &r); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

// A line longer than the line limit is logged saying so, with its size and the limit, not only
// counted as malformed; a transcript rewritten in place between two passes is logged as read again.
func TestReport_LongLineAndRewrite(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "projects")
	proj := filepath.Join(root, "-tmp-p")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	prompt := func(id, text string) string {
		return `{"type":"user","uuid":"` + id + `","timestamp":"2026-03-01T10:00:00Z","cwd":"/tmp/p","message":{"role":"user","content":"` + text + `"}}` + "\n"
	}
	a := filepath.Join(proj, "a.jsonl")
	first := prompt("a1", "hello")
	long := prompt("a2", strings.Repeat("x", 100<<10))
	if err := os.WriteFile(a, []byte(first+long+prompt("a3", "bye")), 0o600); err != nil {
		t.Fatal(err)
	}
	cur, err := ingest.OpenCursors(filepath.Join(dir, "cursors.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	pub := &countPub{}
	s := &ingest.Scanner{Adapters: []transcript.Adapter{claudecode.New([]string{root})}, Cursors: cur, Publisher: pub, MaxLine: 64 << 10}
	pass := func() *bytes.Buffer {
		t.Helper()
		sum, err := s.Scan(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		logger := slog.New(slog.NewJSONHandler(&buf, nil))
		reportRewritten(logger, sum)
		reportMalformed(logger, sum)
		return &buf
	}

	recs := logRecords(t, pass())
	want := "transcript line of " + strconv.Itoa(len(long)) + " bytes at offset " + strconv.Itoa(len(first)) + " passes the 64 KiB line limit, skipped"
	found := false
	for _, r := range recs {
		if r["msg"] == want {
			found = true
			if r["file"] != a || r["line_bytes"] != float64(len(long)) || r["limit_bytes"] != float64(64<<10) || r["level"] != "WARN" {
				t.Errorf("long line logged as %v", r)
			}
		}
	}
	if !found {
		t.Fatalf("no log line %q in %v", want, recs)
	}

	// Rewritten in place, longer, with other prompts: read again from the start, and said so.
	n := pub.n
	if err := os.WriteFile(a, []byte(prompt("b1", "one")+prompt("b2", "two")+prompt("b3", "three")+prompt("b4", strings.Repeat("y", 200))), 0o600); err != nil {
		t.Fatal(err)
	}
	recs = logRecords(t, pass())
	if len(recs) != 1 || recs[0]["msg"] != "transcript rewritten; read again from its start" || recs[0]["file"] != a || recs[0]["why"] == "" {
		t.Fatalf("rewrite logged as %v", recs)
	}
	if got := pub.n - n; got != 2*4 {
		t.Errorf("%d events after the rewrite, want the 4 new prompts and their 4 user messages", got)
	}
}
