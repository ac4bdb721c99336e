package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/iflow"
)

// BenchmarkReaders_IFlow reads iFlow CLI sessions laid out as iFlow kept them (dry run, cold
// cursors), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/iflow/testdata/projects; no corpus holds an iFlow session), a session and its
// subagent's file, OBSERVER_BENCH_IFLOW_COPIES of each (default 1,000, ~10 MB), each pair under
// fresh session ids.
func BenchmarkReaders_IFlow(b *testing.B) {
	const (
		id  = "session-5b2e8f14-9c3a-4d7e-b1f0-6a8c2d4e9f13"
		sub = "session-c71d0e92-4a5b-4f3c-8e6d-2b9a1f7c3e58"
	)
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "iflow", "testdata", "projects", "-home-dev-shop")
	docs := map[string][]byte{}
	for _, name := range []string{id, sub} {
		data, err := os.ReadFile(filepath.Join(fixtures, name+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		docs[name] = data
	}
	root := filepath.Join(b.TempDir(), ".iflow", "projects")
	project := filepath.Join(root, "-home-dev-shop")
	if err := os.MkdirAll(project, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_IFLOW_COPIES", 1000) {
		freshID, freshSub := fmt.Sprintf("%s%04d", id[:len(id)-4], i), fmt.Sprintf("%s%04d", sub[:len(sub)-4], i)
		for name, data := range docs {
			out := filepath.Join(project, freshID+".jsonl")
			if name == sub {
				out = filepath.Join(project, freshSub+".jsonl")
			}
			if err := os.WriteFile(out, bytes.ReplaceAll(data, []byte(id), []byte(freshID)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	benchScan(b, iflow.New([]string{root}))
}
