package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/qoder"
)

// BenchmarkReaders_Qoder reads Qoder CLI sessions laid out as Qoder keeps them (dry run, cold
// cursors), reporting MB/s beside BenchmarkReaders: copies of the reader's fixtures
// (pkg/transcript/qoder/testdata/projects; no corpus holds a Qoder session), a session and its
// subagent's transcript, OBSERVER_BENCH_QODER_COPIES of each (default 1,000, ~10 MB), each
// under a fresh session id.
func BenchmarkReaders_Qoder(b *testing.B) {
	const id = "7d3e9a41-2b6c-4f1e-9a8d-5c0b1e2f3a47"
	fixtures := filepath.Join("..", "..", "pkg", "transcript", "qoder", "testdata", "projects", "-home-dev-webapp")
	main, err := os.ReadFile(filepath.Join(fixtures, id+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	sub, err := os.ReadFile(filepath.Join(fixtures, id, "subagents", "agent-aReview-4821.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(b.TempDir(), ".qoder", "projects")
	project := filepath.Join(root, "-home-dev-webapp")
	for i := range benchCopies("OBSERVER_BENCH_QODER_COPIES", 1000) {
		fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
		subDir := filepath.Join(project, fresh, "subagents")
		if err := os.MkdirAll(subDir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, fresh+".jsonl"), bytes.ReplaceAll(main, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(subDir, "agent-aReview-4821.jsonl"), bytes.ReplaceAll(sub, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, qoder.New([]string{root}))
}
