package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/windsurf"
)

// BenchmarkReaders_Windsurf reads Windsurf's hook transcripts laid out as Windsurf writes them
// (dry run: every file a document of JSON lines, read whole), reporting MB/s beside
// BenchmarkReaders: copies of the reader's fixtures (pkg/transcript/windsurf/testdata/transcripts;
// no corpus holds a Windsurf transcript), OBSERVER_BENCH_WINDSURF_COPIES of each (default 2,000,
// ~11 MB; Windsurf itself keeps the newest 100), each under a fresh trajectory id.
func BenchmarkReaders_Windsurf(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "windsurf", "testdata", "transcripts")
	ids := []string{"0f3a9c1e-7b2d-4e8f-a1c6-5d4b3a2f1e0d", "6b1e2d3c-4f5a-4b6c-8d7e-9f0a1b2c3d4e"}
	dir := filepath.Join(b.TempDir(), ".windsurf", "transcripts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(fixtures, id+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		// A larger conversation: the fixture's steps repeated, as a long trajectory holds many.
		data = bytes.Repeat(data, 4)
		for i := range benchCopies("OBSERVER_BENCH_WINDSURF_COPIES", 2000) {
			fresh := fmt.Sprintf("%s%05d", id[:len(id)-5], i)
			if err := os.WriteFile(filepath.Join(dir, fresh+".jsonl"), data, 0o600); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, windsurf.New([]string{dir}))
}
