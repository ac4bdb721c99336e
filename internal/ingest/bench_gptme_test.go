package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/gptme"
)

// BenchmarkReaders_Gptme reads gptme conversation logs laid out as gptme keeps them (dry run: every
// conversation.jsonl read a line at a time), reporting MB/s beside BenchmarkReaders: copies of the
// reader's fixtures (pkg/transcript/gptme/testdata/logs; no corpus holds a gptme log),
// OBSERVER_BENCH_GPTME_COPIES of each (default 2,000, ~8 MB), each in a conversation directory
// of its own with the fixture's config.toml.
func BenchmarkReaders_Gptme(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "gptme", "testdata", "logs")
	convs := []string{"2026-02-14-sneaky-purple-otter", "2026-02-15-quiet-green-heron"}
	root := filepath.Join(b.TempDir(), ".local", "share", "gptme", "logs")
	for _, conv := range convs {
		log, err := os.ReadFile(filepath.Join(fixtures, conv, gptme.LogName))
		if err != nil {
			b.Fatal(err)
		}
		cfg, err := os.ReadFile(filepath.Join(fixtures, conv, "config.toml"))
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchCopies("OBSERVER_BENCH_GPTME_COPIES", 2000) {
			dir := filepath.Join(root, fmt.Sprintf("%s-%04d", conv, i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, gptme.LogName), log, 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "config.toml"), cfg, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, gptme.New([]string{root}))
}
