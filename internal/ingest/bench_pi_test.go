package ingest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/pi"
)

// BenchmarkReaders_Pi parses a Pi history laid out as pi keeps it (dry run), reporting MB/s
// beside BenchmarkReaders: OBSERVER_BENCH_PI_COPIES copies (default 30, ~100 MB) of the corpus's
// Pi files (../shared/corpus/pi, or $OBSERVER_CORPUS/pi), each under a session id of its own, one
// --<cwd>-- directory per copy.
func BenchmarkReaders_Pi(b *testing.B) {
	home := piHistory(b)
	for b.Loop() {
		cur, err := OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
		if err != nil {
			b.Fatal(err)
		}
		s := &Scanner{DryRun: true, Cursors: cur, Adapters: []transcript.Adapter{pi.New([]string{home})}}
		sum, err := s.Scan(context.Background())
		cur.Close()
		if err != nil || sum.Lines == 0 || sum.Malformed != 0 {
			b.Fatalf("scan: %v, %+v", err, sum)
		}
		b.SetBytes(sum.Bytes)
	}
}

// piHistory writes the history BenchmarkReaders_Pi reads and returns its sessions directory.
func piHistory(b *testing.B) string {
	b.Helper()
	corpus := os.Getenv("OBSERVER_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "..", "shared", "corpus")
	}
	dir := filepath.Join(corpus, "pi")
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Skipf("SKIPPED: the Pi corpus is absent (%v); set OBSERVER_CORPUS", err)
	}
	copies := 30
	if n, err := strconv.Atoi(os.Getenv("OBSERVER_BENCH_PI_COPIES")); err == nil && n > 0 {
		copies = n
	}
	root := filepath.Join(b.TempDir(), "sessions")
	for fi, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		header, body, _ := bytes.Cut(data, []byte("\n"))
		for i := range copies {
			id := fmt.Sprintf("00000000-0000-4000-8000-%06d%06d", fi, i)
			h := bytes.Replace(header, []byte(`"type":"session","id":"`), []byte(`"type":"session","id":"`+id+`","was":"`), 1)
			path := filepath.Join(root, pi.SessionDirName(fmt.Sprintf("/work/p%d", i)), "2026-01-01T00-00-00-000Z_"+id+".jsonl")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, append(append(h, '\n'), body...), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return root
}
