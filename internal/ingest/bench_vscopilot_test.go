package ingest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript/vscopilot"
)

// BenchmarkReaders_VSCopilot reads Visual Studio Copilot's trace files laid out as Visual Studio
// keeps them (<temp>/VSGitHubCopilotLogs/traces; dry run): copies of the reader's first fixture's
// lines (pkg/transcript/vscopilot/testdata; no corpus holds Visual Studio's traces),
// OBSERVER_BENCH_VSCOPILOT_COPIES of them (default 2,000, ~20 MB), each under a fresh conversation
// and trace id, appended to 10 trace files (one per Visual Studio instance, as it writes them).
func BenchmarkReaders_VSCopilot(b *testing.B) {
	const name = "20260612T194439_257709a3_VSGitHubCopilot_traces.jsonl"
	const conv, trace = "4a8f63f6-7626-4416-a874-fc7bd2c3f005", "5f0c1e2d3a4b5c6d7e8f90a1b2c3d4e5"
	data, err := os.ReadFile(filepath.Join("..", "..", "pkg", "transcript", "vscopilot", "testdata", "VSGitHubCopilotLogs", "traces", name))
	if err != nil {
		b.Fatal(err)
	}
	temp := b.TempDir()
	traces := filepath.Join(temp, "VSGitHubCopilotLogs", "traces")
	if err := os.MkdirAll(traces, 0o755); err != nil {
		b.Fatal(err)
	}
	files := make([]bytes.Buffer, 10)
	for i := range benchCopies("OBSERVER_BENCH_VSCOPILOT_COPIES", 2000) {
		copied := bytes.ReplaceAll(data, []byte(conv), []byte(fmt.Sprintf("%s%04d", conv[:len(conv)-4], i)))
		copied = bytes.ReplaceAll(copied, []byte(trace), []byte(fmt.Sprintf("%s%04d", trace[:len(trace)-4], i)))
		files[i%len(files)].Write(copied)
	}
	for i := range files {
		path := filepath.Join(traces, fmt.Sprintf("20260612T1944%02d_%08x_VSGitHubCopilot_traces.jsonl", i, i))
		if err := os.WriteFile(path, files[i].Bytes(), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	benchScan(b, vscopilot.New([]string{temp}))
}
