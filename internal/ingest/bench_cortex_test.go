package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/cortex"
)

// BenchmarkReaders_Cortex reads Cortex Code's conversations laid out as Cortex keeps them (dry
// run): copies of the reader's fixtures (pkg/transcript/cortex/testdata/conversations; no corpus
// holds Cortex Code's files), OBSERVER_BENCH_CORTEX_COPIES of each (default 1,000, ~7 MB), each
// under a fresh session id: a session document with its history, and a split session (its
// metadata document and its .history.jsonl companion) one directory deeper.
func BenchmarkReaders_Cortex(b *testing.B) {
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "cortex", "testdata", "conversations")
	const doc, split, sub = "3f2b8c1e-9d4a-4b6f-a1c2-7e8d9f0a1b2c", "8c7d6e5f-1a2b-4c3d-9e8f-0a1b2c3d4e5f", "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
	root := filepath.Join(b.TempDir(), ".snowflake", "cortex", "conversations")
	files := []struct{ id, dir, suffix string }{
		{doc, "", ".json"},
		{split, sub, ".json"},
		{split, sub, ".history.jsonl"},
	}
	if err := os.MkdirAll(filepath.Join(root, sub), 0o755); err != nil {
		b.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(fixtures, f.dir, f.id+f.suffix))
		if err != nil {
			b.Fatal(err)
		}
		for i := range benchCopies("OBSERVER_BENCH_CORTEX_COPIES", 1000) {
			fresh := fmt.Sprintf("%s%04d", f.id[:len(f.id)-4], i)
			if err := os.WriteFile(filepath.Join(root, f.dir, fresh+f.suffix), bytes.ReplaceAll(data, []byte(f.id), []byte(fresh)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, cortex.New([]string{root}))
}
