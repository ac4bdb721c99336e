package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/amp"
)

// BenchmarkReaders_Amp reads Amp threads laid out as Amp kept them (dry run: every file a whole
// JSON document), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/amp/testdata/threads; no corpus holds an Amp thread),
// OBSERVER_BENCH_AMP_COPIES of each (default 1,000, ~6 MB), each under a fresh thread id.
func BenchmarkReaders_Amp(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "amp", "testdata", "threads")
	ids := []string{"T-019a2f3c-5d6e-7f80-9a1b-2c3d4e5f6a7b", "T-0b7e2c1a-4f3d-4e2b-8a9c-1d2e3f4a5b6c"}
	threads := filepath.Join(b.TempDir(), ".local", "share", "amp", "threads")
	if err := os.MkdirAll(threads, 0o755); err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(fixtures, id+".json"))
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchCopies("OBSERVER_BENCH_AMP_COPIES", 1000) {
			fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
			if err := os.WriteFile(filepath.Join(threads, fresh+".json"), bytes.ReplaceAll(data, []byte(id), []byte(fresh)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, amp.New([]string{threads}))
}
