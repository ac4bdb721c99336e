package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/openclaude"
)

// BenchmarkReaders_OpenClaude reads OpenClaude's transcripts laid out as OpenClaude keeps them
// (Claude Code's layout under ~/.openclaude/projects; dry run): copies of the reader's fixture
// (pkg/transcript/openclaude/testdata; no corpus holds OpenClaude's files),
// OBSERVER_BENCH_OPENCLAUDE_COPIES of it (default 2,000, ~12 MB), each under a fresh session id,
// spread over 20 project directories.
func BenchmarkReaders_OpenClaude(b *testing.B) {
	const id = "5a1c9e27-8b3d-4f60-a2c4-d6e8f0a1b3c5"
	data, err := os.ReadFile(filepath.Join("..", "..", "pkg", "transcript", "openclaude", "testdata", "projects", "-home-dev-webshop", id+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	projects := filepath.Join(b.TempDir(), ".openclaude", "projects")
	for i := range benchCopies("OBSERVER_BENCH_OPENCLAUDE_COPIES", 2000) {
		dir := filepath.Join(projects, fmt.Sprintf("-home-dev-webshop%02d", i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
		copied := bytes.ReplaceAll(data, []byte(id), []byte(fresh))
		copied = bytes.ReplaceAll(copied, []byte(`"msg_`), []byte(fmt.Sprintf(`"msg_%04d`, i))) // fresh message ids
		if err := os.WriteFile(filepath.Join(dir, fresh+".jsonl"), copied, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, openclaude.New([]string{projects}))
}
