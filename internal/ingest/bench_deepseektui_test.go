package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/deepseektui"
)

// BenchmarkReaders_DeepSeekTUI reads DeepSeek TUI (CodeWhale) saved sessions laid out as the
// client keeps them (dry run, cold cursors: every file a whole JSON document), reporting MB/s
// beside BenchmarkReaders: copies of the reader's fixture (pkg/transcript/deepseektui/testdata/
// sessions; no corpus holds a DeepSeek TUI session), OBSERVER_BENCH_DEEPSEEKTUI_COPIES of it
// (default 2,000, ~9 MB), each under a fresh session id.
func BenchmarkReaders_DeepSeekTUI(b *testing.B) {
	const id = "4f6b2d18-93a7-4c0e-b5d1-8e2a7c9f0b34"
	data, err := os.ReadFile(filepath.Join("..", "..", "pkg", "transcript", "deepseektui", "testdata", "sessions", id+".json"))
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(b.TempDir(), ".codewhale", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range benchCopies("OBSERVER_BENCH_DEEPSEEKTUI_COPIES", 2000) {
		fresh := fmt.Sprintf("%s%04d", id[:len(id)-4], i)
		if err := os.WriteFile(filepath.Join(dir, fresh+".json"), bytes.ReplaceAll(data, []byte(id), []byte(fresh)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, deepseektui.New([]string{dir}))
}
