package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/pi"
)

// BenchmarkReaders_Pi parses a Pi history laid out as pi keeps it (dry run), reporting MB/s
// beside BenchmarkReaders: OBSERVER_BENCH_PI_COPIES copies (default 30, ~100 MB) of the corpus's
// Pi files (../shared/corpus/pi, or $OBSERVER_CORPUS/pi), each under a session id of its own, one
// --<cwd>-- directory per copy.
func BenchmarkReaders_Pi(b *testing.B) {
	benchScan(b, pi.New([]string{piHistory(b)}))
}

// piHistory writes the history BenchmarkReaders_Pi reads and returns its sessions directory.
func piHistory(b *testing.B) string {
	b.Helper()
	dir, entries := benchCorpus(b, "Pi", "pi")
	copies := benchCopies("OBSERVER_BENCH_PI_COPIES", 30)
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
