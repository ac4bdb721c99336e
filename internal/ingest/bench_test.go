package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/observerhq/observer/pkg/transcript"
	"github.com/observerhq/observer/pkg/transcript/claudecode"
	"github.com/observerhq/observer/pkg/transcript/codex"
)

// BenchmarkReaders parses every transcript of a history laid out as the clients do on disk (dry
// run: nothing is published), reporting MB/s. OBSERVER_BENCH_HOME names the history (for example
// the ~300 MB one from `gen_history.py scaled HOME 40`); without it the benchmark is skipped.
func BenchmarkReaders(b *testing.B) {
	home := os.Getenv("OBSERVER_BENCH_HOME")
	if home == "" {
		b.Skip("OBSERVER_BENCH_HOME is not set (build one with ../shared/scripts/gen_history.py scaled HOME 40)")
	}
	for b.Loop() {
		cur, err := OpenCursors(filepath.Join(b.TempDir(), "cursors.json"))
		if err != nil {
			b.Fatal(err)
		}
		s := &Scanner{DryRun: true, Cursors: cur, Adapters: []transcript.Adapter{
			claudecode.New([]string{filepath.Join(home, ".claude", "projects")}), codex.New(filepath.Join(home, ".codex"))}}
		sum, err := s.Scan(context.Background())
		cur.Close()
		if err != nil || sum.Lines == 0 {
			b.Fatalf("scan: %v, %d lines", err, sum.Lines)
		}
		b.SetBytes(sum.Bytes)
	}
}
